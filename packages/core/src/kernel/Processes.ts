/**
 * The process table: every `herald serve` and `herald worker` registers itself and heartbeats, so that a
 * process that died is noticed within seconds (its heartbeat goes stale) and any live process can take
 * over the destinations it was publishing (`Dispatcher`). Claims name their process (`leased_by` is the
 * process id). A process whose row was removed while it was only stalled registers again on its next
 * heartbeat; the claims it lost meanwhile stay fenced off.
 *
 * Liveness and leases are judged by one clock, the database's, not each process's: a process whose
 * clock runs 60 s ahead would otherwise see every other process's leases as expired and its heartbeat
 * as stale. Where the store has a clock of its own (Postgres: `clock_timestamp()`), each process
 * measures its offset from it before registering and again at every heartbeat, and the engine's loops
 * run under `Liveness.clock`, this process's clock corrected by that offset: heartbeats, claims, lease
 * expiries and the judgement of who is dead are then all database time. SQLite has no clock of its
 * own; its processes share one host, whose clock is the one clock.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as EngineMetrics from "./EngineMetrics.js"
import type { PersistenceError } from "./Errors.js"

export const ProcessKind = Schema.Literal("serve", "worker")
export type ProcessKind = typeof ProcessKind.Type

export class ProcessInfo extends Schema.Class<ProcessInfo>("ProcessInfo")({
  id: Schema.String,
  kind: ProcessKind,
  hostname: Schema.String,
  pid: Schema.Number,
  startedAt: Schema.DateTimeUtcFromSelf,
  lastHeartbeatAt: Schema.DateTimeUtcFromSelf
}) {}

/** How often a live process heartbeats. */
export const heartbeatInterval: Duration.Duration = Duration.seconds(5)

/**
 * A process whose last heartbeat is older than this is dead: four heartbeats missed. Its in-flight
 * destinations are taken over by the next sweep of any live process (every poll interval), so a killed
 * process's work is taken over at most 25 s after it died (its last heartbeat was up to 5 s old).
 */
export const deadAfter: Duration.Duration = Duration.seconds(20)

/**
 * When this process last heartbeat successfully (epoch ms), for the dispatcher: a process that cannot
 * heartbeat (cut off from the database) will soon be declared dead by the others and its claims taken
 * over, so it stops sending before that can happen.
 */
export class Liveness extends Context.Tag("@herald/core/Processes/Liveness")<Liveness, {
  /** Epoch ms by `clock`. */
  readonly lastBeatAt: Effect.Effect<number>
  /**
   * This process's clock corrected to the database's (the same clock where the store has none): run
   * the engine's loops under it (`Effect.withClock`) so that leases and heartbeats are database time.
   */
  readonly clock: Clock.Clock
  /** The last measured offset of the database's clock from this process's, in ms. */
  readonly offsetMillis: Effect.Effect<number>
}>() {}

export class ProcessStore extends Context.Tag("@herald/core/ProcessStore")<ProcessStore, {
  /** Inserts the process, or refreshes it when its id is already there. */
  readonly register: (process: ProcessInfo) => Effect.Effect<void, PersistenceError>
  /** Moves the heartbeat to `at`; false when the row is gone (another process declared this one dead). */
  readonly heartbeat: (id: string, at: DateTime.Utc) => Effect.Effect<boolean, PersistenceError>
  /**
   * The database's own clock, for processes to correct theirs by (Postgres: `clock_timestamp()`);
   * none where the store has no clock of its own (SQLite, whose processes share one host's clock).
   */
  readonly databaseTime: Effect.Effect<Option.Option<DateTime.Utc>, PersistenceError>
  readonly deregister: (id: string) => Effect.Effect<void, PersistenceError>
  readonly list: Effect.Effect<ReadonlyArray<ProcessInfo>, PersistenceError>
  /**
   * Removes the processes whose heartbeat is older than `staleBefore` and that hold no destination in
   * flight any more (their claims were taken over first); returns their ids.
   */
  readonly removeDead: (staleBefore: DateTime.Utc) => Effect.Effect<ReadonlyArray<string>, PersistenceError>
}>() {}

