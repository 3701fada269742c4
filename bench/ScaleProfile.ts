/**
 * Profiles one read of the scale bench on a filled SQLite store: seeds `--size` posts as
 * `npm run bench:scale` does (or reuses `--data DIR` seeded by a previous run), starts
 * `herald serve --sandbox` under `node --cpu-prof`, sends `--path` (`--method`, `--body`) `--n` times
 * one after another, and prints the server's top self-time frames and the p50 of the requests.
 *
 *   npx tsx bench/ScaleProfile.ts --size 30000 --path /posts --n 200 [--data /tmp/dir] [--keep]
 *   npx tsx bench/ScaleProfile.ts --data /tmp/dir --method POST --path /posts/retry-failed \
 *     --body '{"platform":"telegram"}' --n 30
 *
 * `--output` prints the server's log after the run. A POST re-queues: between requests the seeded failed destinations are set back to failed.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HeraldServer from "./HeraldServer.js"
import { resetFailed, seed, sqliteDb } from "./ScaleSeed.js"
import { prepareTemplates } from "./ScaleTemplates.js"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const size = Number(arg("size") ?? "30000")
const route = arg("path") ?? "/posts"
const method = arg("method") ?? "GET"
const body = arg("body")
const n = Number(arg("n") ?? "100")
const given = arg("data")

const dataDir = given ?? fs.mkdtempSync(path.join(os.tmpdir(), "herald-scale-profile-"))
const keyFile = path.join(dataDir, "bench-key")
if (!fs.existsSync(keyFile)) {
  const first = await HeraldServer.start({ dataDir })
  await prepareTemplates(first)
  await first.stop()
  const db = sqliteDb(path.join(dataDir, "herald.db"))
  await seed(db, size, Date.now())
  await db.close()
  fs.writeFileSync(keyFile, first.key)
  console.log(`seeded ${size} posts in ${dataDir}`)
}
const profDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-scale-prof-"))
const server = await HeraldServer.start({
  dataDir,
  key: fs.readFileSync(keyFile, "utf8"),
  nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`]
})
const db = sqliteDb(path.join(dataDir, "herald.db"))
/** As the scale bench does: once the dispatcher has published what the last retry re-queued, back to failed. */
const reset = () => resetFailed(db)
const times: Array<number> = []
let answer = ""
for (let i = 0; i < n; i++) {
  if (method !== "GET") await reset()
  const t0 = performance.now()
  const res = await fetch(`${server.base}${route}`, {
    method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body })
  })
  answer = await res.text()
  if (res.status >= 300) throw new Error(`${res.status} ${answer.slice(0, 300)}`)
  times.push(performance.now() - t0)
}
await server.stop()
await db.close()
if (process.argv.includes("--output")) console.log(server.output())
times.sort((a, b) => a - b)
console.log(
  `${method} ${route}: ${n} requests, p50 ${times[Math.floor(n / 2)]!.toFixed(1)} ms, answer ${answer.length} bytes`
)

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
const file = fs.readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"))!
const profile = JSON.parse(fs.readFileSync(path.join(profDir, file), "utf8")) as {
  nodes: Array<Node>
  samples: Array<number>
  timeDeltas: Array<number>
}
const byNode = new Map<number, number>()
profile.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const self = new Map<string, number>()
for (const node of profile.nodes) {
  const frame = node.callFrame
  const name = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}:${
    frame.lineNumber + 1
  }`
  self.set(name, (self.get(name) ?? 0) + (byNode.get(node.id) ?? 0))
}
for (const [name, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${(micros / 1000).toFixed(1).padStart(9)} ms  ${name}`)
}
if (process.argv.includes("--keep")) console.log(`profile: ${path.join(profDir, file)}`)
else fs.rmSync(profDir, { recursive: true, force: true })
if (given === undefined) console.log(`data kept in ${dataDir} (pass --data to reuse)`)
