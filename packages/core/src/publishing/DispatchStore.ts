import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Destination } from "../domain/Destination.js"
import type { PersistenceError } from "../kernel/Errors.js"

/**
 * An exclusive, leased hold on one destination for one publish attempt. The destination is already
 * `publishing` with `attempts` counting this attempt.
 */
export interface Claim {
  readonly destination: Destination
  readonly leaseToken: string
  readonly leaseExpiresAt: DateTime.Utc
  /** When this attempt was claimed (kept when another process takes the claim over). */
  readonly claimedAt?: DateTime.Utc
}

/** What a publish attempt ended with, as the store records it. */
export type Completion =
  | {
    readonly _tag: "Published"
    readonly platformPostId: string
    readonly platformPostUrl: string
    readonly publishedAt: DateTime.Utc
  }
  /** Back to `queued`, due again at `dueAt`. */
  | { readonly _tag: "Requeued"; readonly error: string; readonly dueAt: DateTime.Utc }
  | { readonly _tag: "Failed"; readonly error: string; readonly failedAt: DateTime.Utc }

export class DispatchStore extends Context.Tag("@herald/core/publishing/DispatchStore")<DispatchStore, {
  /**
   * Claims up to `limit` queued destinations due at `now`, oldest due first, exclusively across
   * processes (Postgres: FOR UPDATE SKIP LOCKED). Each becomes `publishing`, `attempts` + 1, with a
   * fresh lease token expiring after `leaseFor`.
   */
  readonly claimDue: (options: {
    readonly now: DateTime.Utc
    readonly limit: number
    readonly leaseFor: Duration.DurationInput
    readonly workerId: string
  }) => Effect.Effect<ReadonlyArray<Claim>, PersistenceError>
  /**
   * Whether a claim may begin while another claim's transaction is still open, each taking rows the
   * other does not (Postgres: the open claim's rows are locked, and `SKIP LOCKED` passes them by).
   * False where transactions take turns on one writer (SQLite): there a claim waits for the previous
   * one to commit, so the dispatcher's loop does not start it earlier.
   */
  readonly claimsOverlap: boolean
  /**
   * Records the outcome, fenced by the claim: only if the destination is still `publishing` under
   * the same lease token and attempt number. False means the claim was lost and nothing was written.
   */
  readonly complete: (claim: Claim, completion: Completion) => Effect.Effect<boolean, PersistenceError>
  /**
   * `complete` for a whole batch in one statement, each member fenced by its own claim: one boolean
   * per member, in order. A member whose claim was lost is refused alone; the others are written.
   */
  readonly completeAll: (
    items: ReadonlyArray<{ readonly claim: Claim; readonly completion: Completion }>
  ) => Effect.Effect<ReadonlyArray<boolean>, PersistenceError>
  /** The earliest `dueAt` of a queued destination, to sleep until. */
  readonly nextDueAt: Effect.Effect<Option.Option<DateTime.Utc>, PersistenceError>
  /** `publishing` destinations whose lease expired before `now`: their worker died mid-publish. */
  readonly expiredClaims: (now: DateTime.Utc, limit: number) => Effect.Effect<ReadonlyArray<Claim>, PersistenceError>
  /**
   * Extends the leases of claims still in flight to `until`, fenced by lease token: returns the tokens
   * that were renewed; a claim missing from them was lost (taken over) and must not be sent.
   */
  readonly renew: (
    claims: ReadonlyArray<Claim>,
    until: DateTime.Utc
  ) => Effect.Effect<ReadonlySet<string>, PersistenceError>
  /**
   * Takes over, exclusively across processes, up to `limit` abandoned `publishing` destinations: those
   * whose lease expired before `now`, or whose holder's heartbeat in the process table is older than
   * `deadBefore`. Each gets a fresh lease token for `workerId` (the attempt number and `claimedAt`
   * stay), so the old holder's completion is refused. Oldest lease first.
   */
  readonly takeOverAbandoned: (options: {
    readonly now: DateTime.Utc
    readonly deadBefore: DateTime.Utc
    readonly limit: number
    readonly leaseFor: Duration.DurationInput
    readonly workerId: string
  }) => Effect.Effect<ReadonlyArray<Claim>, PersistenceError>
}>() {}
