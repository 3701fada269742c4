/**
 * The one place where a request becomes a response envelope: gives each request an id and a
 * timestamp (`meta`), turns every failure — domain errors, auth failures, bad JSON, schema failures,
 * unknown routes, defects — into the spec's error body with the catalogue's status, sets
 * `X-Request-Id`, adds the rate-limit headers to 429s, and logs one line per request.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { isStoreUnavailable } from "@herald/adapters/sql/StoreFaults"
import { DomainError } from "@herald/core/kernel/Errors"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { AuthFailure, MissingCredentials, SubscriptionRequired } from "./Auth.js"
import * as Envelope from "./Envelope.js"
import * as ErrorCatalogue from "./ErrorCatalogue.js"
import * as InputLimits from "./InputLimits.js"
import * as HttpMetrics from "./HttpMetrics.js"

/**
 * Fields a handler adds to its request's log line (e.g. `post_id`), so that one line ties a request id
 * to the resource it touched. Keyed by the request's `meta`, which `Envelope.currentMeta` already
 * carries to the handler and its children: one FiberRef set per request instead of two.
 */
const logFieldsOf: WeakMap<Envelope.Meta, Map<string, string>> = globalValue(
  Symbol.for("@herald/http/RequestMiddleware/logFieldsOf"),
  () => new WeakMap<Envelope.Meta, Map<string, string>>()
)

/** Adds `key=value` to the current request's log line (no effect outside a request). Never pass secrets. */
export const annotateRequestLog = (key: string, value: string): Effect.Effect<void> =>
  Effect.flatMap(
    FiberRef.get(Envelope.currentMeta),
    (meta) => Effect.sync(() => void logFieldsOf.get(meta)?.set(key, value))
  )

/**
 * Requests never traced, even with tracing on: load balancers' probes and metrics scrapes, which come
 * every few seconds and would bury the traces worth reading.
 */
export const untraced = (request: { readonly url: string }): boolean => {
  const path = request.url.split("?")[0]!
  return path === "/metrics" || path === "/health" || path.startsWith("/health/")
}

/** Seconds a 429 asks the caller to wait when it knows no window end. */
export const defaultRetryAfterSeconds = 30

const pathOf = (path: ReadonlyArray<PropertyKey>): string => path.map(String).join(".")

/**
 * Fields whose values are credentials (or carry one, as a Discord webhook URL does): a schema
 * message about them never quotes the value, whatever its type.
 */
export const credentialFields: ReadonlySet<string> = new Set([
  "password",
  "token",
  "bot_token",
  "app_password",
  "webhook_url",
  "device_code",
  "code",
  "client_secret",
  "secret",
  "access_token",
  "refresh_token",
  "api_key"
])

/**
 * A schema issue's message as the caller sees it: without the offending value (`, actual ...`) when
 * the issue is about a credential field or anything inside one, or about the whole body (which may
 * hold credentials). Other values are quoted, clipped by `Envelope.clip`.
 */
export const issueMessage = (path: ReadonlyArray<PropertyKey>, message: string): string => {
  if (path.length > 0 && !path.some((segment) => credentialFields.has(String(segment)))) return message
  const actual = message.indexOf(", actual ")
  return actual < 0 ? message : message.slice(0, actual)
}

const validationError = (error: HttpApiDecodeError): DomainError =>
  DomainError.of("validation_error", "The request did not match the expected schema", {
    validation_errors: error.issues.map((issue) => ({
      path: pathOf(issue.path),
      message: issueMessage(issue.path, issue.message)
    }))
  })

const isRequestDecodeError = (u: unknown): boolean =>
  HttpServerError.isServerError(u) && u._tag === "RequestError" && u.reason === "Decode"

const internalError = DomainError.of("internal_error", "An internal error occurred")

/**
 * The store cannot be reached or written (Postgres down, a full disk, a read-only file): the spec's
 * transient `service_unavailable` (500, retryable), on every route, instead of `internal_error`.
 */
export const storeUnavailable = DomainError.of(
  "service_unavailable",
  "The service cannot reach its storage just now; nothing was changed by this request. Retry shortly."
)

const causedByUnavailableStore = (cause: Cause.Cause<unknown>): boolean =>
  [...Cause.defects(cause), ...Cause.failures(cause)].some(isStoreUnavailable)

/** What the request failed with, as one of the shapes the middleware knows how to answer. */
type Outcome =
  | { readonly _tag: "Domain"; readonly error: DomainError }
  | { readonly _tag: "Auth"; readonly error: AuthFailure | SubscriptionRequired }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Defect" }
  | { readonly _tag: "StoreUnavailable" }

const classify = (cause: Cause.Cause<unknown>): Outcome => {
  const failure = Option.getOrUndefined(Cause.failureOption(cause))
  if (failure !== undefined) {
    if (failure instanceof DomainError) return { _tag: "Domain", error: failure }
    if (failure instanceof AuthFailure || failure instanceof SubscriptionRequired) {
      return { _tag: "Auth", error: failure }
    }
    if (failure instanceof MissingCredentials) return { _tag: "Missing" }
    if (failure instanceof HttpApiDecodeError) return { _tag: "Domain", error: validationError(failure) }
    if (HttpServerError.isServerError(failure) && failure._tag === "RouteNotFound") {
      return { _tag: "Domain", error: DomainError.of("not_found", "No such endpoint") }
    }
    if (isRequestDecodeError(failure)) {
      return { _tag: "Domain", error: DomainError.of("invalid_json", "The request body is not valid JSON") }
    }
    return causedByUnavailableStore(cause) ? { _tag: "StoreUnavailable" } : { _tag: "Defect" }
  }
  // HttpApi reads JSON bodies with `orDie`, so unparseable JSON arrives as a defect.
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  if (defect !== undefined && isRequestDecodeError(defect)) {
    return { _tag: "Domain", error: DomainError.of("invalid_json", "The request body is not valid JSON") }
  }
  return causedByUnavailableStore(cause) ? { _tag: "StoreUnavailable" } : { _tag: "Defect" }
}

