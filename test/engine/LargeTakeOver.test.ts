/**
 * A process that died holding 1,500 claims: a `herald worker` settles every one of them in batches
 * beside its own work, and posts that fall due meanwhile are published while the settling goes on, not
 * after it. How long that takes depends on the machine: it is printed here, not asserted (the
 * deadlines below are waits, generous enough for a loaded machine). SQLite file, shared sandbox ledger. The dead holder is this test: it registers a process, claims
 * the destinations through the store as a worker's round does, and stops heartbeating, which leaves the
 * store as a SIGKILL would (a worker process cannot be made to hold more than four rounds' claims,
 * 750 at most, before it is killed).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import { ProcessInfo, ProcessStore } from "@herald/core/kernel/Processes"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import * as W from "./WorkerProcesses.js"

const held = 1_500

describe("settling a dead process that held many claims", () => {
  it(`${held} claims settled after a SIGKILL, in batches beside new posts published meanwhile`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-large-takeover-"))
    const file = path.join(dir, "herald.db")
    const runtime = ManagedRuntime.make(W.storesLayer({ _tag: "Sqlite", filename: file }))
    const workers: Array<W.WorkerProcess> = []
    // The worker finds its SQLite file as `herald.db` in its data dir.
    const env = { HERALD_SANDBOX_LEDGER: path.join(dir, "ledger.jsonl"), HERALD_DATA_DIR: dir }
    const until = async (what: string, check: () => Promise<boolean>, ms: number) => {
      const deadline = Date.now() + ms
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await W.sleep(200)
      }
    }
    const started = async (w: W.WorkerProcess) =>
      until("a worker to start", async () => w.output().includes("Dispatcher started"), 60_000)
    const query = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
      runtime.runPromise(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, f)))
    try {
      const seeded = await runtime.runPromise(
        W.seed({ posts: held, platforms: ["x"], dueAt: DateTime.unsafeMake(Date.now() + 24 * 3_600_000) })
      )
      const survivor = W.spawnWorker({
        database: { file },
        journal: path.join(dir, "survivor.jsonl"),
        args: ["--poll-ms", "100"],
        env
      })
      workers.push(survivor)
      await started(survivor)

      // The dead process: registered, claims everything due, never heartbeats again.
      // Made due and claimed in one transaction, so that the running worker cannot claim any first.
      const claimed = await runtime.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`UPDATE destinations SET due_at = ${Date.now()} WHERE status = 'queued'`
            const processes = yield* ProcessStore
            const dispatch = yield* DispatchStore
            const now = yield* DateTime.now
            yield* processes.register(
              new ProcessInfo({
                id: "dead-holder",
                kind: "worker",
                hostname: "h",
                pid: 1,
                startedAt: now,
                lastHeartbeatAt: now
              })
            )
            return yield* dispatch.claimDue({ now, limit: held, leaseFor: "30 seconds", workerId: "dead-holder" })
          }))).pipe(Effect.orDie)
      )
      expect(claimed.length).toBe(held)
      const killedAt = Date.now()

      // New posts fall due every second while the dead process's claims are settled.
      const fresh: Array<{ readonly organizationId: string; readonly dueAt: number }> = []
      let settledAt: number | undefined
      const held1 = async () =>
        Number(
          (await query((sql) =>
            sql<{ n: number }>`SELECT COUNT(*) AS n FROM destinations d JOIN posts p ON p.id = d.post_id
            WHERE p.organization_id = ${seeded.organizationId} AND d.status = 'publishing' AND d.attempts = 1`
          ))[0]!.n
        )
      while (Date.now() - killedAt < 240_000) {
        if (fresh.length < 40) {
          const dueAt = Date.now()
          const s = await runtime.runPromise(
            W.seed({ posts: 1, platforms: ["telegram"], dueAt: DateTime.unsafeMake(dueAt) })
          )
          fresh.push({ organizationId: s.organizationId, dueAt })
        }
        if ((await held1()) === 0) {
          settledAt = Date.now()
          break
        }
        await W.sleep(1_000)
      }
      if (settledAt === undefined) console.info(`[large-take-over] still held: ${await held1()}`)
      expect(settledAt).toBeDefined()
      const settleSeconds = ((settledAt ?? Date.now()) - killedAt) / 1000

      // Every new post published.
      await until("the new posts to be published", async () => {
        const rows = await query((sql) =>
          sql<
            { n: number }
          >`SELECT COUNT(*) AS n FROM destinations WHERE platform = 'telegram' AND status = 'published'`
        )
        return Number(rows[0]!.n) === fresh.length
      }, 120_000)
      const sends = W.readJournal(survivor.journal).filter((e) => e.platform === "telegram")
      const rows = await query((sql) =>
        sql<{ id: string; due_at: number }>`SELECT id, due_at FROM destinations WHERE platform = 'telegram'`
      )
      const sentAt = new Map(sends.map((e) => [e.destinationId, e.at]))
      const lateness = rows.map((r) => (sentAt.get(r.id) ?? Number.POSITIVE_INFINITY) - Number(r.due_at))
      const worst = Math.max(...lateness) / 1000
      const counts = await runtime.runPromise(W.statusCounts)
      console.info(
        `[large-take-over] ${held} claims settled ${settleSeconds.toFixed(1)} s after the kill; ` +
          `${fresh.length} new posts, worst ${worst.toFixed(1)} s late; ${JSON.stringify(counts)}`
      )
      // New posts were not held back behind the settling: when it lasted a while, a post that fell due
      // in its first half went out before it ended.
      if (settleSeconds >= 5) {
        const midway = killedAt + ((settledAt ?? Date.now()) - killedAt) / 2
        const early = rows.filter((r) => Number(r.due_at) < midway).map((r) =>
          sentAt.get(r.id) ?? Number.POSITIVE_INFINITY
        )
        expect(early.length).toBeGreaterThan(0)
        expect(Math.min(...early)).toBeLessThan(settledAt!)
      }
    } finally {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL")
      await Promise.all(workers.map((w) => w.exited))
      await runtime.dispose()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 480_000)
})
