/**
 * `npx tsx bench/ScaleBurst.ts`: cold start and a due burst on a filled store, for this build and
 * (with `--baseline DIR`) another checkout's build, side by side in one run.
 *
 * Per build and store: a `herald serve --sandbox` creates the template rows; the store is filled with
 * `--size` posts (`ScaleSeed.seed`); the server starts again and its cold start is the time from
 * spawning the process to its "listening on" line. On Postgres two `herald worker --sandbox` start
 * beside it. Then `--burst` scheduled posts are made due at once, two seconds ahead (their
 * destinations' `due_at` and the posts' `scheduled_for`, written in one transaction as a client's
 * schedule would leave them), and the bench waits until every one of their destinations is published.
 * Reported: the delay from the due instant to the first and the last claim (`claimed_at`, the start of
 * publishing) and to the last publish, and the CPU time the server (and workers) used from the burst's
 * write to its last outcome: on a machine shared with other work that figure holds where wall time
 * does not.
 *
 *   npx tsx bench/ScaleBurst.ts -- [--size 100000] [--burst 10000] [--stores sqlite,pg] [--workers 2]
 *     [--baseline /work/main] [--lead-ms 2000]
 *
 * `BENCH_HERALD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"` profiles the server (and the workers);
 * `BENCH_BURST_KEEP=DIR` keeps a copy of the filled SQLite store (before the burst) in DIR, and the
 * Postgres database (after the burst; its URL is printed).
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase } from "../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "./HeraldServer.js"
import { type Db, pgDb, seed, sqliteDb } from "./ScaleSeed.js"
import { prepareTemplates } from "./ScaleTemplates.js"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}

const size = Number(arg("size") ?? "100000")
const burst = Number(arg("burst") ?? "10000")
const stores = (arg("stores") ?? "sqlite,pg").split(",") as Array<"sqlite" | "pg">
const workerCount = Number(arg("workers") ?? "2")
const baseline = arg("baseline")
/**
 * How far ahead of the burst's write its due instant is: the write must end before it, or the figures
 * measure the write (on Postgres, 10,000 posts' schedule changed in one transaction fires the
 * maintained-status trigger per post and takes seconds; the run prints how long it took).
 */
const leadMs = Number(arg("lead-ms") ?? "2000")

interface Measured {
  readonly build: string
  readonly store: string
  readonly coldStartMs: number
  /** CPU time the server used up to listening: what the start costs, whatever else the machine runs. */
  readonly coldStartCpuMs: number
  readonly destinations: number
  readonly firstStartMs: number
  readonly lastStartMs: number
  /** The last outcome recorded (published or failed). */
  readonly lastPublishedMs: number
  readonly published: number
  /** CPU time (user + system) of the server and workers from the burst's write to its last outcome. */
  readonly burstCpuMs: number
}

/** A `herald worker --sandbox` on the store; resolves once its process is running. */
const startWorker = (root: string, dataDir: string, env: Record<string, string>) => {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_HERALD_NODE_ARGS ?? "").split(" ").filter((a) => a !== ""),
      path.join(root, "packages/http/bin/herald.mjs"),
      "worker",
      "--sandbox"
    ],
    { cwd: root, env: { ...process.env, HERALD_DATA_DIR: dataDir, ...env }, stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  child.stdout!.on("data", (c) => (output = (output + String(c)).slice(-20_000)))
  child.stderr!.on("data", (c) => (output = (output + String(c)).slice(-20_000)))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  return {
    pid: child.pid,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; NaN when unreadable). */
const cpuMillis = (pid: number | undefined): number => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
  }
}

const one = async (db: Db, text: string, params: ReadonlyArray<unknown> = []) => (await db.all(text, params))[0]!

