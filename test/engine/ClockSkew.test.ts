/**
 * Two worker processes on one Postgres whose clocks disagree by two minutes (one 60 s ahead, one 60 s
 * behind; the skew is injected by a preload that shifts `Date.now`, which Effect's clock reads). Leases
 * and heartbeats are judged by the database's clock, so neither takes over the other's live claims:
 * every destination is sent exactly once and none is settled as abandoned.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { createFreshPgDatabase, probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as W from "./WorkerProcesses.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] clock skew test: ${pg.reason}`)

/** A preload module that moves this process's `Date.now` by `offsetMs`. */
const skewPreload = (dir: string, offsetMs: number): string => {
  const file = path.join(dir, `skew-${offsetMs}.mjs`)
  fs.writeFileSync(file, `const now = Date.now.bind(Date)\nDate.now = () => now() + (${offsetMs})\n`)
  return pathToFileURL(file).href
}

describe.skipIf(!pg.available)("clock skew between worker processes (Postgres)", () => {
  it("a process 60 s ahead and one 60 s behind: no duplicate sends, no take-over of live claims", async () => {
    const db = await Effect.runPromise(createFreshPgDatabase())
    const runtime = ManagedRuntime.make(W.storesLayer({ _tag: "Postgres", url: db.url, maxConnections: 4 }))
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-skew-"))
    const workers: Array<W.WorkerProcess> = []
    try {
      const seeded = await runtime.runPromise(
        W.seed({ posts: 300, platforms: ["x"], dueAt: DateTime.unsafeMake(Date.now() + 24 * 3_600_000) })
      )
      // One ledger for both, so that the sandbox answers a take-over's lookup ("absent" while the
      // holder is still sending): a premature take-over re-queues and sends again.
      const ledger = path.join(dir, "ledger.jsonl")
      for (const [i, offset] of [60_000, -60_000].entries()) {
        workers.push(W.spawnWorker({
          database: { url: db.url },
          journal: path.join(dir, `worker-${i}.jsonl`),
          args: ["--batch-size", "10", "--poll-ms", "100"],
          latencyMs: 700,
          env: {
            HERALD_SANDBOX_LEDGER: ledger,
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${skewPreload(dir, offset)}`.trim()
          }
        }))
      }
      const started = Date.now() + 60_000
      while (Date.now() < started && !workers.every((w) => w.output().includes("Dispatcher started"))) {
        if (workers.some((w) => w.child.exitCode !== null)) break
        await W.sleep(100)
      }
      for (const w of workers) expect(w.output()).toContain("Dispatcher started")

      // Due three minutes ago by the database's clock: due by either process's clock too.
      await runtime.runPromise(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`UPDATE destinations SET due_at = CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT) - 180000
          WHERE status = 'queued'`
        )
      )
      const deadline = Date.now() + 120_000
      let counts = await runtime.runPromise(W.statusCounts)
      while (Date.now() < deadline && ((counts.queued ?? 0) > 0 || (counts.publishing ?? 0) > 0)) {
        await W.sleep(200)
        counts = await runtime.runPromise(W.statusCounts)
      }
      for (const w of workers) w.child.kill("SIGTERM")
      await Promise.all(workers.map((w) => w.exited))

      const sends = workers.flatMap((w) => W.readJournal(w.journal))
      const perDestination = new Map<string, number>()
      for (const s of sends) perDestination.set(s.destinationId, (perDestination.get(s.destinationId) ?? 0) + 1)
      const duplicates = [...perDestination.values()].filter((n) => n > 1).length
      const takeOvers = workers.map((w) => (w.output().match(/abandoned attempt settled/g) ?? []).length)
      console.info(
        `[clock-skew] sends per worker ${workers.map((w) => W.readJournal(w.journal).length).join("/")}; ` +
          `duplicates ${duplicates}; take-overs ${takeOvers.join("/")}; ${JSON.stringify(counts)}`
      )
      expect(counts).toEqual({ published: seeded.destinations })
      expect(duplicates).toBe(0)
      expect(perDestination.size).toBe(seeded.destinations)
      expect(takeOvers).toEqual([0, 0])
      // Both took part, so each met the other's claims.
      expect(workers.every((w) => W.readJournal(w.journal).length > 0)).toBe(true)
    } finally {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL")
      await runtime.dispose()
      await Effect.runPromise(db.drop)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
