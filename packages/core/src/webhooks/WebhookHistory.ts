/**
 * Housekeeping of delivery history: finished deliveries and their attempts pruned after the
 * retention, in bounded batches, a recently active webhook keeping its newest ones.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { WebhookStore } from "./WebhookStore.js"
import { WebhookUrlGuard } from "./WebhookSubscriptions.js"

/** How long a finished delivery (and its attempts) is kept after it finished: 30 days. */
export const defaultRetention: Duration.Duration = Duration.days(30)

/** Finished deliveries kept per webhook at most (the most recently finished). */
export const defaultMaxPerWebhook = 10_000

export interface HistoryOptions {
  /** Finished deliveries older than this go; default 30 days. */
  readonly retention?: Duration.DurationInput
  /** A webhook keeps at most this many finished deliveries; default 10,000. */
  readonly maxPerWebhook?: number
  /**
   * The cap is checked for webhooks with a delivery attempt within this window (others cannot have
   * grown); default 1 day, far longer than the sweep interval.
   */
  readonly activeWithin?: Duration.DurationInput
  /** Deliveries deleted per transaction; default 500. */
  readonly batchSize?: number
  /** Transactions at most per sweep (the next sweep goes on); default 100. */
  readonly maxBatches?: number
}

export interface HistorySummary {
  readonly deliveries: number
  readonly attempts: number
  /** Deliveries that finished before this instant were past the retention. */
  readonly finishedBefore: DateTime.Utc
}

/**
 * Prunes the delivery history (`GET /webhooks/{id}/deliveries`): finished deliveries, delivered or
 * dead, with their attempts, once they finished more than `retention` ago (30 days by default) or
 * once their webhook has more than `maxPerWebhook` finished ones (10,000 by default; the oldest
 * go). Pending deliveries, including those waiting for their next attempt, are never pruned, nor
 * are their attempts. Works in short batches; several processes may prune at once.
 */
export const pruneHistory = (options: HistoryOptions = {}) =>
  Effect.gen(function*() {
    const store = yield* WebhookStore
    const now = yield* DateTime.now
    const finishedBefore = DateTime.subtractDuration(now, Duration.decode(options.retention ?? defaultRetention))
    const activeSince = DateTime.subtractDuration(now, Duration.decode(options.activeWithin ?? Duration.days(1)))
    const keepPerSubscription = Math.max(0, Math.trunc(options.maxPerWebhook ?? defaultMaxPerWebhook))
    const limit = Math.max(1, Math.trunc(options.batchSize ?? 500))
    const maxBatches = Math.max(1, Math.trunc(options.maxBatches ?? 100))
    let deliveries = 0
    let attempts = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const pruned = yield* store.pruneDeliveries({ finishedBefore, keepPerSubscription, activeSince, limit })
      deliveries += pruned.deliveries
      attempts += pruned.attempts
      if (pruned.deliveries < limit) break
    }
    const summary: HistorySummary = { deliveries, attempts, finishedBefore }
    return summary
  }).pipe(Effect.withSpan("Webhooks.pruneHistory"))

export type WebhooksError = DomainError | PersistenceError

/** What the subscription use cases need besides the store. */
export type Requirements = WebhookStore | WebhookUrlGuard | IdGenerator | Crypto
