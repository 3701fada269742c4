/**
 * Bluesky's XRPC calls and how a failed one is classified (platform reference §2 Errors).
 *
 * Every call goes through `GuardedAgent`: a `service` or PDS that did not come from the operator is
 * resolved once per connection and connected to only if every address is public (unless the operator
 * allows private networks), and no redirect is ever followed, so neither a DNS answer that changes
 * after a check nor a 3xx can lead the app password or the session tokens elsewhere.
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as AddressGuard from "../net/AddressGuard.js"
import * as GuardedAgent from "../net/GuardedAgent.js"
import { publishError, type RawResponse, scrub, secondsHeader, send, stringField } from "./internal/PlatformHttp.js"

/** A failed XRPC call, before classification. */
export class XrpcFailure extends Data.TaggedError("XrpcFailure")<{
  readonly response: RawResponse
}> {}

export type Context = "default" | "upload" | "login"

const errorName = (response: RawResponse) => stringField(response.body, "error")

const authErrors = new Set([
  "ExpiredToken",
  "InvalidToken",
  "AuthenticationRequired",
  "AuthFactorTokenRequired",
  "AccountTakedown",
  "AccountDeactivated",
  "AuthMissing",
  "AuthRequired"
])

/** Maps a failed XRPC call to the reference's error classes (§2 Errors). */
export const classify = (
  response: RawResponse,
  context: Context,
  nowMillis: number,
  secrets: ReadonlyArray<string>
): PublishError => {
  const name = errorName(response)
  const text = stringField(response.body, "message")
  const message = scrub(
    `Bluesky: ${name ?? `HTTP ${response.status}`}${text !== undefined ? `: ${text}` : ""}`,
    secrets
  )
  if (response.status === 429 || name === "RateLimitExceeded") {
    const reset = secondsHeader(response.headers, "ratelimit-reset")
    const retryAfter = secondsHeader(response.headers, "retry-after") ??
      (reset !== undefined ? Math.ceil(reset - nowMillis / 1000) : undefined)
    return publishError("rate_limit", message, retryAfter)
  }
  if (response.status >= 500) return publishError("transient", message)
  if (response.status >= 300 && response.status < 400) {
    return publishError("permanent", `${message} (a redirect; Bluesky calls never follow one)`)
  }
  if (response.status === 401 || response.status === 403 || (name !== undefined && authErrors.has(name))) {
    return publishError("auth", message)
  }
  if (response.status === 413) return publishError("media", message)
  if (context === "upload" && response.status === 400) return publishError("media", message)
  if (name === "InvalidRequest" && text !== undefined && /longer than|too long|graphemes/i.test(text)) {
    return publishError("too_long", message)
  }
  return publishError("permanent", message)
}

/** Whether a failed authenticated call deserves a session renewal and one more try. */
export const needsRenewal = (response: RawResponse): boolean => {
  const name = errorName(response)
  return response.status === 401 || name === "ExpiredToken" || name === "InvalidToken"
}

/** A failed call classified at the current time. */
export const classifyNow = (failure: XrpcFailure, context: Context, secrets: ReadonlyArray<string>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(classify(failure.response, context, now, secrets)))

export const unexpected = (what: string) => publishError("transient", `Bluesky: unexpected ${what} response`)

export const allowPrivateEnv = "HERALD_BLUESKY_ALLOW_PRIVATE"

const originOf = (url: string): string => {
  try {
    return new URL(url).origin
  } catch {
    return "(invalid URL)"
  }
}

const refusedEndpoint = (url: string, what: string, refused: AddressGuard.AddressRefused): PublishError =>
  publishError(
    "auth",
    `Bluesky: the ${what} ${originOf(url)} is not allowed: ${refused.message}` +
      ` (a self-hosted PDS on a private network needs ${allowPrivateEnv}=true on the server)`
  )

export interface XrpcOptions extends AddressGuard.GuardOptions {
  /** The operator's own origins (service, video service, AppView): connected to without the range check. */
  readonly trustedOrigins: ReadonlyArray<string>
  /** Extra trusted CA certificates (PEM), for a self-hosted PDS behind a private CA. */
  readonly ca?: string
}

export interface Xrpc {
  /**
   * An early, explained refusal of a service or PDS endpoint that did not come from the operator,
   * before any credential is used. The connection itself is checked again by the guarded agent,
   * which is what keeps a changed DNS answer out.
   */
  readonly guardEndpoint: (url: string, what: string) => Effect.Effect<void, PublishError>
  /** One request through the guarded agent, whatever its status; a refusal names the endpoint refused. */
  readonly send: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<RawResponse, PublishError>
  /** One XRPC call: the body of a 2xx answer, else an `XrpcFailure` to classify. */
  readonly call: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<unknown, XrpcFailure | PublishError>
}

export const make = (options: XrpcOptions): Effect.Effect<Xrpc> =>
  Effect.gen(function*() {
    const { ca, trustedOrigins, ...guardOptions } = options
    const trusted = new Set(trustedOrigins.flatMap((o) => GuardedAgent.originKey(o) ?? []))
    const client = yield* GuardedAgent.httpClient({
      ...guardOptions,
      trustedOrigins,
      ...(ca === undefined ? {} : { ca })
    })

    const guardEndpoint = (url: string, what: string): Effect.Effect<void, PublishError> =>
      trusted.has(GuardedAgent.originKey(url) ?? "")
        ? Effect.void
        : AddressGuard.resolveAndCheck(url, guardOptions).pipe(
          Effect.asVoid,
          Effect.mapError((refused) => refusedEndpoint(url, what, refused))
        )

    const sendGuarded = (request: HttpClientRequest.HttpClientRequest) =>
      send(client, request, "Bluesky", (refused) => refusedEndpoint(request.url, "endpoint", refused))

    const call = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<unknown, XrpcFailure | PublishError> =>
      Effect.flatMap(
        sendGuarded(request),
        (response) =>
          response.status >= 200 && response.status < 300
            ? Effect.succeed(response.body)
            : Effect.fail(new XrpcFailure({ response }))
      )

    return { guardEndpoint, send: sendGuarded, call }
  })
