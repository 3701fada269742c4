/**
 * The fixed cost of the HTTP stack, per request: `herald serve --sandbox` loaded in turn with
 * `GET /health/live`, an unknown route (404), `GET /api/v1/me`, `GET /api/v1/accounts` and
 * `POST /api/v1/posts` (draft), 32 keep-alive connections each. Besides req/s it prints the server's
 * CPU time per request (utime + stime from /proc/<pid>/stat): a figure that other load on the machine
 * disturbs far less than throughput. `npx tsx bench/Ladder.ts [seconds]`; LADDER_ENV={...} adds env,
 * LADDER_ONLY=me,accounts picks steps.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HeraldServer from "./HeraldServer.js"
import * as Load from "./Load.js"

/** CPU seconds (user + system) a process has used so far (Linux /proc). */
/** Seconds of user and system CPU the process has used (utime, stime from /proc/<pid>/stat). */
export const cpuTimes = (pid: number | undefined): { readonly user: number; readonly system: number } => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 }
}

export const cpuSeconds = (pid: number | undefined): number => {
  const { system, user } = cpuTimes(pid)
  return user + system
}

export interface Step {
  readonly name: string
  readonly result: Load.LoadResult
  /** Microseconds of server CPU per answered request. */
  readonly cpuMicros: number
}

/** The routes the ladder loads, each as a load target on `server` (also used by `FastPathAB.ts`). */
export const targetsOf = async (server: HeraldServer.HeraldServer): Promise<Array<[string, Load.Target]>> => {
  const auth = { authorization: `Bearer ${server.key}` }
  const root = server.base.replace(/\/api\/v1$/, "")
  const target = (await HeraldServer.draftAccount(server.base, server.key)).id
  return [
    ["GET /health/live", { url: `${root}/health/live`, method: "GET" }],
    ["GET 404", { url: `${server.base}/nothing`, method: "GET", headers: auth }],
    ["GET /me", { url: `${server.base}/me`, method: "GET", headers: auth }],
    ["GET /accounts", { url: `${server.base}/accounts`, method: "GET", headers: auth }],
    ["POST /posts", {
      url: `${server.base}/posts`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: HeraldServer.draftBody(target)
    }]
  ]
}

export const run = async (options: {
  readonly dir: string
  readonly seconds: number
  readonly env?: Record<string, string>
  readonly only?: ReadonlyArray<string>
  readonly nodeArgs?: ReadonlyArray<string>
}): Promise<ReadonlyArray<Step>> => {
  const server = await HeraldServer.start({
    dataDir: path.join(options.dir, "data"),
    ...(options.env ? { env: options.env } : {}),
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {})
  })
  try {
    const targets = await targetsOf(server)
    const steps: Array<Step> = []
    for (const [name, target] of targets) {
      if (options.only !== undefined && !options.only.some((o) => name.includes(o))) continue
      // Load.run warms up for 1 s before measuring; CPU is sampled over the whole run, requests too.
      const before = cpuSeconds(server.child.pid)
      const t0 = performance.now()
      const result = await Load.run(target, { connections: 32, seconds: options.seconds })
      const cpu = cpuSeconds(server.child.pid) - before
      const wall = (performance.now() - t0) / 1000
      const total = result.rps * wall
      steps.push({ name, result, cpuMicros: (cpu / total) * 1e6 })
    }
    return steps
  } finally {
    await server.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-ladder-"))
  try {
    const steps = await run({
      dir,
      seconds: Number(process.argv[2] ?? "4"),
      env: JSON.parse(process.env.LADDER_ENV ?? "{}") as Record<string, string>,
      ...(process.env.LADDER_ONLY ? { only: process.env.LADDER_ONLY.split(",") } : {}),
      // LADDER_PROF=dir: the server runs under `node --cpu-prof` and leaves its profile there.
      ...(process.env.LADDER_PROF ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${process.env.LADDER_PROF}`] } : {})
    })
    console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`)
    for (const s of steps) {
      console.log(
        `${s.name.padEnd(18)} ${Load.describe(s.result).padEnd(48)} server CPU ${s.cpuMicros.toFixed(0)} us/request`
      )
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
