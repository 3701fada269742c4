/**
 * `npm run bench`: the publishing engine's figures, printed as a table and written to bench/results.md.
 *
 * (a) dispatch throughput through the sandbox with zero latency: SQLite in-process, Postgres
 *     in-process, and Postgres with 1 and 4 `herald worker` processes;
 * (b) on-time accuracy: 10,000 destinations due in the same second, lag from `scheduled_for` to the
 *     start of the publish call (p50 / p99 / max), SQLite in-process and Postgres with 4 workers;
 * (c) the request path side by side (bench/RequestPath.ts): POST /posts against a hand-written
 *     node:http + better-sqlite3 create server, authenticated GET /accounts against bare node:http
 *     answering the same JSON, and the resident memory of both, idle and after each load.
 *
 * Sizes can be scaled with BENCH_SCALE (default 1). Postgres parts are skipped with a reason when no
 * Postgres answers at HERALD_TEST_PG_URL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Registry from "@herald/adapters/platforms/Registry"
import type { SandboxSend } from "@herald/adapters/platforms/Sandbox"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase, probePostgres } from "../packages/adapters/test/support/TestDatabases.js"
import * as W from "../test/engine/WorkerProcesses.js"
import * as Startup from "./Startup.js"
import * as RequestPath from "./RequestPath.js"

const scale = Number(process.env.BENCH_SCALE ?? "1")
const n = (base: number) => Math.max(10, Math.round(base * scale))

interface Row {
  readonly benchmark: string
  readonly store: string
  readonly processes: string
  readonly items: number
  readonly seconds: number
  readonly figure: string
}

const rows: Array<Row> = []
const notes: Array<string> = []

const record = (row: Row) => {
  rows.push(row)
  console.log(`  ${row.benchmark} | ${row.store} | ${row.processes} | ${row.figure}`)
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

const lagFigure = (lags: ReadonlyArray<number>): string => {
  const sorted = [...lags].sort((a, b) => a - b)
  return `p50 ${quantile(sorted, 0.5).toFixed(0)} ms, p99 ${quantile(sorted, 0.99).toFixed(0)} ms, max ${
    sorted.at(-1)!.toFixed(0)
  } ms`
}

const releaseAt = (at: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE destinations SET due_at = ${at} WHERE status = 'queued'`)

const farFuture = () => DateTime.unsafeMake(Date.now() + 24 * 3_600_000)

/** Spreads the queued destinations `stepMs` apart from `start`, one per step (light load). */
const spreadFrom = (start: number, stepMs: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE destinations SET due_at = ${start} + n.rn * ${stepMs}
      FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM destinations) AS n
      WHERE destinations.id = n.id AND destinations.status = 'queued'`)

const dueTimes = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ id: string; due_at: number | string }>`SELECT id, due_at FROM destinations`,
    (rows) => new Map(rows.map((r) => [r.id, Number(r.due_at)]))
  ))

// ---------------------------------------------------------------------------------------------------
// In-process: the dispatcher in this process, sends counted through the sandbox's hook
// ---------------------------------------------------------------------------------------------------

const inProcessRuntime = (database: Parameters<typeof W.storesLayer>[0], sends: Array<SandboxSend>) =>
  ManagedRuntime.make(
    Layer.merge(
      W.storesLayer(database),
      Registry.layerSandbox({ onSend: (send) => Effect.sync(() => sends.push(send)) })
    )
  )

const worker: Dispatcher.Options = { workerId: `bench:${process.pid}` }

/** Rounds back to back until nothing is due: the dispatcher's own speed, no sleeping. */
const drain = Effect.gen(function*() {
  let total = 0
  while (true) {
    const round = yield* Dispatcher.runOnce(worker)
    total += round.claimed
    if (round.claimed === 0) return total
  }
})

const throughputInProcess = async (label: string, database: Parameters<typeof W.storesLayer>[0], count: number) => {
  const sends: Array<SandboxSend> = []
  const runtime = inProcessRuntime(database, sends)
  try {
    await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: farFuture() }))
    await runtime.runPromise(releaseAt(Date.now()))
    const started = performance.now()
    const claimed = await runtime.runPromise(drain)
    const seconds = (performance.now() - started) / 1000
    const counts = await runtime.runPromise(W.statusCounts)
    if (claimed !== count || counts.published !== count) {
      notes.push(`${label}: expected ${count} published, got ${JSON.stringify(counts)}`)
    }
    record({
      benchmark: "dispatch throughput",
      store: label,
      processes: "1 (in-process)",
      items: count,
      seconds,
      figure: `${(count / seconds).toFixed(0)} destinations/s`
    })
  } finally {
    await runtime.dispose()
  }
}

const onTimeInProcess = async (label: string, database: Parameters<typeof W.storesLayer>[0], count: number) => {
  const sends: Array<SandboxSend> = []
  const runtime = inProcessRuntime(database, sends)
  try {
    await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: farFuture() }))
    const fiber = runtime.runFork(Dispatcher.run(worker))
    await W.sleep(300)
    // All due in the same second, a little ahead so the dispatcher is asleep when it comes.
    const due = Date.now() + 2000
    await runtime.runPromise(releaseAt(due))
    const deadline = Date.now() + 600_000
    while (sends.length < count && Date.now() < deadline) await W.sleep(50)
    await runtime.runPromise(Fiber.interrupt(fiber))
    const lags = sends.map((s) => DateTime.toEpochMillis(s.at) - due)
    record({
      benchmark: `on-time, ${count} due in one second`,
      store: label,
      processes: "1 (in-process)",
      items: sends.length,
      seconds: Math.max(...lags) / 1000,
      figure: lagFigure(lags)
    })
  } finally {
    await runtime.dispose()
  }
}

/** Light load: destinations due one every `stepMs`; lag of each from its own due instant. */
const onTimeLightInProcess = async (label: string, database: Parameters<typeof W.storesLayer>[0], count: number) => {
  const sends: Array<SandboxSend> = []
  const runtime = inProcessRuntime(database, sends)
  try {
    await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: farFuture() }))
    const fiber = runtime.runFork(Dispatcher.run(worker))
    await W.sleep(300)
    await runtime.runPromise(spreadFrom(Date.now() + 1000, 100))
    const deadline = Date.now() + 120_000
    while (sends.length < count && Date.now() < deadline) await W.sleep(50)
    await runtime.runPromise(Fiber.interrupt(fiber))
    const due = await runtime.runPromise(dueTimes)
    const lags = sends.map((s) => DateTime.toEpochMillis(s.at) - due.get(s.destinationId!)!)
    record({
      benchmark: `on-time, light load (1 due every 100 ms)`,
      store: label,
      processes: "1 (in-process)",
      items: sends.length,
      seconds: Math.max(...lags) / 1000,
      figure: lagFigure(lags)
    })
  } finally {
    await runtime.dispose()
  }
}

// ---------------------------------------------------------------------------------------------------
// Worker processes on Postgres
// ---------------------------------------------------------------------------------------------------

const withPg = async <A>(f: (url: string, runtime: ManagedRuntime.ManagedRuntime<W.StoresServices, never>) => Promise<A>) => {
  const db = await Effect.runPromise(createFreshPgDatabase())
  const runtime = ManagedRuntime.make(W.storesLayer({ _tag: "Postgres", url: db.url, maxConnections: 4 }))
  try {
    await runtime.runPromise(Effect.void)
    return await f(db.url, runtime)
  } finally {
    await runtime.dispose()
    await Effect.runPromise(db.drop)
  }
}

const startWorkers = async (url: string, dir: string, count: number, args: ReadonlyArray<string> = []) => {
  const workers = Array.from(
    { length: count },
    (_, i) => W.spawnWorker({ database: { url }, journal: path.join(dir, `w${i}.jsonl`), args })
  )
  const deadline = Date.now() + 90_000
  while (Date.now() < deadline && !workers.every((w) => w.output().includes("Dispatcher started"))) {
    if (workers.some((w) => w.child.exitCode !== null)) break
    await W.sleep(100)
  }
  for (const w of workers) {
    if (!w.output().includes("Dispatcher started")) throw new Error(`worker did not start:\n${w.output()}`)
  }
  return workers
}

const stopWorkers = async (workers: ReadonlyArray<W.WorkerProcess>) => {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGTERM")
  await Promise.all(workers.map((w) => w.exited))
}

const throughputWorkers = (processes: number, count: number) =>
  withPg(async (url, runtime) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-"))
    await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: farFuture() }))
    const workers = await startWorkers(url, dir, processes, ["--poll-ms", "50"])
    try {
      const started = performance.now()
      await runtime.runPromise(releaseAt(Date.now()))
      const deadline = Date.now() + 600_000
      let counts: Record<string, number> = {}
      while (Date.now() < deadline) {
        counts = await runtime.runPromise(W.statusCounts)
        if ((counts.queued ?? 0) === 0 && (counts.publishing ?? 0) === 0) break
        await W.sleep(20)
      }
      const seconds = (performance.now() - started) / 1000
      if (counts.published !== count) notes.push(`postgres x${processes}: ${JSON.stringify(counts)}`)
      record({
        benchmark: "dispatch throughput",
        store: "postgres",
        processes: `${processes} worker process${processes === 1 ? "" : "es"}`,
        items: count,
        seconds,
        figure: `${(count / seconds).toFixed(0)} destinations/s`
      })
    } finally {
      await stopWorkers(workers)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

const onTimeLightWorkers = (processes: number, count: number) =>
  withPg(async (url, runtime) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-"))
    await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: farFuture() }))
    const workers = await startWorkers(url, dir, processes)
    try {
      await runtime.runPromise(spreadFrom(Date.now() + 1000, 100))
      const deadline = Date.now() + 120_000
      let sends: ReadonlyArray<W.JournalEntry> = []
      while (Date.now() < deadline) {
        sends = workers.flatMap((w) => W.readJournal(w.journal))
        if (sends.length >= count) break
        await W.sleep(200)
      }
      const due = await runtime.runPromise(dueTimes)
      const lags = sends.map((s) => s.at - due.get(s.destinationId)!)
      record({
        benchmark: `on-time, light load (1 due every 100 ms)`,
        store: "postgres",
        processes: `${processes} worker process${processes === 1 ? "" : "es"}`,
        items: sends.length,
        seconds: Math.max(...lags) / 1000,
        figure: lagFigure(lags)
      })
    } finally {
      await stopWorkers(workers)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

const onTimeWorkers = (processes: number, count: number) =>
  withPg(async (url, runtime) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-"))
    await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: farFuture() }))
    const workers = await startWorkers(url, dir, processes)
    try {
      const due = Date.now() + 2000
      await runtime.runPromise(releaseAt(due))
      const deadline = Date.now() + 600_000
      let sends: ReadonlyArray<W.JournalEntry> = []
      while (Date.now() < deadline) {
        sends = workers.flatMap((w) => W.readJournal(w.journal))
        if (sends.length >= count) break
        await W.sleep(200)
      }
      const lags = sends.map((s) => s.at - due)
      record({
        benchmark: `on-time, ${count} due in one second`,
        store: "postgres",
        processes: `${processes} worker processes`,
        items: sends.length,
        seconds: Math.max(...lags) / 1000,
        figure: lagFigure(lags)
      })
    } finally {
      await stopWorkers(workers)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

// ---------------------------------------------------------------------------------------------------

const machine = () => {
  const cpus = os.cpus()
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ` +
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()}`
}

const main = async () => {
  console.log(`Herald engine benchmarks — ${machine()}`)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-sqlite-"))
  const sqlite = (name: string) => ({ _tag: "Sqlite" as const, filename: path.join(tmp, `${name}.db`) })
  const pg = await probePostgres
  try {
    console.log("(a) dispatch throughput, sandbox with zero latency")
    await throughputInProcess("sqlite (synchronous=FULL)", sqlite("throughput"), n(3000))
    await throughputInProcess("sqlite (synchronous=NORMAL)", { ...sqlite("throughput-normal"), synchronous: "NORMAL" }, n(3000))
    if (pg.available) {
      await withPg(async (url) => {
        await throughputInProcess("postgres", { _tag: "Postgres", url, maxConnections: 10 }, n(5000))
      })
      await throughputWorkers(1, n(5000))
      await throughputWorkers(4, n(5000))
    } else {
      notes.push(`Postgres parts skipped: ${pg.reason}`)
    }

    console.log("(b) on-time accuracy")
    await onTimeInProcess("sqlite (synchronous=FULL)", sqlite("ontime"), n(10_000))
    if (pg.available) await onTimeWorkers(4, n(10_000))
    await onTimeLightInProcess("sqlite (synchronous=FULL)", sqlite("ontime-light"), n(100))
    if (pg.available) await onTimeLightWorkers(2, n(100))

    console.log("(c) request path against hand-written peers, 32 keep-alive connections")
    const requestPath = await RequestPath.run({ dir: path.join(tmp, "request-path"), seconds: Math.max(2, 5 * scale), rounds: 2 })
    const side = (what: string, h: RequestPath.Side, p: RequestPath.Side, target: number) => {
      record({
        benchmark: what,
        store: "sqlite (synchronous=FULL)",
        processes: `herald serve / peer, ${requestPath.connections} connections`,
        items: requestPath.rounds,
        seconds: requestPath.seconds * requestPath.rounds,
        figure: `${h.rps.toFixed(0)} vs ${p.rps.toFixed(0)} req/s = ${(h.rps / p.rps).toFixed(2)}x (target ${target}x); ` +
          `p50 ${h.p50.toFixed(1)} vs ${p.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} vs ${p.p99.toFixed(1)} ms`
      })
      const failed = { ...h.failures, ...p.failures }
      if (Object.keys(failed).length > 0) notes.push(`${what}: non-2xx answers ${JSON.stringify([h.failures, p.failures])}`)
    }
    for (const line of await (await import("./Renditions.js")).run()) record(line)
    side("POST /posts (draft) vs node:http + better-sqlite3", requestPath.posts.herald, requestPath.posts.peer, 0.5)
    side("GET /accounts (authenticated) vs node:http, same JSON", requestPath.accounts.herald, requestPath.accounts.peer, 0.25)
    const mib = (xs: ReadonlyArray<number>) => xs.map((x) => `${x.toFixed(0)}`).join(" / ")
    record({
      benchmark: "RSS MiB: idle / after POST / after GET",
      store: "sqlite (synchronous=FULL)",
      processes: "herald serve vs peer",
      items: 0,
      seconds: 0,
      figure: `${mib(requestPath.rss.herald)} vs ${mib(requestPath.rss.peer)} = ${
        (requestPath.rss.herald[0]! / requestPath.rss.peer[0]!).toFixed(1)
      }x idle`
    })
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  write()
  await Startup.runInto(path.join(import.meta.dirname, "results.md"))
}

const write = () => {
  const header = ["Benchmark", "Store", "Processes", "Items", "Seconds", "Figure"]
  const table = rows.map((r) => [r.benchmark, r.store, r.processes, String(r.items), r.seconds.toFixed(2), r.figure])
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")
  console.log("\n" + line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"))
  for (const row of table) console.log(line(row))
  for (const note of notes) console.log(`note: ${note}`)

  const md = [
    "# Engine benchmarks",
    "",
    `Run with \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${machine()}.`,
    "Sandbox platform with zero latency; default dispatcher settings (batches of 50, 50 publishes in flight).",
    "Throughput is from the moment the destinations become due until every one is recorded (with its events);",
    "on-time lag is from `scheduled_for` to the start of the publish call. Worker processes are `herald worker`",
    "on one Postgres database; Postgres runs on the same 2-core machine as the workers and the benchmark.",
    "For on-time rows, Seconds is the largest lag. A burst is CPU-bound here: rounds claim 50 at a time",
    "(`--batch-size` raises it). The request-path rows alternate Herald and its peer (two rounds each, 32 keep-alive",
    "connections, figures are means): POST /posts creates drafts for one account (post + target row, one transaction;",
    "drafts are not counted against the scheduling allowance, which would answer 429 first); the peer",
    "(bench/peers/create-peer.mjs) does the same key lookup, checks and inserts on a copy of Herald's database,",
    "synchronous=FULL, and answers GET /accounts with Herald's JSON byte for byte. Items is rounds.",
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...table.map((row) => `| ${row.join(" | ")} |`),
    "",
    ...notes.map((note) => `- ${note}`),
    ""
  ].join("\n")
  fs.writeFileSync(path.join(import.meta.dirname, "results.md"), md)
  console.log("\nwritten to bench/results.md")
}

await main()
