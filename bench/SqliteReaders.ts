/**
 * The SQLite reader threads (`SqliteReaderClient`) against the main connection alone (`readers: 0`),
 * in the same run on the same database file:
 *
 * - short reads: a primary-key lookup and a 50-row page (the shapes of most API reads), one at a time
 *   (the latency a message round trip to a worker adds) and 64 in flight (throughput): wall time per
 *   read, and the main thread's busy time per read (event-loop utilization: what a read costs the
 *   thread that serves every request);
 * - a slow read (a recursive CTE counting to BENCH_SLOW_COUNT, about a second): the longest wait of
 *   a `GET /health/live` served by a node:http server in this process and polled every 10 ms by
 *   another process while the read runs (the probes include the time the prober waited for a CPU:
 *   1.6 s of read on the main thread stops the server, so the prober counts only a few answers),
 *   and the longest gap of a 1 ms timer in this process.
 *
 * Run: `npx tsx bench/SqliteReaders.ts` (BENCH_READS, BENCH_SLOW_COUNT to change the sizes).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as SqliteReaderClient from "../packages/adapters/src/sql/SqliteReaderClient.js"

const reads = Number(process.env.BENCH_READS ?? 4000)
const slowCount = Number(process.env.BENCH_SLOW_COUNT ?? 1_000_000)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-readers-"))
const filename = path.join(dir, "herald.db")

const build = (readers: number) =>
  Effect.map(Layer.build(SqliteReaderClient.layer({ filename, readers })), (c) => Context.get(c, SqlClient.SqlClient))

const seed = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    yield* sql`CREATE TABLE posts (id INTEGER PRIMARY KEY, organization_id TEXT NOT NULL, content TEXT NOT NULL,
      status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, scheduled_for INTEGER,
      tags TEXT NOT NULL, media BLOB)`
    yield* sql`CREATE INDEX posts_org_created ON posts (organization_id, created_at DESC)`
    yield* sql.withTransaction(Effect.forEach(
      Array.from({ length: 10_000 }, (_, i) => i),
      (i) =>
        sql`INSERT INTO posts (id, organization_id, content, status, created_at, updated_at, scheduled_for, tags, media)
        VALUES (${i}, ${`org-${i % 10}`}, ${`Post number ${i}, with a sentence or two of text as posts have.`},
        ${i % 7 === 0 ? "failed" : "published"}, ${1_700_000_000_000 + i}, ${1_700_000_000_000 + i}, ${null},
        ${"[\"launch\",\"news\"]"}, ${i % 5 === 0 ? Buffer.alloc(64, i % 256) : null})`,
      { discard: true }
    ))
  })

const lookup = (sql: SqlClient.SqlClient, i: number) => sql`SELECT * FROM posts WHERE id = ${i % 10_000}`
const page = (sql: SqlClient.SqlClient, i: number) =>
  sql`SELECT * FROM posts WHERE organization_id = ${`org-${i % 10}`} ORDER BY created_at DESC LIMIT 50`

interface Timing {
  readonly sequential: number
  readonly concurrent: number
  readonly sequentialBusy: number
  readonly concurrentBusy: number
}

/** Microseconds per read (wall and main-thread busy): `n` reads one after the other, then `n` with 64 in flight. */
const timeBlock = (
  sql: SqlClient.SqlClient,
  read: (sql: SqlClient.SqlClient, i: number) => Effect.Effect<unknown, unknown>,
  n: number
) =>
  Effect.gen(function*() {
    let started = performance.now()
    let loop = performance.eventLoopUtilization()
    for (let i = 0; i < n; i++) yield* read(sql, i)
    const sequential = ((performance.now() - started) * 1000) / n
    const sequentialBusy = (performance.eventLoopUtilization(loop).active * 1000) / n
    started = performance.now()
    loop = performance.eventLoopUtilization()
    yield* Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => read(sql, i), {
      concurrency: 64,
      discard: true
    })
    const concurrent = ((performance.now() - started) * 1000) / n
    const concurrentBusy = (performance.eventLoopUtilization(loop).active * 1000) / n
    return { sequential, concurrent, sequentialBusy, concurrentBusy } satisfies Timing
  })

const median = (values: ReadonlyArray<number>) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!

/**
 * Both clients in ten alternating blocks of `reads / 10` (after a warm-up), so that a change in the
 * machine's load falls on both; each figure is the median over the blocks, the ratio the median of
 * the blocks' ratios.
 */
const compare = (
  a: SqlClient.SqlClient,
  b: SqlClient.SqlClient,
  read: (sql: SqlClient.SqlClient, i: number) => Effect.Effect<unknown, unknown>
) =>
  Effect.gen(function*() {
    for (const sql of [a, b]) {
      yield* Effect.forEach(Array.from({ length: 500 }, (_, i) => i), (i) => read(sql, i), {
        concurrency: 16,
        discard: true
      })
    }
    const blocks: Array<readonly [Timing, Timing]> = []
    for (let block = 0; block < 10; block++) {
      const x = yield* timeBlock(a, read, Math.ceil(reads / 10))
      const y = yield* timeBlock(b, read, Math.ceil(reads / 10))
      blocks.push([x, y])
    }
    const figure = (key: keyof Timing) => ({
      a: median(blocks.map(([x]) => x[key])),
      b: median(blocks.map(([, y]) => y[key])),
      ratio: median(blocks.map(([x, y]) => x[key] / y[key]))
    })
    return {
      sequential: figure("sequential"),
      concurrent: figure("concurrent"),
      sequentialBusy: figure("sequentialBusy"),
      concurrentBusy: figure("concurrentBusy")
    }
  })

