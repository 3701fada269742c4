/**
 * Housekeeping: what would otherwise grow without bound, swept on a timer in every process that runs
 * the webhook deliverer (`herald serve`, `herald worker`).
 *
 * - Uploads never completed (`MediaLibrary.sweepAbandoned`): media still `pending_upload` 24 hours
 *   after their upload URL expired, with their bytes.
 * - Webhook delivery history (`Webhooks.pruneHistory`): finished deliveries and their attempts after
 *   30 days, or beyond 10,000 per webhook.
 * - Queue claims (`Queues.pruneClaims`): claims of openings more than a day in the past.
 * - Idempotency keys (`IdempotentRequests.prune`): keys and their recorded answers 24 hours after
 *   their first request (they already count as absent then).
 * - Events (`pruneEvents`): the outbox after 30 days, except events a pending webhook delivery still
 *   has to send. Nothing the API answers reads an event: deliveries and attempts carry their event's
 *   id and type themselves, and the SDK's event subscription reads only the last seconds.
 * - Usage counters (`pruneCounters`): windows that ended more than a day ago (the posting allowances'
 *   minutes, hours and days, upload budgets, past months of AI credits, the settlement lock rows).
 *   Every reader asks for the window that contains now, so an ended window is never read again;
 *   counters meant to last (stored bytes, the circuit breaker's ring) have a window end far ahead.
 * - Analytics change rows (`foldRollups`, `RollupChanges`): a store whose writers append changes beside its aggregates
 *   (Postgres) has them moved into the aggregates, so they do not pile up between reads of analytics
 *   and `/me`, which otherwise fold them, an organization at a time.
 *
 * All work in short batches, take the time from `Clock`, and are safe with several processes on one
 * database (each row is removed by one of them). A sweep that fails is logged and tried again at the
 * next round.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as IdempotentRequests from "../access/IdempotentRequests.js"
import { UsageCounters } from "../access/UsageCounters.js"
import type { PersistenceError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import * as MediaLibrary from "../media/MediaLibrary.js"
import * as Webhooks from "../webhooks/Webhooks.js"
import * as Queues from "../workflow/Queues.js"
import { RollupChanges } from "./RollupChanges.js"

/** How often a process sweeps: every 10 minutes, give or take a fifth. */
export const defaultInterval: Duration.Duration = Duration.minutes(10)

/** How long a kind of row is kept, and how a pass removes it: batches of `batchSize`, at most `maxBatches`. */
export interface RetentionOptions {
  /** Rows older than this (events: created; counters: window ended) go. */
  readonly retention?: Duration.DurationInput
  /** Rows removed per statement (default 500): each is one short transaction. */
  readonly batchSize?: number
  /** Statements per pass (default 100); what is left goes in the next pass. */
  readonly maxBatches?: number
}

export const defaultEventRetention: Duration.Duration = Duration.days(30)
export const defaultCounterRetention: Duration.Duration = Duration.days(1)
export const defaultBatchSize = 500
export const defaultMaxBatches = 100

export interface RetentionSummary {
  /** Rows removed by this pass. */
  readonly removed: number
  /** Rows older than this instant were past the retention. */
  readonly before: DateTime.Utc
  /** True when the pass stopped at `maxBatches` with rows possibly left. */
  readonly more: boolean
}

/**
 * Calls `batch(before, size)` until it removes fewer than `size` rows or `maxBatches` ran, yielding
 * between batches so other work (requests, the dispatcher) runs in between on a single-threaded store.
 */
const inBatches = (
  options: RetentionOptions | undefined,
  fallback: Duration.Duration,
  batch: (before: DateTime.Utc, size: number) => Effect.Effect<number, PersistenceError>
) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const before = DateTime.subtractDuration(now, Duration.decode(options?.retention ?? fallback))
    const size = Math.max(1, Math.trunc(options?.batchSize ?? defaultBatchSize))
    const maxBatches = Math.max(1, Math.trunc(options?.maxBatches ?? defaultMaxBatches))
    let removed = 0
    for (let i = 0; i < maxBatches; i++) {
      const n = yield* batch(before, size)
      removed += n
      if (n < size) return { removed, before, more: false } satisfies RetentionSummary
      yield* Effect.yieldNow()
    }
    return { removed, before, more: true } satisfies RetentionSummary
  })

/** Removes events past the retention (default 30 days) that no pending webhook delivery needs. */
export const pruneEvents = (options?: RetentionOptions) =>
  Effect.flatMap(EventStore, (store) => inBatches(options, defaultEventRetention, store.prune)).pipe(
    Effect.withSpan("Housekeeping.pruneEvents")
  )

/** Removes usage-counter windows that ended longer ago than the retention (default a day). */
export const pruneCounters = (options?: RetentionOptions) =>
  Effect.flatMap(UsageCounters, (counters) => inBatches(options, defaultCounterRetention, counters.purge)).pipe(
    Effect.withSpan("Housekeeping.pruneCounters")
  )

/** How a pass folds analytics change rows: `batchSize` rows per statement (default 500), at most `maxBatches`. */
export interface FoldOptions {
  readonly batchSize?: number
  readonly maxBatches?: number
}

export interface FoldSummary {
  /** Change rows moved into the aggregates by this pass. */
  readonly folded: number
  /** True when the pass stopped at `maxBatches` with rows possibly left. */
  readonly more: boolean
}

/**
 * Moves the analytics change rows into the aggregates in batches (each its own short statement),
 * yielding between them; answers do not change.
 */
