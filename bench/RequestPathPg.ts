/**
 * `POST /posts` on Postgres, side by side (the Postgres row of the request-path bench): `herald serve
 * --sandbox` on a fresh Postgres database against the hand-written node:http + `pg` peer
 * (bench/peers/create-peer-pg.mjs) on the SAME database, both at the server's `synchronous_commit`
 * (reported). Same body as the SQLite row (a draft for one account: post + target row, one
 * transaction), 32 keep-alive connections, loads alternating `rounds` times.
 *
 * Besides requests/s it reports CPU per request, load-robust on a shared machine: of the server
 * process (/proc/<pid>/stat) and of the Postgres backends serving it (by application_name), and the
 * statements per request (pg_stat_database xact/tup counters are not per statement; the backends'
 * CPU says what Postgres pays).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import * as Effect from "effect/Effect"
import { createFreshPgDatabase, probePostgres } from "../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "./HeraldServer.js"
import * as Load from "./Load.js"

export interface PgSide {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly failures: Record<string, number>
  /** CPU milliseconds per request of the server process, and of its Postgres backends. */
  readonly cpuMs: number
  readonly pgCpuMs: number
}

export type PgResult =
  | {
    readonly available: true
    readonly herald: PgSide
    readonly peer: PgSide
    readonly synchronousCommit: string
    readonly connections: number
    readonly seconds: number
    readonly rounds: number
  }
  | { readonly available: false; readonly reason: string }

const ticks = 100 // USER_HZ on Linux

/** utime + stime of a process in milliseconds, 0 when unreadable. */
const cpuOf = (pid: number | undefined): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks
  } catch {
    return 0
  }
}

const backendsCpu = async (client: pg.Client, database: string, application: string) => {
  const { rows } = await client.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2",
    [database, application]
  )
  return rows.reduce((sum, row) => sum + cpuOf(row.pid), 0)
}

const startPeer = async (url: string) => {
  const port = await HeraldServer.freePort()
  return HeraldServer.startPeer({
    script: path.join(import.meta.dirname, "peers/create-peer-pg.mjs"),
    args: [url, String(port)],
    port
  })
}

/** Loads one server with drafts; its CPU per request and that of its Postgres backends. */
const measureSide = async (side: {
  readonly admin: pg.Client
  readonly database: string
  readonly application: string
  readonly base: string
  readonly pid: number | undefined
  readonly headers: Record<string, string>
  readonly body: (i: number) => string
  readonly connections: number
  readonly seconds: number
}): Promise<PgSide> => {
  const cpu0 = cpuOf(side.pid)
  const pg0 = await backendsCpu(side.admin, side.database, side.application)
  const r = await Load.run({ url: `${side.base}/posts`, method: "POST", headers: side.headers, body: side.body }, {
    connections: side.connections,
    seconds: side.seconds
  })
  // Warm-up requests are included in the CPU; divide by every request sent.
  const sent = r.requests + Math.max(0, r.rps * 1)
  const cpuMs = (cpuOf(side.pid) - cpu0) / sent
  const pgCpuMs = ((await backendsCpu(side.admin, side.database, side.application)) - pg0) / sent
  return { rps: r.rps, p50: r.p50, p99: r.p99, failures: r.failures, cpuMs, pgCpuMs }
}

