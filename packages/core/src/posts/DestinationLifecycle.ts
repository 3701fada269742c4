/**
 * A destination's own states: `queued -> publishing -> published | failed`, a transient failure back
 * to `queued` with back-off, and a user's retry `failed -> queued`. Anything else is a typed error.
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import type { DestinationStatus } from "../domain/Destination.js"

// Variants without fields are `{}` in Data.TaggedEnum.
/* eslint-disable @typescript-eslint/no-empty-object-type */
export type DestinationEvent = Data.TaggedEnum<{
  /** A dispatcher claimed it for a publish attempt. */
  Claim: {}
  Succeed: {}
  /** Failed, will be tried again after a back-off. */
  FailTransient: {}
  /** Failed for good (permanent, auth, attempts exhausted). */
  FailPermanent: {}
  /** The worker holding it died mid-publish: the outcome is unknown, so it is not re-sent blindly. */
  ResolveUnknown: {}
  /** A user asked to retry it. */
  Retry: {}
}>
/* eslint-enable @typescript-eslint/no-empty-object-type */

export const DestinationEvent = Data.taggedEnum<DestinationEvent>()

export class IllegalTransition extends Data.TaggedError("IllegalTransition")<{
  readonly from: DestinationStatus
  readonly event: DestinationEvent["_tag"]
}> {
  override get message() {
    return `a ${this.from} destination cannot take ${this.event}`
  }
}

const table: Record<DestinationStatus, Partial<Record<DestinationEvent["_tag"], DestinationStatus>>> = {
  queued: { Claim: "publishing" },
  publishing: { Succeed: "published", FailTransient: "queued", FailPermanent: "failed", ResolveUnknown: "failed" },
  published: {},
  failed: { Retry: "queued" }
}

export const transition = (
  from: DestinationStatus,
  event: DestinationEvent
): Either.Either<DestinationStatus, IllegalTransition> => {
  const to = table[from][event._tag]
  return to === undefined ? Either.left(new IllegalTransition({ from, event: event._tag })) : Either.right(to)
}

/** Publish attempts a destination gets before a transient failure becomes final. */
export const maxAttempts = 3

/** The wait before attempt `failedAttempt + 1`: 30 s, 2 min, 8 min, … (×4 each time). */
export const retryDelay = (failedAttempt: number): Duration.Duration =>
  Duration.seconds(30 * 4 ** Math.max(0, failedAttempt - 1))

export type FailureDecision =
  | { readonly _tag: "Retry"; readonly delay: Duration.Duration }
  | { readonly _tag: "Fail" }

/**
 * After attempt `attempts` failed: a retryable failure below the attempt limit is retried after the
 * back-off, or after the platform's own requested delay when that is longer; anything else fails.
 */
export const decideAfterFailure = (input: {
  readonly attempts: number
  readonly retryable: boolean
  readonly retryAfterSeconds?: number | undefined
}): FailureDecision =>
  input.retryable && input.attempts < maxAttempts
    ? {
      _tag: "Retry",
      delay: Duration.max(retryDelay(input.attempts), Duration.seconds(Math.max(0, input.retryAfterSeconds ?? 0)))
    }
    : { _tag: "Fail" }
