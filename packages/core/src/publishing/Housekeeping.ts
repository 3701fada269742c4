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
import * as MediaLibrary from "../media/MediaLibrary.js"
import * as Webhooks from "../webhooks/Webhooks.js"
import * as Queues from "../workflow/Queues.js"

/** How often a process sweeps: every 10 minutes, give or take a fifth. */
export const defaultInterval: Duration.Duration = Duration.minutes(10)

export interface Options {
  /** The time between sweeps (each one jittered by ±20 %); default 10 minutes. */
  readonly every?: Duration.DurationInput
  readonly media?: MediaLibrary.SweepOptions
  readonly webhooks?: Webhooks.HistoryOptions
  readonly queue?: Queues.ClaimPruneOptions
  readonly idempotency?: IdempotentRequests.PruneOptions
}

export interface Summary {
  /** None when that sweep failed (it was logged). */
  readonly media: MediaLibrary.SweepSummary | undefined
  readonly webhooks: Webhooks.HistorySummary | undefined
  readonly queue: Queues.ClaimPruneSummary | undefined
  readonly idempotency: IdempotentRequests.PruneSummary | undefined
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
              `${formatInstant(s.createdBefore)})` + (s.blobsLeft > 0 ? `; ${s.blobsLeft} files could not be removed` : "")
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
          ? Effect.logInfo(`Housekeeping: pruned ${s.claims} queue claims of openings before ${formatInstant(s.before)}`)
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
    const summary: Summary = { media, webhooks, queue, idempotency }
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
