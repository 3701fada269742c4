/**
 * Plumbing shared by the credential platform adapters: sending a request without leaking its URL,
 * reading a body that may or may not be JSON, collecting media bytes, and scrubbing secrets out of
 * anything that ends up in a `PublishError` message.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { PublishError, type PublishErrorKind } from "@herald/core/platforms/Platforms"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type AddressRefused, refusalIn } from "../../net/AddressGuard.js"

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  readonly body: unknown
}

const parseJson = (text: string): unknown => {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Sends a request and reads the whole body. A transport failure becomes a `transient` error whose
 * message names the platform only: the client's own error text carries the URL, and Telegram and
 * Discord URLs carry the token. A client over `GuardedAgent` that refused the address fails with
 * `refused`'s error instead (a permanent one by default), since retrying cannot help.
 */
export const send = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  platformLabel: string,
  refused?: (refusal: AddressRefused) => PublishError
): Effect.Effect<RawResponse, PublishError> =>
  client.execute(request).pipe(
    Effect.flatMap((response) =>
      Effect.map(response.text, (text): RawResponse => ({
        status: response.status,
        headers: response.headers,
        text,
        body: parseJson(text)
      }))
    ),
    Effect.catchAll((error) => {
      const refusal = refusalIn(error)
      if (refusal !== undefined) {
        return Effect.fail(
          refused?.(refusal) ??
            new PublishError({ kind: "permanent", message: `${platformLabel}: ${refusal.message}` })
        )
      }
      return Effect.fail(
        new PublishError({
          kind: "transient",
          message: `${platformLabel}: network error, the request did not complete`
        })
      )
    })
  )

const patterns: ReadonlyArray<readonly [RegExp, string]> = [
  // Telegram bot tokens
  [/\d{3,}:[A-Za-z0-9_-]{20,}/g, "[redacted]"],
  // JWTs (Bluesky sessions)
  [/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "[redacted]"],
  // Discord webhook tokens in paths
  [/(webhooks\/\d+\/)[A-Za-z0-9_.-]+/g, "$1[redacted]"],
  // Bluesky app passwords
  [/\b[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}\b/g, "[redacted]"]
]

/** Removes the given secrets, and anything shaped like a token, from a text bound for an error or a log. */
export const scrub = (text: string, secrets: Iterable<string | undefined>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4) out = out.split(secret).join("[redacted]")
  }
  for (const [re, replacement] of patterns) out = out.replace(re, replacement)
  return out.length > 500 ? `${out.slice(0, 500)}…` : out
}

export const publishError = (
  kind: PublishErrorKind,
  message: string,
  retryAfterSeconds?: number | undefined
): PublishError =>
  retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds)
    ? new PublishError({ kind, message, retryAfterSeconds: Math.max(0, retryAfterSeconds) })
    : new PublishError({ kind, message })

/**
 * Reads every chunk of a stream into one array: only for small things (an image sent as base64, a
 * video's `moov` box); media bodies stream (`MediaBytes`).
 */
export const collectBytes = (
  bytes: Stream.Stream<Uint8Array, unknown>,
  label: string
): Effect.Effect<Uint8Array, PublishError> =>
  Stream.runCollect(bytes).pipe(
    Effect.map((chunks) => {
      const parts = Chunk.toReadonlyArray(chunks)
      const total = parts.reduce((n, p) => n + p.byteLength, 0)
      const out = new Uint8Array(total)
      let offset = 0
      for (const part of parts) {
        out.set(part, offset)
        offset += part.byteLength
      }
      return out
    }),
    Effect.catchAll(() => Effect.fail(publishError("transient", `could not read the bytes of ${label}`)))
  )

// Loose readers for decoded JSON, where a Schema would add nothing but ceremony.
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

export const field = (u: unknown, key: string): unknown => (isRecord(u) ? u[key] : undefined)

export const stringField = (u: unknown, key: string): string | undefined => {
  const v = field(u, key)
  return typeof v === "string" ? v : undefined
}

export const numberField = (u: unknown, key: string): number | undefined => {
  const v = field(u, key)
  return typeof v === "number" && Number.isFinite(v) ? v : undefined
}

/** Parses a header holding seconds (possibly fractional). */
export const secondsHeader = (headers: Readonly<Record<string, string>>, name: string): number | undefined => {
  const raw = headers[name.toLowerCase()]
  if (raw === undefined) return undefined
  const n = Number(raw)
  return raw.trim() !== "" && Number.isFinite(n) ? n : undefined
}

export const trimSlash = (url: string): string => url.replace(/\/+$/, "")

/** A text setting (`firstComment`, `link`, `title`, …): the string, or `undefined` when absent or blank. */
export const textSetting = (settings: Readonly<Record<string, unknown>>, key: string): string | undefined => {
  const value = settings[key]
  return typeof value === "string" && value.trim() !== "" ? value : undefined
}

/**
 * A step taken once the main post is out (a first comment, a thread part, a permalink read): its
 * failure is logged and never returned, since failing now would make the engine retry a post that is
 * already published. Comments and thread parts go in `PublishResult.followUps`, which the engine runs
 * after recording the post, outside the publish deadline.
 */
export const afterPublished = <A>(
  label: string,
  what: string,
  effect: Effect.Effect<A, PublishError>
): Effect.Effect<A | undefined> =>
  effect.pipe(
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning(`${label}: ${what} failed after the main post was out: ${error.kind}: ${error.message}`),
        undefined
      )
    )
  )

/** A `PublishError` whose message is `{label}: {reason}`, the reason scrubbed of the given secrets. */
export const failure = (
  label: string,
  kind: PublishErrorKind,
  reason: string,
  secrets: Iterable<string | undefined>,
  retryAfterSeconds?: number | undefined
): PublishError => publishError(kind, `${label}: ${scrub(reason, secrets)}`, retryAfterSeconds)

/**
 * What went wrong, for an error message: the platform's own texts joined, else a short body that is
 * not JSON (a gateway's plain-text page), else the HTTP status.
 */
export const failureReason = (response: RawResponse, texts: ReadonlyArray<string>): string =>
  texts.length > 0
    ? texts.join(": ")
    : response.text.trim() !== "" && response.body === undefined && response.text.length < 200
    ? `HTTP ${response.status}: ${response.text.trim()}`
    : `HTTP ${response.status}`
