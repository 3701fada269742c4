/**
 * Profiles the dispatcher draining a backlog in this process, through the zero-latency sandbox:
 *
 *   node --conditions=herald-source --import tsx bench/ProfileDispatch.ts
 *   STORE=pg N=3000 BATCH=500 PROFILE=/tmp/pg.cpuprofile node --conditions=herald-source --import tsx bench/ProfileDispatch.ts
 *
 * N destinations (default 3000) are seeded, made due at once, then drained by rounds back to back with
 * the adaptive claim size. Only the drain is profiled (inspector), written to PROFILE when set; open
 * it in Chrome DevTools or summarise the self time per function. REPEAT=k drains k backlogs in the
 * same process and reports only the last (a warm dispatcher); HEAP=file writes a sampling heap
 * profile of that drain. THREADS=1 prints the CPU time of each of this process's threads over that
 * drain (Linux /proc): the main thread's against V8's helper threads (GC). Not part of `npm run bench`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as ClaimSize from "@herald/core/publishing/ClaimSize"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase } from "../packages/adapters/test/support/TestDatabases.js"
import * as W from "../test/engine/WorkerProcesses.js"

const count = Number(process.env.N ?? "3000")
const store = process.env.STORE ?? "sqlite"
const batchSize = Number(process.env.BATCH ?? "500")
const worker: Dispatcher.Options = { workerId: `profile:${process.pid}`, batchSize }

// One log line per publish is part of the cost measured, but not of the terminal's: it goes nowhere.
const runtimeOf = (database: Parameters<typeof W.storesLayer>[0]) =>
  ManagedRuntime.make(Layer.mergeAll(
    W.storesLayer(database),
    Registry.layerSandbox({}),
    process.env.LOGS === "1" ? Layer.empty : Logger.minimumLogLevel(LogLevel.Warning)
  ))

/** CPU ticks (1/100 s) per thread of this process, from /proc (Linux). */
const threadTimes = () => {
  const times = new Map<string, { name: string; ticks: number }>()
  for (const tid of fs.readdirSync("/proc/self/task")) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    times.set(tid, { name, ticks: Number(fields[11]) + Number(fields[12]) })
  }
  return times
}

const drain = async (database: Parameters<typeof W.storesLayer>[0]) => {
  const runtime = runtimeOf(database)
  try {
    // REPEAT=k drains k backlogs in this process and reports (and profiles) only the last: a warm dispatcher.
    for (let repeat = Number(process.env.REPEAT ?? "1"); repeat > 0; repeat--) await drainOnce(runtime, repeat === 1)
  } finally {
    await runtime.dispose()
  }
}

const drainOnce = async (runtime: ReturnType<typeof runtimeOf>, last: boolean) => {
  {
    await runtime.runPromise(
      W.seed({ posts: count, platforms: ["telegram"], dueAt: DateTime.unsafeMake(Date.now() + 86_400_000) })
    )
    await runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE destinations SET due_at = ${Date.now()} WHERE status = 'queued'`
      )
    )
    const session = new Session()
    session.connect()
    if (last && process.env.PROFILE !== undefined) {
      await session.post("Profiler.enable")
      await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.PROFILE_US ?? "1000") })
      await session.post("Profiler.start")
    }
    // HEAP=file: a sampling heap profile of the same drain (every allocation kept, sampled every 4 KiB).
    if (last && process.env.HEAP !== undefined) {
      await session.post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
    }
    const threadsBefore = threadTimes()
    const started = performance.now()
    const cpu = process.cpuUsage()
    let total = 0
    let limit = Math.min(50, batchSize)
    while (true) {
      const round = await runtime.runPromise(Dispatcher.runOnce(worker, limit))
      limit = ClaimSize.next(round.limit, round.claimed, { min: Math.min(50, batchSize), max: batchSize })
      total += round.claimed
      if (round.claimed === 0) break
    }
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    const threadsAfter = threadTimes()
    if (last && process.env.THREADS === "1") {
      for (const [tid, t] of threadsAfter) {
        const before = threadsBefore.get(tid)
        const d = t.ticks - (before?.ticks ?? 0)
        if (d > 0) console.log(`thread ${tid} ${t.name}: ${d * 10} ms`)
      }
    }
    if (last && process.env.PROFILE !== undefined) {
      const { profile } = await session.post("Profiler.stop")
      fs.writeFileSync(process.env.PROFILE, JSON.stringify(profile))
    }
    if (last && process.env.HEAP !== undefined) {
      const { profile } = await session.post("HeapProfiler.stopSampling")
      fs.writeFileSync(process.env.HEAP, JSON.stringify(profile))
    }
    session.disconnect()
    if (!last) return
    const counts = await runtime.runPromise(W.statusCounts)
    // CPU time of this process says more than wall time on a busy machine.
    const cpuMs = (used.user + used.system) / 1000
    console.log(
      `${store}: ${total} destinations in ${seconds.toFixed(2)} s = ${(total / seconds).toFixed(0)}/s, ` +
        `${(cpuMs / total).toFixed(3)} ms CPU each`,
      counts
    )
  }
}

if (store === "sqlite") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-profile-"))
  try {
    await drain({ _tag: "Sqlite", filename: path.join(dir, "profile.db") })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
} else {
  const db = await Effect.runPromise(createFreshPgDatabase())
  try {
    await drain({ _tag: "Postgres", url: db.url, maxConnections: 10 })
  } finally {
    await Effect.runPromise(db.drop)
  }
}