/**
 * A prober in a process of its own (a prober in this process would be held by the very stall it
 * measures): GET /health/live every 10 ms until told to stop on stdin, then prints the longest
 * round trip and the number of answers.
 */
const proberSource = `
const port = process.argv[1]
let polling = true, longest = 0, probes = 0
process.stdin.on("data", () => { polling = false })
;(async () => {
  while (polling) {
    const started = performance.now()
    await fetch("http://127.0.0.1:" + port + "/health/live").then((r) => r.text())
    if (probes === 0) process.stdout.write("ready\\n")
    else longest = Math.max(longest, performance.now() - started)
    probes++
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  process.stdout.write(JSON.stringify({ longest, probes: probes - 1 }))
  process.exit(0)
})()
`

const startProber = (port: number) =>
  Effect.promise(() =>
    new Promise<{ readonly stop: () => Promise<{ readonly longest: number; readonly probes: number }> }>((resolve) => {
      const child = spawn(process.execPath, ["-e", proberSource, String(port)], { stdio: ["pipe", "pipe", "inherit"] })
      let output = ""
      const exited = new Promise<void>((done) => child.once("exit", () => done()))
      const stop = async () => {
        child.stdin.end("stop")
        await exited
        return JSON.parse(output.slice(output.indexOf("\n") + 1)) as { longest: number; probes: number }
      }
      // The read begins once the prober has had its first answer (a process starting on a loaded
      // machine takes a while).
      child.stdout.on("data", (chunk: Buffer) => {
        const before = output
        output += chunk.toString()
        if (!before.includes("\n") && output.includes("\n")) resolve({ stop })
      })
    })
  )

/** The longest /health/live answer (seen from another process) and 1 ms timer gap while the slow read runs. */
const stall = (sql: SqlClient.SqlClient, port: number) =>
  Effect.gen(function*() {
    const prober = yield* startProber(port)
    let last = performance.now()
    let longestGap = 0
    const timer = setInterval(() => {
      const now = performance.now()
      longestGap = Math.max(longestGap, now - last)
      last = now
    }, 1)
    const started = performance.now()
    yield* sql`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${slowCount}) SELECT COUNT(*) AS n FROM c`
    const took = performance.now() - started
    longestGap = Math.max(longestGap, performance.now() - last)
    clearInterval(timer)
    const probed = yield* Effect.promise(() => prober.stop())
    return { took, longestProbe: probed.longest, longestGap, probes: probed.probes }
  })

const fmt = (n: number) => n.toFixed(1)

const program = Effect.gen(function*() {
  const server = http.createServer((_req, res) => res.end("{\"status\":\"ok\"}"))
  yield* Effect.acquireRelease(
    Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
    () => Effect.sync(() => server.close())
  )
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0

  const pooled = yield* build(SqliteReaderClient.defaultReaders)
  const mainOnly = yield* build(0)
  yield* seed(mainOnly)

  console.log(
    `SQLite reader threads (${SqliteReaderClient.defaultReaders}) vs main connection only, ${reads} reads, ${os.cpus().length} CPUs`
  )
  console.log(
    "| read | readers µs/read | main only µs/read | ratio (readers / main) | main thread busy µs/read: readers | main only | ratio |"
  )
  console.log("|---|---|---|---|---|---|---|")
  for (const [name, read] of [["primary-key lookup", lookup], ["50-row page", page]] as const) {
    const c = yield* compare(pooled, mainOnly, read)
    type Figure = { readonly a: number; readonly b: number; readonly ratio: number }
    const row = (label: string, wall: Figure, busy: Figure) =>
      console.log(
        `| ${name}, ${label} | ${fmt(wall.a)} | ${fmt(wall.b)} | ${wall.ratio.toFixed(2)} | ${fmt(busy.a)} | ${
          fmt(busy.b)
        } | ${busy.ratio.toFixed(2)} |`
      )
    row("one at a time", c.sequential, c.sequentialBusy)
    row("64 in flight", c.concurrent, c.concurrentBusy)
  }

  const a = yield* stall(pooled, port)
  const b = yield* stall(mainOnly, port)
  console.log()
  console.log(`Slow read (recursive CTE to ${slowCount}) while GET /health/live is polled every 10 ms`)
  console.log("| | readers | main only |")
  console.log("|---|---|---|")
  console.log(`| slow read took (ms) | ${fmt(a.took)} | ${fmt(b.took)} |`)
  console.log(`| longest /health/live wait (ms) | ${fmt(a.longestProbe)} | ${fmt(b.longestProbe)} |`)
  console.log(`| longest 1 ms timer gap (ms) | ${fmt(a.longestGap)} | ${fmt(b.longestGap)} |`)
  console.log(`| probes answered during the run | ${a.probes} | ${b.probes} |`)
})

await Effect.runPromise(Effect.scoped(program)).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