/**
 * A clock that reads `base` plus an offset that may change (sleeping is `base`'s): the process's clock
 * corrected to the database's.
 */
export const offsetClock = (base: Clock.Clock, offsetMillis: () => number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis() + offsetMillis(),
  currentTimeMillis: Effect.map(base.currentTimeMillis, (ms) => ms + offsetMillis()),
  unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos() + BigInt(Math.round(offsetMillis() * 1_000_000)),
  currentTimeNanos: Effect.map(base.currentTimeNanos, (ns) => ns + BigInt(Math.round(offsetMillis() * 1_000_000))),
  sleep: (duration) => base.sleep(duration)
})

/**
 * Registers this process, then heartbeats it every `every` in a fiber of the scope, and removes the
 * row when the scope closes (a graceful stop). A failed registration or heartbeat is logged; the next
 * heartbeat registers again when the row is missing. The offset from the database's clock is measured
 * before registering and at every heartbeat; heartbeats are written in database time. Returns the
 * process's `Liveness`.
 */
export const start = (
  process: { readonly id: string; readonly kind: ProcessKind; readonly hostname: string; readonly pid: number },
  every: Duration.DurationInput = heartbeatInterval
) =>
  Effect.gen(function*() {
    const store = yield* ProcessStore
    const base = yield* Effect.clock
    let offset = 0
    const clock = offsetClock(base, () => offset)
    // The database's time against the middle of the round trip that read it.
    const measure = Effect.gen(function*() {
      const before = yield* base.currentTimeMillis
      const database = yield* store.databaseTime
      const after = yield* base.currentTimeMillis
      if (Option.isSome(database)) offset = DateTime.toEpochMillis(database.value) - Math.round((before + after) / 2)
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Processes: reading the database's clock failed", cause)))
    const now = Effect.map(clock.currentTimeMillis, (ms) => DateTime.unsafeMake(ms))
    yield* measure
    if (Math.abs(offset) >= 5_000) {
      yield* Effect.logWarning(`Processes: this host's clock is ${offset} ms off the database's; using the database's`)
    }
    const startedAt = yield* now
    const info = (at: DateTime.Utc) => new ProcessInfo({ ...process, startedAt, lastHeartbeatAt: at })
    let lastBeat = Number.NEGATIVE_INFINITY
    yield* store.register(info(startedAt)).pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          lastBeat = startedAt.epochMillis
          EngineMetrics.heartbeatAt(lastBeat)
        })
      ),
      Effect.catchAllCause((cause) => Effect.logWarning("Processes: registering this process failed", cause))
    )
    yield* Effect.addFinalizer(() => Effect.ignore(store.deregister(process.id)))
    const beat = Effect.gen(function*() {
      yield* measure
      const at = yield* now
      const alive = yield* store.heartbeat(process.id, at)
      if (!alive) {
        yield* Effect.logWarning("Processes: this process was not registered (or was declared dead); registering")
        yield* store.register(info(at))
      }
      lastBeat = at.epochMillis
      EngineMetrics.heartbeats.record({ result: "ok" }, 1)
      EngineMetrics.heartbeatAt(lastBeat)
    }).pipe(Effect.catchAllCause((cause) =>
      Effect.zipRight(
        Effect.sync(() => EngineMetrics.heartbeats.record({ result: "failed" }, 1)),
        Effect.logWarning("Processes: heartbeat failed", cause)
      )
    ))
    yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(every)).pipe(Effect.delay(every)))
    return Liveness.of({ lastBeatAt: Effect.sync(() => lastBeat), clock, offsetMillis: Effect.sync(() => offset) })
  }).pipe(Effect.withSpan("Processes.start"))
