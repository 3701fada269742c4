/**
 * Profiles the request path: `herald serve --sandbox` under `node --cpu-prof`, loaded with
 * `POST /posts` drafts, then authenticated `GET /accounts` (32 keep-alive connections each), and
 * prints the top self-time frames of the profile. `npx tsx bench/profile-request.ts [seconds]`;
 * PROFILE_ONLY=posts|accounts runs one load, PROFILE_KEEP=file keeps the .cpuprofile.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HeraldServer from "./HeraldServer.js"
import * as Load from "./Load.js"

const seconds = Number(process.argv[2] ?? "8")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-profile-"))
const profDir = path.join(dir, "prof")
const server = await HeraldServer.start({
  dataDir: path.join(dir, "data"),
  nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`]
})
const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" }
const target = (await HeraldServer.draftAccount(server.base, server.key)).id
const only = process.env.PROFILE_ONLY
const posts = only === "accounts" ? undefined : await Load.run({
  url: `${server.base}/posts`,
  method: "POST",
  headers,
  body: HeraldServer.draftBody(target)
}, { connections: 32, seconds })
if (posts !== undefined) console.log(`POST /posts: ${Load.describe(posts)}`)
const reads = only === "posts"
  ? undefined
  : await Load.run({ url: `${server.base}/accounts`, method: "GET", headers }, { connections: 32, seconds })
if (reads !== undefined) console.log(`GET /accounts: ${Load.describe(reads)}`)
await server.stop()

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: Array<number>
}
const file = fs.readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"))!
const profile = JSON.parse(fs.readFileSync(path.join(profDir, file), "utf8")) as {
  nodes: Array<Node>
  samples: Array<number>
}
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map<number, number>()
for (const s of profile.samples) self.set(s, (self.get(s) ?? 0) + 1)
const frames = new Map<string, number>()
for (const [id, count] of self) {
  const f = byId.get(id)!.callFrame
  const name = `${f.functionName || "(anonymous)"} ${
    f.url.replace(/.*node_modules\//, "").replace(/.*packages\//, "")
  }:${f.lineNumber}`
  frames.set(name, (frames.get(name) ?? 0) + count)
}
const total = profile.samples.length
console.log(`\ntop self-time frames (${total} samples):`)
for (const [name, count] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
  console.log(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${name}`)
}
const keep = process.env.PROFILE_KEEP
if (keep !== undefined) fs.copyFileSync(path.join(profDir, file), keep)
fs.rmSync(dir, { recursive: true, force: true })