export const run = async (options: {
  readonly dir: string
  readonly seconds: number
  readonly rounds: number
  readonly connections?: number
}): Promise<PgResult> => {
  const probe = await probePostgres
  if (!probe.available) return { available: false, reason: probe.reason }
  const connections = options.connections ?? 32
  const db = await Effect.runPromise(createFreshPgDatabase())
  const admin = new pg.Client({ connectionString: db.url, application_name: "bench-observer" })
  await admin.connect()
  try {
    const synchronousCommit = (await admin.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"))
      .rows[0]!.s
    const herald = await HeraldServer.start({
      dataDir: path.join(options.dir, "herald-pg"),
      env: { HERALD_DATABASE_URL: db.url }
    })
    try {
      const headers = { authorization: `Bearer ${herald.key}`, "content-type": "application/json" }
      const target = (await HeraldServer.draftAccount(herald.base, herald.key)).id
      const peer = await startPeer(db.url)
      try {
        await HeraldServer.sleep(500)
        const body = HeraldServer.draftBody(target)
        const runs = { herald: [] as Array<PgSide>, peer: [] as Array<PgSide> }
        const measure = (base: string, pid: number | undefined, application: string) =>
          measureSide({
            admin,
            database: db.name,
            application,
            base,
            pid,
            headers,
            body,
            connections,
            seconds: options.seconds
          })
        for (let round = 0; round < options.rounds; round++) {
          runs.herald.push(await measure(herald.base, herald.child.pid, "herald"))
          runs.peer.push(await measure(peer.base, peer.child.pid, "create-peer-pg"))
        }
        return {
          available: true,
          herald: mean(runs.herald),
          peer: mean(runs.peer),
          synchronousCommit,
          connections,
          seconds: options.seconds,
          rounds: options.rounds
        }
      } finally {
        await peer.stop()
      }
    } finally {
      await herald.stop()
    }
  } finally {
    await admin.end()
    await Effect.runPromise(db.drop)
  }
}

const mean = (sides: ReadonlyArray<PgSide>): PgSide => {
  const failures: Record<string, number> = {}
  for (const s of sides) for (const [k, v] of Object.entries(s.failures)) failures[k] = (failures[k] ?? 0) + v
  const avg = (f: (s: PgSide) => number) => sides.reduce((sum, s) => sum + f(s), 0) / sides.length
  return {
    rps: avg((s) => s.rps),
    p50: avg((s) => s.p50),
    p99: avg((s) => s.p99),
    failures,
    cpuMs: avg((s) => s.cpuMs),
    pgCpuMs: avg((s) => s.pgCpuMs)
  }
}

/** One line: both sides, the ratio, CPU per request. */
export const describe = (r: PgResult): string =>
  r.available
    ? `herald ${r.herald.rps.toFixed(0)} vs peer ${r.peer.rps.toFixed(0)} req/s = ${
      (r.herald.rps / r.peer.rps).toFixed(2)
    }x ` +
      `(target 0.3x); p50 ${r.herald.p50.toFixed(1)} vs ${r.peer.p50.toFixed(1)} ms, p99 ${
        r.herald.p99.toFixed(1)
      } vs ${r.peer.p99.toFixed(1)} ms; CPU/request node ${r.herald.cpuMs.toFixed(2)} vs ${
        r.peer.cpuMs.toFixed(2)
      } ms, postgres ${r.herald.pgCpuMs.toFixed(2)} vs ${
        r.peer.pgCpuMs.toFixed(2)
      } ms; synchronous_commit=${r.synchronousCommit}` +
      (Object.keys(r.herald.failures).length + Object.keys(r.peer.failures).length > 0
        ? ` failures ${JSON.stringify([r.herald.failures, r.peer.failures])}`
        : "")
    : `skipped: ${r.reason}`

/**
 * A/B of Herald builds on this row: this checkout's server and `baseline`'s (another checkout, built),
 * each on its own fresh database, loaded alternately `rounds` times (no peer). Prints CPU per create of
 * each, the robust figure on a loaded machine.
 */
export const runAB = async (options: {
  readonly dir: string
  readonly seconds: number
  readonly rounds: number
  readonly baseline: string
  readonly connections?: number
}): Promise<string> => {
  const probe = await probePostgres
  if (!probe.available) return `skipped: ${probe.reason}`
  const connections = options.connections ?? 32
  const sides: Array<{ name: string; repoRoot?: string; runs: Array<PgSide> }> = [
    { name: "this build", runs: [] },
    { name: `baseline ${options.baseline}`, repoRoot: options.baseline, runs: [] }
  ]
  const started: Array<{ stop: () => Promise<void> }> = []
  try {
    const loaded = []
    for (const [i, side] of sides.entries()) {
      const db = await Effect.runPromise(createFreshPgDatabase())
      started.push({ stop: () => Effect.runPromise(db.drop) })
      const admin = new pg.Client({ connectionString: db.url, application_name: "bench-observer" })
      await admin.connect()
      started.push({ stop: () => admin.end() })
      const herald = await HeraldServer.start({
        dataDir: path.join(options.dir, `herald-pg-${i}`),
        env: { HERALD_DATABASE_URL: db.url },
        ...(side.repoRoot === undefined ? {} : { repoRoot: side.repoRoot })
      })
      started.push({ stop: () => herald.stop() })
      const target = (await HeraldServer.draftAccount(herald.base, herald.key)).id
      const headers = { authorization: `Bearer ${herald.key}`, "content-type": "application/json" }
      loaded.push({ side, admin, database: db.name, herald, headers, body: HeraldServer.draftBody(target) })
    }
    await HeraldServer.sleep(500)
    for (let round = 0; round < options.rounds; round++) {
      for (const l of loaded) {
        l.side.runs.push(
          await measureSide({
            admin: l.admin,
            database: l.database,
            application: "herald",
            base: l.herald.base,
            pid: l.herald.child.pid,
            headers: l.headers,
            body: l.body,
            connections,
            seconds: options.seconds
          })
        )
      }
    }
    return sides.map((side) => {
      const m = mean(side.runs)
      return `${side.name}: ${m.rps.toFixed(0)} req/s, CPU/request node ${m.cpuMs.toFixed(2)} ms, postgres ${
        m.pgCpuMs.toFixed(2)
      } ms (per round: ${side.runs.map((r) => `${r.cpuMs.toFixed(2)}/${r.pgCpuMs.toFixed(2)}`).join(", ")})`
    }).join("\n")
  } finally {
    for (const s of started.reverse()) await s.stop()
  }
}

// `node --import tsx bench/RequestPathPg.ts [seconds] [rounds]`: this row alone. With
// `AB_BASELINE=<checkout>` (built): this build against that one instead of the peer (`runAB`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const os = await import("node:os")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-request-path-pg-"))
  const seconds = Number(process.argv[2] ?? "5")
  const rounds = Number(process.argv[3] ?? "2")
  const baseline = process.env.AB_BASELINE
  try {
    console.log(
      baseline === undefined
        ? `POST /posts on Postgres: ${describe(await run({ dir, seconds, rounds }))}`
        : `POST /posts on Postgres, A/B:\n${await runAB({ dir, seconds, rounds, baseline })}`
    )
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