const runOne = async (build: string, root: string, store: "sqlite" | "pg"): Promise<Measured> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-burst-"))
  const pgDatabase = store === "pg" ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const env: Record<string, string> = pgDatabase === undefined ? {} : { HERALD_DATABASE_URL: pgDatabase.url }
  const workers: Array<ReturnType<typeof startWorker>> = []
  try {
    // Private addresses allowed for the template webhook (127.0.0.1), so its deliveries are templates too.
    const first = await HeraldServer.start({
      dataDir,
      env: { ...env, HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" },
      repoRoot: root
    })
    await prepareTemplates(first)
    await first.stop()
    const db = pgDatabase === undefined ? sqliteDb(path.join(dataDir, "herald.db")) : await pgDb(pgDatabase.url)
    try {
      const seeded = await seed(db, size, Date.now())
      console.log(`  ${build} ${store}: seeded ${size} posts in ${seeded.seedSeconds.toFixed(1)} s`)
      // The seed copies the template's metrics schedule (not started) onto every published
      // destination; in a store a year old, posts older than the schedule (7 days) have finished it.
      await db.all(
        "UPDATE destinations SET metrics_step = 5, next_metrics_at = NULL WHERE status = 'published' AND published_at < $1",
        [Date.now() - 7 * 86_400_000]
      )
      // The burst: the first `burst` scheduled posts (all their destinations queued, due in a year).
      await db.exec("CREATE TEMP TABLE burst AS SELECT DISTINCT post_id FROM destinations WHERE status = 'queued'")
      await db.exec(
        `DELETE FROM burst WHERE post_id NOT IN (SELECT post_id FROM burst ORDER BY post_id LIMIT ${burst})`
      )
      const destinations = Number(
        (await one(db, "SELECT COUNT(*) AS n FROM destinations WHERE post_id IN (SELECT post_id FROM burst)")).n
      )

      // The store at rest: the seeding's WAL checkpointed into the file (a server opening a store
      // with a WAL of hundreds of MB spends seconds rebuilding its index, which no store at rest has).
      await db.bytes()
      // BENCH_BURST_KEEP=DIR: a copy of the filled SQLite store before the burst, to EXPLAIN and time
      // statements against.
      if (process.env.BENCH_BURST_KEEP !== undefined && store === "sqlite") {
        fs.mkdirSync(process.env.BENCH_BURST_KEEP, { recursive: true })
        fs.copyFileSync(path.join(dataDir, "herald.db"), path.join(process.env.BENCH_BURST_KEEP, `${build}-${size}.db`))
      }
      const t0 = performance.now()
      const server = await HeraldServer.start({ dataDir, env, repoRoot: root, key: first.key })
      const coldStartMs = performance.now() - t0
      const coldStartCpuMs = cpuMillis(server.child.pid)
      try {
        if (store === "pg") {
          for (let i = 0; i < workerCount; i++) workers.push(startWorker(root, dataDir, env))
          // Workers are up once each has registered in the process table.
          const deadline = Date.now() + 60_000
          while (Date.now() < deadline) {
            const n = Number((await one(db, "SELECT COUNT(*) AS n FROM processes WHERE kind = 'worker'")).n)
            if (n >= workerCount) break
            await HeraldServer.sleep(100)
          }
        }
        const cpuOfAll = () =>
          [server.child.pid, ...workers.map((w) => w.pid)].reduce<number>((sum, pid) => sum + cpuMillis(pid), 0)
        const cpuBefore = cpuOfAll()
        const due = Date.now() + leadMs
        await db.exec(db.dialect === "pg" ? "BEGIN" : "BEGIN IMMEDIATE")
        await db.all(
          "UPDATE destinations SET due_at = $1 WHERE status = 'queued' AND post_id IN (SELECT post_id FROM burst)",
          [due]
        )
        await db.all("UPDATE posts SET scheduled_for = $1 WHERE id IN (SELECT post_id FROM burst)", [due])
        await db.exec("COMMIT")
        const writeMs = Date.now() - (due - leadMs)
        console.log(
          `  ${build} ${store}: the burst's write took ${writeMs} ms` +
            (writeMs > leadMs ? ` (past its due instant: raise --lead-ms above it)` : "")
        )
        const deadline = Date.now() + leadMs + 300_000
        while (Date.now() < deadline) {
          const left = Number(
            (await one(
              db,
              "SELECT COUNT(*) AS n FROM destinations WHERE post_id IN (SELECT post_id FROM burst) AND status IN ('queued', 'publishing')"
            )).n
          )
          if (left === 0) break
          await HeraldServer.sleep(200)
        }
        const burstCpuMs = cpuOfAll() - cpuBefore
        const times = await one(
          db,
          `SELECT MIN(claimed_at) AS first, MAX(claimed_at) AS last, MAX(published_at) AS done,
             SUM(CASE WHEN status = 'published' THEN 1 ELSE 0 END) AS published, MAX(failed_at) AS failed_done
           FROM destinations WHERE post_id IN (SELECT post_id FROM burst)`
        )
        // The sandbox refuses a few posts on purpose (a failed publish is a settled one too).
        if (Number(times.published) === 0) throw new Error(`none of ${destinations} burst destinations published`)
        const measured: Measured = {
          build,
          store,
          coldStartMs,
          coldStartCpuMs,
          destinations,
          firstStartMs: Number(times.first) - due,
          lastStartMs: Number(times.last) - due,
          lastPublishedMs: Math.max(Number(times.done), Number(times.failed_done ?? 0)) - due,
          published: Number(times.published),
          burstCpuMs
        }
        if (process.env.BENCH_BURST_OUTPUT !== undefined) console.log(server.output().slice(-6000))
        console.log(
          `  ${build} ${store}: cold start ${coldStartMs.toFixed(0)} ms (${
            coldStartCpuMs.toFixed(0)
          } ms CPU); ${destinations} destinations of ${burst} posts: ` +
            `first start +${measured.firstStartMs} ms, last start +${measured.lastStartMs} ms, last settled +${measured.lastPublishedMs} ms (${measured.published} published); CPU ${burstCpuMs} ms`
        )
        return measured
      } catch (error) {
        console.error(server.output().slice(-3000))
        for (const w of workers) console.error(w.output().slice(-2000))
        throw error
      } finally {
        for (const w of workers) await w.stop()
        await server.stop()
      }
    } finally {
      await db.close()
    }
  } finally {
    if (pgDatabase !== undefined && process.env.BENCH_BURST_KEEP !== undefined) {
      console.log(`  ${build} pg: database kept at ${pgDatabase.url}`)
    } else if (pgDatabase !== undefined) await Effect.runPromise(pgDatabase.drop)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const main = async () => {
  const builds: Array<[string, string]> = [
    ...(baseline === undefined ? [] : [["baseline", baseline] as [string, string]]),
    ["this", path.resolve(import.meta.dirname, "..")]
  ]
  const results: Array<Measured> = []
  for (const store of stores) {
    for (const [build, root] of builds) results.push(await runOne(build, root, store))
  }
  console.log(`\n### Cold start and a due burst (${size} posts, ${burst} posts due at once)\n`)
  console.log(
    "| store | build | cold start (CPU) | destinations | first start | last start | last settled | CPU in the burst |"
  )
  console.log("|---|---|---|---|---|---|---|---|")
  for (const r of results) {
    console.log(
      `| ${r.store}${r.store === "pg" ? ` (serve + ${workerCount} workers)` : ""} | ${r.build} | ${
        (r.coldStartMs / 1000).toFixed(2)
      } s (${(r.coldStartCpuMs / 1000).toFixed(2)} s) | ` +
        `${r.destinations} | +${(r.firstStartMs / 1000).toFixed(2)} s | +${(r.lastStartMs / 1000).toFixed(2)} s | ` +
        `+${(r.lastPublishedMs / 1000).toFixed(2)} s | ${(r.burstCpuMs / 1000).toFixed(2)} s |`
    )
  }
}

await main()
