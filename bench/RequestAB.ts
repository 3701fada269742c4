/**
 * This build against a baseline checkout, alternated, with the hand-written peer in the same run:
 * `AB_BASELINE=<checkout, built> npx tsx bench/RequestAB.ts`, `WHAT=accounts|posts` (default
 * accounts), `ROUNDS=n` (default 3). Each round loads this build's `herald serve --sandbox`, then the
 * baseline's, then the peer (`peers/create-peer.mjs` on a copy of this build's database), one at a
 * time: 32 keep-alive connections, 4 s after 1 s of warm-up. Prints requests/s, latency and the
 * server's user and system CPU per request (`/proc/<pid>/stat`), then the means and their ratios to
 * the peer. Unlike `FastPathAB.ts` (both servers loaded at once), a side runs alone, so effects that
 * depend on the client's idleness (its wake-ups) show.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HeraldServer from "./HeraldServer.js"
import * as Ladder from "./Ladder.js"
import * as Load from "./Load.js"
import * as RequestPath from "./RequestPath.js"

const baseline = process.env.AB_BASELINE
if (baseline === undefined) throw new Error("AB_BASELINE=<a built checkout> is required")
const what = process.env.WHAT ?? "accounts"
const rounds = Number(process.env.ROUNDS ?? "3")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-ab-"))

const current = await HeraldServer.start({ dataDir: path.join(dir, "current") })
const base = await HeraldServer.start({ dataDir: path.join(dir, "baseline"), repoRoot: baseline })
try {
  const { text, id } = await HeraldServer.draftAccount(current.base, current.key)
  const baseTarget = (await HeraldServer.draftAccount(base.base, base.key)).id
  fs.writeFileSync(path.join(dir, "accounts.json"), text)
  const peer = await RequestPath.startPeer(
    path.join(dir, "current", "herald.db"),
    path.join(dir, "peer.db"),
    path.join(dir, "accounts.json")
  )
  try {
    const sides = [
      { name: "this build", base: current.base, pid: current.child.pid!, key: current.key, account: id },
      { name: "baseline", base: base.base, pid: base.child.pid!, key: base.key, account: baseTarget },
      { name: "peer", base: peer.base, pid: peer.child.pid!, key: current.key, account: id }
    ]
    const rates = new Map<string, Array<number>>()
    for (let round = 0; round < rounds; round++) {
      for (const side of sides) {
        const target: Load.Target = what === "accounts"
          ? { url: `${side.base}/accounts`, method: "GET", headers: { authorization: `Bearer ${side.key}` } }
          : {
            url: `${side.base}/posts`,
            method: "POST",
            headers: { authorization: `Bearer ${side.key}`, "content-type": "application/json" },
            body: HeraldServer.draftBody(side.account)
          }
        await Load.run(target, { connections: 32, seconds: 1, warmupSeconds: 0 })
        const before = Ladder.cpuTimes(side.pid)
        const result = await Load.run(target, { connections: 32, seconds: 4, warmupSeconds: 0 })
        const after = Ladder.cpuTimes(side.pid)
        const per = (seconds: number) => ((seconds * 1e6) / result.requests).toFixed(1)
        rates.set(side.name, [...(rates.get(side.name) ?? []), result.rps])
        console.log(
          `${side.name.padEnd(10)} ${Load.describe(result)}; CPU per request: user ${
            per(after.user - before.user)
          } µs, ` +
            `system ${per(after.system - before.system)} µs`
        )
      }
    }
    const mean = (name: string) => rates.get(name)!.reduce((s, v) => s + v, 0) / rounds
    const peerRate = mean("peer")
    console.log(
      `${what}, means: this build ${mean("this build").toFixed(0)} req/s = ${
        (mean("this build") / peerRate).toFixed(3)
      }x; ` +
        `baseline ${mean("baseline").toFixed(0)} = ${(mean("baseline") / peerRate).toFixed(3)}x; peer ${
          peerRate.toFixed(0)
        }`
    )
  } finally {
    await peer.stop()
  }
} finally {
  await Promise.all([current.stop(), base.stop()])
  fs.rmSync(dir, { recursive: true, force: true })
}
