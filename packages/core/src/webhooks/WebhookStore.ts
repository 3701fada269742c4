/**
 * Webhook subscriptions, their pending deliveries and the record of every attempt.
 *
 * Deliveries are created beside the events they carry, in the event's transaction (the SQL adapter's
 * `SqlEventFanout`); this port claims and completes them. A claim is per subscription: while one
 * process holds a subscription's lease no other process sends to it, so one target's deliveries go
 * out one at a time, in event order among those due.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { Event, EventType } from "./Event.js"
import type { OrganizationId, WebhookId } from "../kernel/Ids.js"
import type { DeliveryAttempt, WebhookDelivery, WebhookSubscription } from "./Webhook.js"

/** A subscription with what its deliveries last did. */
export interface WebhookRecord {
  readonly subscription: WebhookSubscription
  /** When the last delivery attempt (not a test) ended. */
  readonly lastDeliveryAt: Option.Option<DateTime.Utc>
  /** The receiver's HTTP status on that attempt; None when it never answered (or no attempt yet). */
  readonly lastStatus: Option.Option<number>
}

/** What PATCH may change. `isActive: true` also resets the failure counter. */
export interface WebhookPatch {
  readonly url?: string
  readonly events?: ReadonlyArray<EventType>
  /** None clears the label. */
  readonly name?: Option.Option<string>
  readonly isActive?: boolean
  readonly updatedAt: DateTime.Utc
}

/** One claimed delivery and the event it carries. `attempt` is the number of the attempt to make now. */
export interface ClaimedDelivery {
  readonly delivery: WebhookDelivery
  readonly event: Event
  readonly attempt: number
}

/** An exclusive, leased hold on one subscription and up to a few of its due deliveries, in event order. */
export interface SubscriptionClaim {
  readonly subscription: WebhookSubscription
  readonly leaseToken: string
  readonly leaseExpiresAt: DateTime.Utc
  readonly deliveries: ReadonlyArray<ClaimedDelivery>
}

/** How an attempt ended, as the store records it. */
export type DeliveryOutcome =
  | { readonly _tag: "Delivered" }
  /** Failed; attempt again at `at`. */
  | { readonly _tag: "Retry"; readonly at: DateTime.Utc }
  /** Failed, and it was the last attempt: the delivery is dead and counts as a failed delivery. */
  | { readonly _tag: "Dead" }

export type CompleteResult =
  /** The claim was lost (lease taken over, subscription deleted): nothing was written. */
  | { readonly _tag: "Lost" }
  /** Recorded; `isActive` is the subscription's state afterwards (false: stop sending to it). */
  | { readonly _tag: "Recorded"; readonly isActive: boolean }

/** What one pruning batch removed. */
export interface PruneResult {
  readonly deliveries: number
  readonly attempts: number
}

export interface PruneOptions {
  /** Finished deliveries (delivered or dead) that finished before this go, with their attempts. */
  readonly finishedBefore: DateTime.Utc
  /** A subscription keeps at most this many finished deliveries (the most recently finished)... */
  readonly keepPerSubscription: number
  /** ...checked for the subscriptions with a delivery attempt since this instant (the others did not grow). */
  readonly activeSince: DateTime.Utc
  /** Deliveries removed at most in this batch. */
  readonly limit: number
}

export class WebhookStore extends Context.Tag("@herald/core/webhooks/WebhookStore")<WebhookStore, {
  /**
   * Inserts the subscription unless the organization already has `limit` of them (then false). Two
   * concurrent inserts cannot both pass the limit.
   */
  readonly insert: (subscription: WebhookSubscription, limit: number) => Effect.Effect<boolean, PersistenceError>
  /** The organization's subscriptions, oldest first. */
  readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<WebhookRecord>, PersistenceError>
  readonly findById: (
    organizationId: OrganizationId,
    id: WebhookId
  ) => Effect.Effect<Option.Option<WebhookRecord>, PersistenceError>
  /**
   * Applies the patch. Turning a subscription off (or the deliverer disabling it) ends its pending
   * deliveries as dead; turning it on resets the counter. None when there is no such subscription.
   */
  readonly update: (
    organizationId: OrganizationId,
    id: WebhookId,
    patch: WebhookPatch
  ) => Effect.Effect<Option.Option<WebhookRecord>, PersistenceError>
  /** Deletes the subscription with its deliveries and their attempts. */
  readonly remove: (organizationId: OrganizationId, id: WebhookId) => Effect.Effect<boolean, PersistenceError>
  /** The subscription's recorded attempts, newest first. */
  readonly listAttempts: (
    organizationId: OrganizationId,
    id: WebhookId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<DeliveryAttempt>, PersistenceError>
  /** The subscription's deliveries, oldest event first (for tests and operators). */
  readonly listDeliveries: (id: WebhookId) => Effect.Effect<ReadonlyArray<WebhookDelivery>, PersistenceError>
  /**
   * Claims up to `subscriptions` active subscriptions that have due deliveries and no live lease
   * (Postgres: FOR UPDATE SKIP LOCKED), each with up to `perSubscription` of its due pending
   * deliveries in event order, under a fresh lease expiring after `leaseFor`.
   *
   * Shared out across organizations: with `perOrganization`, the claimer holds at most that many
   * subscriptions of one organization, counting the claims it already holds (`held`, per
   * organization); subscriptions are taken round-robin, an organization's k-th subscription (by its
   * earliest due delivery) ranking as k plus what the claimer already holds of it, ties by the
   * earliest due delivery. Without it, subscriptions are taken by their earliest due delivery.
   *
   * With `holder`, the claim names its process (`processes.id`), and a subscription whose claim names
   * a process that is not alive (no row in the process table, or a heartbeat older than
   * `holder.deadBefore`) is claimable at once, whatever its lease says: a killed process's claims are
   * taken over in seconds, not when their lease runs out.
   */
  readonly claimDue: (options: {
    readonly now: DateTime.Utc
    readonly subscriptions: number
    readonly perSubscription: number
    readonly leaseFor: Duration.DurationInput
    readonly holder?: { readonly processId: string; readonly deadBefore: DateTime.Utc }
    readonly perOrganization?: number
    readonly held?: ReadonlyMap<OrganizationId, number>
  }) => Effect.Effect<ReadonlyArray<SubscriptionClaim>, PersistenceError>
  /**
   * Records one attempt and its outcome, fenced by the claim: written only while the delivery is still
   * pending under this lease with the same attempt count. Updates the subscription's counter
   * (`WebhookActivity`): Delivered resets it, Dead counts one failed delivery (the 20th disables it).
   */
  readonly complete: (
    claim: SubscriptionClaim,
    delivery: ClaimedDelivery,
    outcome: DeliveryOutcome,
    attempt: DeliveryAttempt
  ) => Effect.Effect<CompleteResult, PersistenceError>
  /** Gives the subscription's lease back (fenced by its token); unsent claimed deliveries stay due. */
  readonly release: (claim: SubscriptionClaim) => Effect.Effect<void, PersistenceError>
  /** The earliest attempt due for an active subscription, to sleep until. */
  readonly nextDueAt: Effect.Effect<Option.Option<DateTime.Utc>, PersistenceError>
  /**
   * Housekeeping, one batch in one short transaction: deletes up to `limit` finished deliveries (with
   * their attempts) that finished before `finishedBefore` or are beyond a subscription's newest
   * `keepPerSubscription` finished ones. Pending deliveries (including those waiting for a retry) and
   * their attempts are never touched. Safe with several processes pruning at once.
   */
  readonly pruneDeliveries: (options: PruneOptions) => Effect.Effect<PruneResult, PersistenceError>
}>() {}
