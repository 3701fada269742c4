/**
 * The fast path against the HttpApi path, side by side in one run: two `herald serve --sandbox`
 * servers, one with the fast path and one with `HERALD_FAST_PATH=off`, loaded AT THE SAME TIME with the
 * same requests (16 keep-alive connections each), so that whatever else runs on the machine weighs on
 * both alike. Prints each server's CPU time per request (utime + stime) per round and the ratio.
 * `npx tsx bench/FastPathAB.ts [seconds] [rounds]`. With `AB_BASELINE=<checkout>` (built), the second
 * server is that checkout's `herald serve` (fast path as it has it) instead of `HERALD_FAST_PATH=off`:
 * this build against a baseline commit, side by side.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HeraldServer from "./HeraldServer.js"
import * as Ladder from "./Ladder.js"
import * as Load from "./Load.js"

const seconds = Number(process.argv[2] ?? "4")
const rounds = Number(process.argv[3] ?? "3")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-fastpath-"))

/** The two routes the fast path answers, as the ladder loads them. */
const targetsOf = async (server: HeraldServer.HeraldServer): Promise<Array<[string, Load.Target]>> =>
  (await Ladder.targetsOf(server)).filter(([name]) => name === "GET /accounts" || name === "POST /posts")

/** Microseconds of server CPU per answered request while `load` runs. */
const measure = async (server: HeraldServer.HeraldServer, target: Load.Target) => {
  const before = Ladder.cpuSeconds(server.child.pid)
  const t0 = performance.now()
  const result = await Load.run(target, { connections: 16, seconds })
  const cpu = Ladder.cpuSeconds(server.child.pid) - before
  return { result, cpuMicros: (cpu / (result.rps * ((performance.now() - t0) / 1000))) * 1e6 }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const baseline = process.env.AB_BASELINE
const other = baseline === undefined ? "HttpApi" : "baseline"
const [fast, api] = await Promise.all([
  HeraldServer.start({ dataDir: path.join(dir, "fast") }),
  baseline === undefined
    ? HeraldServer.start({ dataDir: path.join(dir, "api"), env: { HERALD_FAST_PATH: "off" } })
    : HeraldServer.start({ dataDir: path.join(dir, "api"), repoRoot: baseline })
])
try {
  const [fastTargets, apiTargets] = await Promise.all([targetsOf(fast), targetsOf(api)])
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`)
  for (let t = 0; t < fastTargets.length; t++) {
    const name = fastTargets[t]![0]
    const ratios: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const [a, b] = await Promise.all([measure(fast, fastTargets[t]![1]), measure(api, apiTargets[t]![1])])
      ratios.push(a.cpuMicros / b.cpuMicros)
      console.log(
        `${name.padEnd(14)} fast path ${a.cpuMicros.toFixed(0).padStart(5)} us/request (${Load.describe(a.result)})` +
          `  ${other} ${b.cpuMicros.toFixed(0).padStart(5)} us/request (${Load.describe(b.result)})`
      )
    }
    console.log(`${name.padEnd(14)} CPU per request, fast path / ${other}: median ${median(ratios).toFixed(2)}x`)
  }
} finally {
  await Promise.all([fast.stop(), api.stop()])
  fs.rmSync(dir, { recursive: true, force: true })
}
