import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Destination, Metrics } from "../domain/Destination.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { Platform } from "../domain/Platform.js"
import type { ResolvedPost } from "../platforms/Platforms.js"

/** An exclusive, short-leased hold on one published destination for one metrics fetch. */
export interface MetricsClaim {
  readonly destination: Destination
  /** The step of the schedule this fetch fulfils (0 for the first). */
  readonly step: number
  readonly leaseToken: string
}

/** What a fetch ended with, as the store records it. Nothing here touches the destination's status. */
export type MetricsCompletion =
  /** New counts; the schedule moves to `step`, due at `nextAt` (none: the schedule is over). */
  | {
    readonly _tag: "Fetched"
    readonly metrics: Metrics
    readonly fetchedAt: DateTime.Utc
    readonly step: number
    readonly nextAt: Option.Option<DateTime.Utc>
    /** The post's final id and URL, when the platform has just given them (`PlatformClient.resolvePost`). */
    readonly platformPost?: ResolvedPost
  }
  /** The fetch failed: the counts stay, the schedule moves on as after a fetch. */
  | {
    readonly _tag: "Skipped"
    readonly step: number
    readonly nextAt: Option.Option<DateTime.Utc>
    readonly platformPost?: ResolvedPost
  }
  /** Not fetched (the platform's rate limit): the same step, due again at `nextAt`. */
  | { readonly _tag: "Deferred"; readonly nextAt: DateTime.Utc }

export interface DueQuery {
  readonly platform: Platform
  readonly now: DateTime.Utc
  readonly limit: number
  /** The schedule's length: destinations with this many steps done are never claimed again. */
  readonly steps: number
  /** The first step's delay after publishing, for destinations never fetched. */
  readonly firstAfter: Duration.DurationInput
  readonly leaseFor: Duration.DurationInput
}

export class MetricsStore extends Context.Tag("@herald/core/analytics/MetricsStore")<MetricsStore, {
  /**
   * Claims up to `limit` published destinations of `platform` whose next fetch is due at `now`,
   * earliest first, exclusively across processes (Postgres: FOR UPDATE SKIP LOCKED). A claimed
   * destination is not due again until its lease ends.
   */
  readonly claimDue: (query: DueQuery) => Effect.Effect<ReadonlyArray<MetricsClaim>, PersistenceError>
  /** Records the outcome, fenced by the claim's token. False: the claim was lost, nothing written. */
  readonly complete: (claim: MetricsClaim, completion: MetricsCompletion) => Effect.Effect<boolean, PersistenceError>
  /**
   * After a rate limit: every destination of `platform` that would fall due before `until` becomes due
   * at `until` instead (a claim in flight still records its own outcome). Returns how many moved.
   */
  readonly deferPlatform: (query: {
    readonly platform: Platform
    readonly until: DateTime.Utc
    readonly steps: number
    readonly firstAfter: Duration.DurationInput
  }) => Effect.Effect<number, PersistenceError>
}>() {}