export const foldRollups = (options?: FoldOptions) =>
  Effect.gen(function*() {
    const changes = yield* RollupChanges
    const size = Math.max(1, Math.trunc(options?.batchSize ?? defaultBatchSize))
    const maxBatches = Math.max(1, Math.trunc(options?.maxBatches ?? defaultMaxBatches))
    let folded = 0
    for (let i = 0; i < maxBatches; i++) {
      const n = yield* changes.fold(size)
      folded += n
      // Up to `size` rows of each kind of change per batch: fewer in all means every kind ran out.
      if (n < size) return { folded, more: false } satisfies FoldSummary
      yield* Effect.yieldNow()
    }
    return { folded, more: true } satisfies FoldSummary
  }).pipe(Effect.withSpan("Housekeeping.foldRollups"))

export interface Options {
  /** The time between sweeps (each one jittered by ±20 %); default 10 minutes. */
  readonly every?: Duration.DurationInput
  readonly media?: MediaLibrary.SweepOptions
  readonly webhooks?: Webhooks.HistoryOptions
  readonly queue?: Queues.ClaimPruneOptions
  readonly idempotency?: IdempotentRequests.PruneOptions
  readonly events?: RetentionOptions
  readonly counters?: RetentionOptions
  readonly rollups?: FoldOptions
}

export interface Summary {
  /** None when that sweep failed (it was logged). */
  readonly media: MediaLibrary.SweepSummary | undefined
  readonly webhooks: Webhooks.HistorySummary | undefined
  readonly queue: Queues.ClaimPruneSummary | undefined
  readonly idempotency: IdempotentRequests.PruneSummary | undefined
  readonly events: RetentionSummary | undefined
  readonly counters: RetentionSummary | undefined
  readonly rollups: FoldSummary | undefined
}

const formatInstant = (instant: DateTime.Utc) => DateTime.formatIso(instant)

/** One round of the sweeps; logs a line for each that removed something; never fails. */
export const runOnce = (options: Options = {}) =>
  Effect.gen(function*() {
    const media = yield* MediaLibrary.sweepAbandoned(options.media).pipe(
      Effect.tap((s) =>
        s.media > 0
          ? Effect.logInfo(
            `Housekeeping: removed ${s.media} media never completed (pending_upload, created before ` +
              `${formatInstant(s.createdBefore)})` +
              (s.blobsLeft > 0 ? `; ${s.blobsLeft} files could not be removed` : "")
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: the sweep of abandoned uploads failed", cause).pipe(Effect.as(undefined))
      )
    )
    const webhooks = yield* Webhooks.pruneHistory(options.webhooks).pipe(
      Effect.tap((s) =>
        s.deliveries > 0
          ? Effect.logInfo(
            `Housekeeping: pruned ${s.deliveries} webhook deliveries with ${s.attempts} attempts (finished before ` +
              `${formatInstant(s.finishedBefore)}, or beyond ` +
              `${options.webhooks?.maxPerWebhook ?? Webhooks.defaultMaxPerWebhook} per webhook)`
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: pruning the webhook delivery history failed", cause).pipe(Effect.as(undefined))
      )
    )
    const queue = yield* Queues.pruneClaims(options.queue).pipe(
      Effect.tap((s) =>
        s.claims > 0
          ? Effect.logInfo(
            `Housekeeping: pruned ${s.claims} queue claims of openings before ${formatInstant(s.before)}`
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: pruning past queue claims failed", cause).pipe(Effect.as(undefined))
      )
    )
    const idempotency = yield* IdempotentRequests.prune(options.idempotency).pipe(
      Effect.tap((s) =>
        s.keys > 0
          ? Effect.logInfo(`Housekeeping: pruned ${s.keys} idempotency keys expired before ${formatInstant(s.before)}`)
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: pruning expired idempotency keys failed", cause).pipe(Effect.as(undefined))
      )
    )
    const events = yield* pruneEvents(options.events).pipe(
      Effect.tap((s) =>
        s.removed > 0
          ? Effect.logInfo(
            `Housekeeping: pruned ${s.removed} events created before ${formatInstant(s.before)}` +
              (s.more ? " (more left for the next round)" : "")
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: pruning old events failed", cause).pipe(Effect.as(undefined))
      )
    )
    const counters = yield* pruneCounters(options.counters).pipe(
      Effect.tap((s) =>
        s.removed > 0
          ? Effect.logInfo(
            `Housekeeping: pruned ${s.removed} usage counter windows ended before ${formatInstant(s.before)}` +
              (s.more ? " (more left for the next round)" : "")
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: pruning ended usage counter windows failed", cause).pipe(Effect.as(undefined))
      )
    )
    const rollups = yield* foldRollups(options.rollups).pipe(
      Effect.tap((s) =>
        s.folded > 0
          ? Effect.logInfo(
            `Housekeeping: folded ${s.folded} analytics change rows into the rollups` +
              (s.more ? " (more left for the next round)" : "")
          )
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Housekeeping: folding analytics change rows failed", cause).pipe(Effect.as(undefined))
      )
    )
    const summary: Summary = { media, webhooks, queue, idempotency, events, counters, rollups }
    return summary
  }).pipe(Effect.withSpan("Housekeeping.runOnce"))

/** `base` times a random factor in [0.8, 1.2). */
const jittered = (base: Duration.Duration) =>
  Effect.map(Random.nextRange(0.8, 1.2), (f) => Duration.millis(Math.round(Duration.toMillis(base) * f)))

/**
 * Sweeps forever: the first round at a random moment within the first interval (so processes started
 * together do not sweep together), then one every interval, jittered.
 */
export const run = (options: Options = {}) =>
  Effect.gen(function*() {
    const every = Duration.decode(options.every ?? defaultInterval)
    yield* Effect.sleep(Duration.millis(Math.round(Duration.toMillis(every) * (yield* Random.next))))
    while (true) {
      yield* runOnce(options)
      yield* Effect.sleep(yield* jittered(every))
    }
  }).pipe(Effect.withSpan("Housekeeping.run"))
