/**
 * The posting queue's use cases: set an organization's queue (operators through `herald queue set`,
 * host applications in-process; not through the API), read it with a forecast of where the next
 * posts would land (`GET /queue`), and allocate the next free opening inside the transaction that
 * creates a `use_queue` post (the `QueueAllocator` of `Posts`).
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { type OrganizationId, QueueId } from "../kernel/Ids.js"
import { isIanaZone, type QueueAllocation, QueueAllocator } from "../posts/Posts.js"
import { Queue, type QueueOpening } from "./Queue.js"
import * as QueuePolicy from "./QueuePolicy.js"
import { QueueStore } from "./QueueStore.js"

export const defaultForecast = 10
export const maxForecast = 50

export interface SetQueueInput {
  readonly organizationId: OrganizationId
  readonly timezone: string
  /** The openings, or the slot notation `"mon-fri 09:00,12:30;sat 10:00"`. */
  readonly openings: ReadonlyArray<QueueOpening> | string
}

/**
 * Creates or replaces the organization's queue. Fails with `invalid_timezone` for a zone that is not
 * IANA and `validation_error` for slots that do not parse. Openings already taken stay taken.
 */
export const setQueue = (
  input: SetQueueInput
): Effect.Effect<Queue, DomainError | PersistenceError, QueueStore | IdGenerator> =>
  Effect.gen(function*() {
    if (!isIanaZone(input.timezone)) {
      return yield* DomainError.fail("invalid_timezone", `'${input.timezone}' is not an IANA time zone`, {
        timezone: input.timezone
      })
    }
    let openings: ReadonlyArray<QueueOpening>
    if (typeof input.openings === "string") {
      const parsed = QueuePolicy.parseSlots(input.openings)
      if (Either.isLeft(parsed)) {
        return yield* DomainError.fail("validation_error", `Invalid slots: ${parsed.left}`, {
          validation_errors: [{ path: "slots", message: parsed.left }]
        })
      }
      openings = parsed.right
    } else {
      openings = input.openings
    }
    const store = yield* QueueStore
    const existing = yield* store.find(input.organizationId)
    const queue = new Queue({
      id: Option.isSome(existing) ? existing.value.id : QueueId.make(yield* (yield* IdGenerator).uuid),
      organizationId: input.organizationId,
      timezone: input.timezone,
      openings,
      createdAt: Option.isSome(existing) ? existing.value.createdAt : yield* DateTime.now
    })
    yield* store.save(queue)
    return queue
  }).pipe(Effect.withSpan("Queues.setQueue"))

/** One forecast position: where the n-th next `use_queue` post would land. */
export interface ForecastEntry {
  readonly position: number
  readonly occurrence: QueuePolicy.Occurrence
  /** The same instant in the queue's zone. */
  readonly local: DateTime.Zoned
}

export interface QueueView {
  readonly queue: Option.Option<Queue>
  readonly forecast: ReadonlyArray<ForecastEntry>
  readonly now: DateTime.Utc
}

/** The organization's queue (if any) and the next `count` free openings after now. */
export const show = (
  organizationId: OrganizationId,
  count: number = defaultForecast
): Effect.Effect<QueueView, PersistenceError, QueueStore> =>
  Effect.gen(function*() {
    const store = yield* QueueStore
    const now = yield* DateTime.now
    const queue = yield* store.find(organizationId)
    if (Option.isNone(queue)) return { queue, forecast: [], now }
    const zone = DateTime.zoneUnsafeMakeNamed(queue.value.timezone)
    const until = DateTime.add(now, { days: QueuePolicy.horizonDays })
    const taken = new Set(yield* store.taken(organizationId, now, until))
    const free = QueuePolicy.nextFree(zone, queue.value.openings, now, taken, count)
    return {
      queue,
      now,
      forecast: free.map((occurrence, i) => ({
        position: i + 1,
        occurrence,
        local: DateTime.setZone(occurrence.at, zone)
      }))
    }
  }).pipe(Effect.withSpan("Queues.show"))

/**
 * Takes the earliest free opening after `now` for `postId`. Must run inside the transaction that
 * inserts the post: the claim then commits or rolls back with it, and a concurrent claim of the same
 * opening makes this one move on to the next (`QueueStore.claim`).
 */
export const allocate = (
  organizationId: OrganizationId,
  now: DateTime.Utc,
  postId: Parameters<QueueStore["Type"]["claim"]>[2]
): Effect.Effect<QueueAllocation, PersistenceError, QueueStore> =>
  Effect.gen(function*() {
    const store = yield* QueueStore
    const queue = yield* store.find(organizationId)
    if (Option.isNone(queue)) return { _tag: "Missing" } as const
    if (queue.value.openings.length === 0) return { _tag: "Empty" } as const
    const zone = DateTime.zoneUnsafeMakeNamed(queue.value.timezone)
    const until = DateTime.add(now, { days: QueuePolicy.horizonDays })
    const taken = new Set(yield* store.taken(organizationId, now, until))
    for (const occurrence of QueuePolicy.freeOccurrences(zone, queue.value.openings, now, taken)) {
      if (yield* store.claim(organizationId, occurrence.at, postId)) return { _tag: "Slot", at: occurrence.at } as const
    }
    return { _tag: "Full" } as const
  }).pipe(Effect.withSpan("Queues.allocate", { captureStackTrace: false }))

export interface ClaimPruneOptions {
  /** How long a claim is kept after its instant; default one day. */
  readonly retention?: Duration.DurationInput
  readonly batchSize?: number
  readonly maxBatches?: number
}

export interface ClaimPruneSummary {
  readonly claims: number
  readonly before: DateTime.Utc
}

/**
 * Removes the claims of openings that have passed: allocation only ever looks after now, so a past
 * claim is never read again. Works in short batches, several processes at once being harmless.
 */
export const pruneClaims = (options: ClaimPruneOptions = {}) =>
  Effect.gen(function*() {
    const store = yield* QueueStore
    const before = DateTime.subtractDuration(
      yield* DateTime.now,
      Duration.decode(options.retention ?? Duration.days(1))
    )
    const limit = Math.max(1, Math.trunc(options.batchSize ?? 500))
    const maxBatches = Math.max(1, Math.trunc(options.maxBatches ?? 100))
    let claims = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const removed = yield* store.pruneClaims(before, limit)
      claims += removed
      if (removed < limit) break
    }
    const summary: ClaimPruneSummary = { claims, before }
    return summary
  }).pipe(Effect.withSpan("Queues.pruneClaims"))

/** `Posts`' queue allocator over a `QueueStore`. */
export const allocatorLayer: Layer.Layer<QueueAllocator, never, QueueStore> = Layer.effect(
  QueueAllocator,
  Effect.map(QueueStore, (store) =>
    QueueAllocator.of({
      allocate: (organizationId, now, postId) =>
        allocate(organizationId, now, postId).pipe(Effect.provideService(QueueStore, store))
    }))
)
