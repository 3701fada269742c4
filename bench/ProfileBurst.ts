/**
 * 10,000 destinations (N) due in the same instant under `Dispatcher.run` in this process (SQLite, the
 * zero-latency sandbox), printing wall and CPU time from the due instant to the last publish start and
 * to the last recorded outcome. CPU time of this process holds on a shared machine where wall time does
 * not; not part of `npm run bench`:
 *
 *   node --conditions=herald-source --import tsx bench/ProfileBurst.ts
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as W from "../test/engine/WorkerProcesses.js"
const count = Number(process.env.N ?? "10000")
const tmp = fs.mkdtempSync(path.join("/tmp/dispatch", "burst-"))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
let sent = 0
let cpuAtLastSend = 0
let wallAtLastSend = 0
const runtime = ManagedRuntime.make(Layer.mergeAll(
  W.storesLayer({ _tag: "Sqlite", filename: path.join(tmp, "b.db") }),
  Registry.layerSandbox({ onSend: () => Effect.sync(() => { sent++; cpuAtLastSend = cpuNow(); wallAtLastSend = performance.now() }) }),
  Logger.minimumLogLevel(LogLevel.Warning)
))
try {
  await runtime.runPromise(W.seed({ posts: count, platforms: ["telegram"], dueAt: DateTime.unsafeMake(Date.now() + 86_400_000) }))
  const fiber = runtime.runFork(Dispatcher.run({ workerId: "burst" }))
  await sleep(300)
  const due = Date.now() + 1000
  await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE destinations SET due_at = ${due} WHERE status = 'queued'`))
  while (Date.now() < due) await sleep(1)
  const cpu0 = cpuNow(); const wall0 = performance.now()
  const counts = async () => runtime.runPromise(W.statusCounts)
  while (sent < count) await sleep(20)
  while (((await counts()) as Record<string, number>).published !== count) await sleep(20)
  const cpuAll = cpuNow() - cpu0; const wallAll = performance.now() - wall0
  await runtime.runPromise(Fiber.interrupt(fiber))
  console.log(`last start: ${(wallAtLastSend - wall0).toFixed(0)} ms wall, ${(cpuAtLastSend - cpu0).toFixed(0)} ms CPU; all recorded: ${wallAll.toFixed(0)} ms wall, ${cpuAll.toFixed(0)} ms CPU; load ${os.loadavg()[0].toFixed(1)}`)
} finally { await runtime.dispose(); fs.rmSync(tmp, { recursive: true, force: true }) }