const numberOf = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)

/**
 * Headers of a 429: `Retry-After` on every 429 (seconds to the window's end when known, else 30), and
 * for the API-key limit also `X-RateLimit-Limit`, `-Remaining` and `-Reset` (unix seconds).
 */
export const rateLimitHeaders = (error: DomainError, now: DateTime.Utc): Record<string, string> => {
  const resetAt = typeof error.details?.reset_at === "string"
    ? Option.getOrUndefined(DateTime.make(error.details.reset_at))
    : undefined
  const resetSeconds = resetAt === undefined ? undefined : Math.ceil(DateTime.toEpochMillis(resetAt) / 1000)
  const retryAfter = resetAt === undefined
    ? defaultRetryAfterSeconds
    : Math.max(1, Math.ceil((DateTime.toEpochMillis(resetAt) - DateTime.toEpochMillis(now)) / 1000))
  const headers: Record<string, string> = { "retry-after": String(retryAfter) }
  const limit = numberOf(error.details?.limit)
  const remaining = numberOf(error.details?.remaining)
  if (error.code === "rate_limit_exceeded" && limit !== undefined && resetSeconds !== undefined) {
    headers["x-ratelimit-limit"] = String(limit)
    headers["x-ratelimit-remaining"] = String(remaining ?? 0)
    headers["x-ratelimit-reset"] = String(resetSeconds)
  }
  return headers
}

const respond = (outcome: Outcome, meta: Envelope.Meta, now: DateTime.Utc): HttpServerResponse.HttpServerResponse => {
  switch (outcome._tag) {
    case "Missing":
      return HttpServerResponse.text("Unauthorized", { status: 401, contentType: "text/plain" })
    case "Auth": {
      const error = outcome.error
      return error._tag === "AuthFailure"
        ? HttpServerResponse.unsafeJson(
          Envelope.authBody({ code: error.code, message: error.message, timestamp: meta.timestamp }),
          { status: 401 }
        )
        : HttpServerResponse.unsafeJson(
          Envelope.authBody({
            code: "subscription_required",
            message: error.message,
            timestamp: meta.timestamp,
            subscriptionStatus: error.subscriptionStatus
          }),
          { status: 402 }
        )
    }
    case "Domain":
    case "StoreUnavailable":
    case "Defect": {
      const error = outcome._tag === "Domain"
        ? outcome.error
        : outcome._tag === "StoreUnavailable"
        ? storeUnavailable
        : internalError
      const status = ErrorCatalogue.statusOf(error)
      return HttpServerResponse.unsafeJson(Envelope.errorBody(error, meta), {
        status,
        ...(status === 429 ? { headers: rateLimitHeaders(error, now) } : {})
      })
    }
  }
}

/**
 * The request middleware for a request given as an argument (the fast path's routes, which then run
 * without the request in their context unless they read it themselves).
 */
export const makeForRequest = Effect.gen(function*() {
  const ids = yield* IdGenerator
  const metrics = Option.getOrUndefined(yield* HttpMetrics.current)
  const handle = <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
    requestId: string
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
    Effect.gen(function*() {
      const started = metrics === undefined ? 0 : performance.now()
      const now = yield* DateTime.now
      const meta: Envelope.Meta = { request_id: requestId, timestamp: DateTime.formatIso(now) }
      const logFields = new Map<string, string>()
      logFieldsOf.set(meta, logFields)
      const guarded = InputLimits.guardRequest(request, app)
      const response = yield* (untraced(request) ? Effect.withTracerEnabled(guarded, false) : guarded).pipe(
        Effect.locally(Envelope.currentMeta, meta),
        Effect.catchAllCause((cause) => {
          // Interrupted only: no failure of the input limits (or any other) is in it.
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
          const outcome = classify(cause)
          const logDefect = outcome._tag === "Defect"
            ? Effect.logError("unhandled failure", cause)
            : outcome._tag === "StoreUnavailable"
            ? Effect.logWarning("the store is unavailable", cause)
            : Effect.void
          return Effect.as(logDefect, respond(outcome, meta, now))
        })
      )
      const end = yield* DateTime.now
      // The path only: a query string is the caller's business, and never needed to trace a request.
      const path = request.url.split("?")[0]
      // The line's own fields are set, not scoped: the request's `request_id` scope around all of
      // this restores the annotations when the request ends (a scope of their own cost ~3 us).
      const durationMs = DateTime.toEpochMillis(end) - DateTime.toEpochMillis(now)
      yield* FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => {
        let fields = annotations
        for (const [key, value] of logFields) fields = HashMap.set(fields, key, value)
        return HashMap.set(fields, "duration_ms", durationMs)
      })
      yield* Effect.logInfo(`${request.method} ${path} ${response.status}`)
      if (metrics !== undefined) {
        metrics.recordRequest(request.method, request.url, response.status, (performance.now() - started) / 1000)
      }
      return HttpServerResponse.setHeader(response, "x-request-id", requestId)
    }).pipe(Effect.annotateLogs("request_id", requestId))
  return <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
    Effect.flatMap(ids.uuid, (requestId) => handle(request, app, requestId))
})

/**
 * The request middleware as a plain `HttpApp` transformer (exported for in-process use and for the
 * fast path's `POST /posts`, which keeps its requirements).
 */
export const make = Effect.map(
  makeForRequest,
  (handle) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => handle(request, app))
)

export const layer = HttpApiBuilder.middleware(make)
