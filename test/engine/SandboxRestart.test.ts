/**
 * The default deployment (SQLite, `--sandbox`): a worker killed with SIGKILL mid-publish and replaced by
 * a new one. The sandbox's ledger lives in the data dir by default, so the new process can ask it what
 * the dead one published: every destination ends published once, none with an unknown outcome.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as W from "./WorkerProcesses.js"

describe("sandbox on SQLite: a killed worker's destinations settled through the default ledger", () => {
  it("0 unknown outcomes, each destination published once", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-restart-"))
    const filename = path.join(dir, "herald.db")
    const runtime = ManagedRuntime.make(W.storesLayer({ _tag: "Sqlite", filename }))
    const workers: Array<W.WorkerProcess> = []
    const spawn = (i: number) => {
      const w = W.spawnWorker({
        database: { file: filename },
        journal: path.join(dir, `worker-${i}.jsonl`),
        args: ["--poll-ms", "200"],
        latencyMs: 1_500,
        env: { HERALD_DATA_DIR: dir, HERALD_DATABASE_URL: "", DATABASE_URL: "" }
      })
      workers.push(w)
      return w
    }
    const started = async (w: W.WorkerProcess) => {
      const deadline = Date.now() + 60_000
      while (Date.now() < deadline && !w.output().includes("Dispatcher started")) await W.sleep(100)
      if (!w.output().includes("Dispatcher started")) throw new Error(`the worker did not start:\n${w.output()}`)
    }
    try {
      const seeded = await runtime.runPromise(
        W.seed({ posts: 10, platforms: ["x", "telegram"], dueAt: DateTime.unsafeMake(Date.now() + 3_600_000) })
      )
      const first = spawn(0)
      await started(first)
      await runtime.runPromise(Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE destinations SET due_at = ${Date.now()} WHERE status = 'queued'`
      ))
      // Killed while its 20 publishes are in flight (each takes 1.5 s).
      const deadline = Date.now() + 30_000
      while (Date.now() < deadline) {
        const counts = await runtime.runPromise(W.statusCounts)
        if ((counts.publishing ?? 0) > 0) break
        await W.sleep(50)
      }
      await W.sleep(700 + Math.floor(Math.random() * 1_000))
      first.child.kill("SIGKILL")
      await first.exited
      const second = spawn(1)
      await started(second)
      const settleBy = Date.now() + 90_000
      let counts: Record<string, number> = {}
      while (Date.now() < settleBy) {
        counts = await runtime.runPromise(W.statusCounts)
        if ((counts.queued ?? 0) === 0 && (counts.publishing ?? 0) === 0) break
        await W.sleep(200)
      }
      const rows = await runtime.runPromise(W.destinations)
      const ledger = Sandbox.readLedger(path.join(dir, "sandbox-ledger.jsonl"))
      console.info(
        `[sandbox restart] first worker published ${W.readJournal(first.journal).length} before the kill; ` +
          `${JSON.stringify(counts)}; ledger ${ledger.length} entries`
      )
      expect(counts).toEqual({ published: seeded.destinations })
      expect(rows.filter((r) => r.error === Dispatcher.unknownOutcomeMessage)).toEqual([])
      for (const row of rows) {
        expect(ledger.filter((e) => e.destinationId === row.id).map((e) => e.platformPostId)).toEqual([
          row.platform_post_id
        ])
      }
    } finally {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGTERM")
      await Promise.all(workers.map((w) => w.exited))
      await runtime.dispose()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
