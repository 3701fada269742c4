/**
 * Idempotent creates, as payment APIs make them: a create request sent with an `Idempotency-Key`
 * is run once per organization and key. Within 24 hours of the first request:
 *
 * - the same request again (same caller, method, path and body) gets the first answer again, when
 *   that answer was a success (2xx); nothing is created a second time;
 * - the same key on another request is refused (422 `idempotency_key_mismatch`);
 * - the same key while its first request is still running is refused (409 `idempotency_key_in_use`,
 *   retryable: once the first has answered, a retry gets its answer).
 *
 * An error answer is not kept: the key is freed, so the request can be tried again with it (a 5xx
 * may have been transient; a 4xx changed nothing). The HTTP layer decides what a request is
 * (`fingerprintOf`) and when it has answered; this module holds the rules and the store calls.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId } from "../kernel/Ids.js"
import { canonicalJson } from "../kernel/CanonicalJson.js"
import { type IdempotencyClaim, IdempotencyStore, type IdempotentAnswer } from "./IdempotencyStore.js"

/** How long a key is remembered after its first request. */
export const retention: Duration.Duration = Duration.hours(24)

/** The longest key accepted, in characters. */
export const maxKeyLength = 255

/** The request header naming the key. */
export const header = "Idempotency-Key"

const keyProblem = (message: string): DomainError =>
  DomainError.of("validation_error", `${header}: ${message}`, {
    validation_errors: [{ path: header, message }],
    max_length: maxKeyLength
  })

/**
 * The key as sent, checked: 1 to 255 characters of printable ASCII (U+0020 to U+007E; a UUID, or any
 * token a client makes), surrounding spaces ignored. Anything else is 400 `validation_error`.
 */
export const checkKey = (raw: string): Effect.Effect<string, DomainError> => {
  const key = raw.trim()
  if (key.length === 0) return Effect.fail(keyProblem("must not be empty"))
  if (key.length > maxKeyLength) {
    return Effect.fail(keyProblem(`must be at most ${maxKeyLength} characters (got ${key.length})`))
  }
  if (!/^[\x20-\x7e]+$/.test(key)) {
    return Effect.fail(keyProblem("must be printable ASCII characters only (U+0020 to U+007E)"))
  }
  return Effect.succeed(key)
}

/** What makes two requests under one key the same request. */
export interface RequestShape {
  /** Who sends it (an API key, or a signed-in user): another caller's request is another request. */
  readonly caller: string
  readonly method: string
  /** The path and query as sent. */
  readonly path: string
  /** The parsed JSON body (compared as canonical JSON: key order and spacing do not matter), or its raw text. */
  readonly body: { readonly _tag: "Json"; readonly value: unknown } | { readonly _tag: "Text"; readonly text: string }
}

/** The SHA-256 of the request's shape. */
export const fingerprintOf = (shape: RequestShape): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) =>
    crypto.sha256Hex(canonicalJson([
      shape.caller,
      shape.method.toUpperCase(),
      shape.path,
      shape.body._tag,
      shape.body._tag === "Json" ? canonicalJson(shape.body.value) : shape.body.text
    ])))

export type Decision =
  /** Run the request; then `complete` (a success) or `release` (an error) its claim. */
  | { readonly _tag: "Proceed"; readonly claim: IdempotencyClaim }
  /** Answer this again; run nothing. */
  | { readonly _tag: "Replay"; readonly answer: IdempotentAnswer }

export const inUse = (startedAt: DateTime.Utc): DomainError =>
  DomainError.of(
    "idempotency_key_in_use",
    `A request with this ${header} is still being processed; retry shortly to receive its answer`,
    { started_at: DateTime.formatIso(startedAt) }
  )

export const mismatch = (startedAt: DateTime.Utc): DomainError =>
  DomainError.of(
    "idempotency_key_mismatch",
    `This ${header} was already used by a different request (another caller, method, path or body) ` +
      `within the last 24 hours; send a new key with a new request`,
    { first_used_at: DateTime.formatIso(startedAt) }
  )

/**
 * Takes the key for this request, or tells what to answer instead: the first success again, or the
 * errors above. `holder` names the request (its request id).
 */
export const begin = (input: {
  readonly organizationId: OrganizationId
  readonly key: string
  readonly fingerprint: string
  readonly holder: string
}): Effect.Effect<Decision, DomainError | PersistenceError, IdempotencyStore> =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const claim: IdempotencyClaim = { ...input, startedAt: now, expiresAt: DateTime.addDuration(now, retention) }
    const begun = yield* (yield* IdempotencyStore).begin(claim)
    if (begun._tag === "Started") return { _tag: "Proceed", claim } satisfies Decision
    const record = begun.record
    if (record.fingerprint !== input.fingerprint) return yield* Effect.fail(mismatch(record.startedAt))
    if (record._tag === "InFlight") return yield* Effect.fail(inUse(record.startedAt))
    return { _tag: "Replay", answer: record.answer } satisfies Decision
  })

/** Whether an answer with this status is kept and answered again: successes only. */
export const isKept = (status: number): boolean => status >= 200 && status < 300

/** Records the claim's answer (a success); false when the claim had lost the key. */
export const complete = (claim: IdempotencyClaim, answer: IdempotentAnswer) =>
  Effect.flatMap(IdempotencyStore, (store) => store.complete(claim, answer))

/** Frees the key after an error answer, so that the request can be tried again with it. */
export const release = (claim: IdempotencyClaim) => Effect.flatMap(IdempotencyStore, (store) => store.release(claim))

// ---------------------------------------------------------------------------------------------------
// Housekeeping
// ---------------------------------------------------------------------------------------------------

export interface PruneOptions {
  readonly batchSize?: number
  readonly maxBatches?: number
}

export interface PruneSummary {
  readonly keys: number
  /** Keys that expired before this instant were removed. */
  readonly before: DateTime.Utc
}

/**
 * Removes the records of keys past their 24 hours (they already count as absent). Works in short
 * batches; several processes at once are harmless.
 */
export const prune = (options: PruneOptions = {}) =>
  Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const before = yield* DateTime.now
    const limit = Math.max(1, Math.trunc(options.batchSize ?? 500))
    const maxBatches = Math.max(1, Math.trunc(options.maxBatches ?? 100))
    let keys = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const removed = yield* store.prune(before, limit)
      keys += removed
      if (removed < limit) break
    }
    const summary: PruneSummary = { keys, before }
    return summary
  }).pipe(Effect.withSpan("IdempotentRequests.prune"))
