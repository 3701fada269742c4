/**
 * 10,000 destinations (N) due in the same instant under `Dispatcher.run` in this process (SQLite, the
 * zero-latency sandbox), printing wall and CPU time from the due instant to the last publish start and
 * to the last recorded outcome. CPU time of this process holds on a shared machine where wall time does
 * not; not part of `npm run bench`:
 *
 *   node --conditions=herald-source --import tsx bench/ProfileBurst.ts
 *   PROFILE=/tmp/burst.cpuprofile node --conditions=herald-source --import tsx bench/ProfileBurst.ts
 *   TIMELINE=/tmp/burst.txt SQL_TIMES=1 node --conditions=herald-source --import tsx bench/ProfileBurst.ts
 *
 * PROFILE: the inspector's CPU profile from the due instant to the last publish start (the start path;
 * recording that happens meanwhile is in it too). TIMELINE: one line per claim, recording and
 * transaction (queued, running, answered; ms after the due instant) and per 500 sends, to see what a
 * claim waits for. SQL_TIMES: time inside better-sqlite3 per statement up to the last start.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Registry from "@herald/adapters/platforms/Registry"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as W from "../test/engine/WorkerProcesses.js"
const count = Number(process.env.N ?? "10000")
fs.mkdirSync("/tmp/dispatch", { recursive: true })
const tmp = fs.mkdtempSync(path.join("/tmp/dispatch", "burst-"))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const cpuNow = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
let sent = 0
let cpuAtLastSend = 0
let wallAtLastSend = 0
let wall0 = 0
let measuring = false
const timeline: Array<string> = []
const since = () => (performance.now() - wall0).toFixed(1)
const note = (line: string) => {
  if (measuring && process.env.TIMELINE !== undefined) timeline.push(line)
}

// SQL_TIMES: better-sqlite3's prepare wrapped, each statement's run/all/get timed while measuring.
const sqlTimes = new Map<string, { n: number; ms: number }>()
if (process.env.SQL_TIMES === "1") {
  const Database = createRequire(path.resolve("packages/adapters/package.json"))("better-sqlite3")
  const prepare = Database.prototype.prepare
  Database.prototype.prepare = function(this: unknown, text: string) {
    const started = performance.now()
    const statement = prepare.call(this, text)
    const key = text.replace(/\s+/g, " ").replace(/\?(, \?)+/g, "?..").slice(0, 90)
    if (measuring) {
      const e = sqlTimes.get(`prepare: ${key}`) ?? { n: 0, ms: 0 }
      e.n++
      e.ms += performance.now() - started
      sqlTimes.set(`prepare: ${key}`, e)
    }
    for (const method of ["all", "run", "get"]) {
      const call = statement[method]
      statement[method] = function(this: unknown, ...args: Array<unknown>) {
        const t = performance.now()
        try {
          return call.apply(this, args)
        } finally {
          if (measuring) {
            const e = sqlTimes.get(key) ?? { n: 0, ms: 0 }
            e.n++
            e.ms += performance.now() - t
            sqlTimes.set(key, e)
          }
        }
      }
    }
    return statement
  }
}

const stores = W.storesLayer({ _tag: "Sqlite", filename: path.join(tmp, "b.db") })
let transactions = 0
const traced = Layer.mergeAll(
  Layer.effect(
    DispatchStore,
    Effect.map(DispatchStore, (d) =>
      DispatchStore.of({
        ...d,
        claimDue: (o) =>
          Effect.suspend(() => {
            const s = since()
            return Effect.tap(d.claimDue(o), (c) => note(`${s}-${since()} claimDue ${c.length} (sent ${sent})`))
          }),
        completeAll: (items) =>
          Effect.suspend(() => {
            const s = since()
            return Effect.tap(
              d.completeAll(items),
              () => note(`${s}-${since()} completeAll ${items.length} (sent ${sent})`)
            )
          })
      }))
  ),
  Layer.effect(
    Transactor,
    Effect.map(Transactor, (t) =>
      Transactor.of({
        ...t,
        withTransaction: (self) =>
          Effect.suspend(() => {
            const n = ++transactions
            const queued = since()
            let running = ""
            return Effect.tap(
              t.withTransaction(Effect.zipRight(
                Effect.sync(() => {
                  running = since()
                }),
                self
              )),
              () => note(`${queued} queued, ${running} running, ${since()} answered: transaction ${n}`)
            )
          })
      }))
  )
).pipe(Layer.provide(stores))
const runtime = ManagedRuntime.make(Layer.mergeAll(
  process.env.TIMELINE === undefined ? stores : Layer.merge(stores, traced),
  Registry.layerSandbox({
    onSend: () =>
      Effect.sync(() => {
        sent++
        cpuAtLastSend = cpuNow()
        wallAtLastSend = performance.now()
        if (sent % 500 === 0) note(`${since()} sent ${sent}`)
      })
  }),
  Logger.minimumLogLevel(LogLevel.Warning)
))
try {
  await runtime.runPromise(
    W.seed({ posts: count, platforms: ["telegram"], dueAt: DateTime.unsafeMake(Date.now() + 86_400_000) })
  )
  const fiber = runtime.runFork(Dispatcher.run({ workerId: "burst" }))
  await sleep(300)
  const due = Date.now() + 1000
  await runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE destinations SET due_at = ${due} WHERE status = 'queued'`)
  )
  const session = new Session()
  session.connect()
  if (process.env.PROFILE !== undefined) {
    await session.post("Profiler.enable")
    await session.post("Profiler.start")
  }
  while (Date.now() < due) await sleep(1)
  const cpu0 = cpuNow()
  wall0 = performance.now()
  measuring = true
  const counts = async () => runtime.runPromise(W.statusCounts)
  while (sent < count) await sleep(20)
  if (process.env.PROFILE !== undefined) {
    const { profile } = await session.post("Profiler.stop")
    fs.writeFileSync(process.env.PROFILE, JSON.stringify(profile))
  }
  session.disconnect()
  const statements = [...sqlTimes].sort((a, b) => b[1].ms - a[1].ms)
  while (((await counts()) as Record<string, number>).published !== count) await sleep(20)
  const cpuAll = cpuNow() - cpu0
  const wallAll = performance.now() - wall0
  measuring = false
  await runtime.runPromise(Fiber.interrupt(fiber))
  if (process.env.TIMELINE !== undefined) fs.writeFileSync(process.env.TIMELINE, timeline.join("\n") + "\n")
  for (const [text, { ms, n }] of statements.slice(0, 12)) console.log(`${ms.toFixed(0)} ms, ${n}x: ${text}`)
  console.log(
    `last start: ${(wallAtLastSend - wall0).toFixed(0)} ms wall, ${
      (cpuAtLastSend - cpu0).toFixed(0)
    } ms CPU; all recorded: ${wallAll.toFixed(0)} ms wall, ${cpuAll.toFixed(0)} ms CPU; load ${
      os.loadavg()[0].toFixed(1)
    }`
  )
} finally {
  await runtime.dispose()
  fs.rmSync(tmp, { recursive: true, force: true })
}
