/**
 * The process table: every `herald serve` and `herald worker` registers itself and heartbeats, so that a
 * process that died is noticed within seconds (its heartbeat goes stale) and any live process can take
 * over the destinations it was publishing (`Dispatcher`). Claims name their process (`leased_by` is the
 * process id). A process whose row was removed while it was only stalled registers again on its next
 * heartbeat; the claims it lost meanwhile stay fenced off.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type { PersistenceError } from "../kernel/Errors.js"

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
  readonly lastBeatAt: Effect.Effect<number>
}>() {}

export class ProcessStore extends Context.Tag("@herald/core/ProcessStore")<ProcessStore, {
  /** Inserts the process, or refreshes it when its id is already there. */
  readonly register: (process: ProcessInfo) => Effect.Effect<void, PersistenceError>
  /** Moves the heartbeat to `at`; false when the row is gone (another process declared this one dead). */
  readonly heartbeat: (id: string, at: DateTime.Utc) => Effect.Effect<boolean, PersistenceError>
  readonly deregister: (id: string) => Effect.Effect<void, PersistenceError>
  readonly list: Effect.Effect<ReadonlyArray<ProcessInfo>, PersistenceError>
  /**
   * Removes the processes whose heartbeat is older than `staleBefore` and that hold no destination in
   * flight any more (their claims were taken over first); returns their ids.
   */
  readonly removeDead: (staleBefore: DateTime.Utc) => Effect.Effect<ReadonlyArray<string>, PersistenceError>
}>() {}

/**
 * Registers this process, then heartbeats it every `every` in a fiber of the scope, and removes the
 * row when the scope closes (a graceful stop). A failed registration or heartbeat is logged; the next
 * heartbeat registers again when the row is missing. Returns the process's `Liveness`.
 */
export const start = (
  process: { readonly id: string; readonly kind: ProcessKind; readonly hostname: string; readonly pid: number },
  every: Duration.DurationInput = heartbeatInterval
) =>
  Effect.gen(function*() {
    const store = yield* ProcessStore
    const startedAt = yield* DateTime.now
    const info = (at: DateTime.Utc) => new ProcessInfo({ ...process, startedAt, lastHeartbeatAt: at })
    let lastBeat = Number.NEGATIVE_INFINITY
    yield* store.register(info(startedAt)).pipe(
      Effect.tap(() => Effect.sync(() => (lastBeat = startedAt.epochMillis))),
      Effect.catchAllCause((cause) => Effect.logWarning("Processes: registering this process failed", cause))
    )
    yield* Effect.addFinalizer(() => Effect.ignore(store.deregister(process.id)))
    const beat = Effect.gen(function*() {
      const now = yield* DateTime.now
      const alive = yield* store.heartbeat(process.id, now)
      if (!alive) {
        yield* Effect.logWarning("Processes: this process was not registered (or was declared dead); registering")
        yield* store.register(info(now))
      }
      lastBeat = now.epochMillis
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Processes: heartbeat failed", cause)))
    yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(every)).pipe(Effect.delay(every)))
    return Liveness.of({ lastBeatAt: Effect.sync(() => lastBeat) })
  }).pipe(Effect.withSpan("Processes.start"))
