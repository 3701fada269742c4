/**
 * What one publish attempt came to (published, retry later, failed, claim lost), as the recorder
 * receives it.
 */
import { type PublishErrorKind, type PublishResult } from "../platforms/Platforms.js"

/** How a publish attempt ended, before it is turned into a store completion. */
export type Outcome =
  | { readonly _tag: "Published"; readonly result: PublishResult }
  | {
    readonly _tag: "Failed"
    readonly kind: PublishErrorKind
    readonly message: string
    readonly retryAfterSeconds?: number
    /**
     * Decided by the engine without calling the platform (post deleted, account inactive or already
     * known to need reconnection, no client): no reconnect event, nothing counted against the account
     * or the circuit breaker.
     */
    readonly local?: boolean
  }
  /** The worker died mid-publish; whether the platform got the post is unknown. */
  | { readonly _tag: "Unknown"; readonly message: string }
  /**
   * The worker died mid-publish and the platform confirmed the post is not there: due again at once
   * (nothing failed on the platform's side), unless that was the last attempt.
   */
  | { readonly _tag: "Absent"; readonly message: string }

/** Stored on a destination re-queued because its platform confirmed the abandoned attempt is absent. */
export const absentOutcomeMessage =
  "The worker publishing this destination stopped before it could record the outcome; the platform " +
  "confirmed the post was not published, so it was queued again."

export const unknownOutcomeMessage =
  "The worker publishing this destination stopped before it could record the outcome, so it is unknown " +
  "whether the platform received the post. It was not sent again automatically, to avoid a duplicate: check " +
  "the account, and if the post is missing, retry it with POST /posts/{post_id}/retry."

export interface RoundSummary {
  /** How many destinations this round asked for (`ClaimSize`). */
  readonly limit: number
  /** Destinations claimed this round. */
  readonly claimed: number
  readonly published: number
  readonly requeued: number
  readonly failed: number
  /** Destinations whose process died mid-publish, resolved this round (all three ways below). */
  readonly expired: number
  /** Of those, found on the platform (published) and confirmed absent (re-queued). */
  readonly settledFound: number
  readonly settledAbsent: number
  /** Completions not written because the claim had been lost (fencing). */
  readonly lost: number
}

export type Recorded = "published" | "requeued" | "failed" | "lost"
