/**
 * Create requests sent with an `Idempotency-Key`, one record per organization and key: the request's
 * fingerprint, the request holding the key while its first answer is being made, and once it has
 * answered, the status and body to answer again. A record lives until its `expiresAt` (24 hours after
 * the first request); an expired record counts as absent and is pruned by housekeeping.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId } from "../kernel/Ids.js"

/** A request taking a key: what `begin` records while its answer is made. */
export interface IdempotencyClaim {
  readonly organizationId: OrganizationId
  readonly key: string
  /** The SHA-256 of what makes two requests the same request (`IdempotentRequests.fingerprintOf`). */
  readonly fingerprint: string
  /** The request holding the key (its request id); completion and release are fenced by it. */
  readonly holder: string
  readonly startedAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
}

/** A recorded answer: the status and the response body, byte for byte as first sent. */
export interface IdempotentAnswer {
  readonly status: number
  readonly body: string
}

/** The live record a key already has. */
export type IdempotencyRecord =
  | {
    readonly _tag: "InFlight"
    readonly fingerprint: string
    readonly startedAt: DateTime.Utc
  }
  | {
    readonly _tag: "Completed"
    readonly fingerprint: string
    readonly startedAt: DateTime.Utc
    readonly answer: IdempotentAnswer
  }

export type BeginResult =
  /** The key was free (or its record had expired): it is now held by the claim. */
  | { readonly _tag: "Started" }
  /** The key has a live record; nothing was written. */
  | { readonly _tag: "Existing"; readonly record: IdempotencyRecord }

export class IdempotencyStore extends Context.Tag("@herald/core/access/IdempotencyStore")<IdempotencyStore, {
  /**
   * Takes the key for the claim unless it has a live record (one whose `expiresAt` is after the
   * claim's `startedAt`); an expired record is replaced. Atomic: of two concurrent claims of one key,
   * one is `Started` and the other sees it `InFlight`.
   */
  readonly begin: (claim: IdempotencyClaim) => Effect.Effect<BeginResult, PersistenceError>
  /** Records the claim's answer; false when the claim no longer holds the key (nothing written). */
  readonly complete: (claim: IdempotencyClaim, answer: IdempotentAnswer) => Effect.Effect<boolean, PersistenceError>
  /** Frees a key the claim still holds without an answer (the request failed); otherwise does nothing. */
  readonly release: (claim: IdempotencyClaim) => Effect.Effect<void, PersistenceError>
  /** Housekeeping: deletes up to `limit` records that expired before `before`; returns how many. */
  readonly prune: (before: DateTime.Utc, limit: number) => Effect.Effect<number, PersistenceError>
}>() {}
