/**
 * The `WebhookTransport` port over node:http and node:https (global fetch ignores per-request lookups,
 * so it cannot be pinned to a checked address).
 *
 * Each send: checks the URL's scheme, then connects through `GuardedAgent`, which resolves the host once,
 * checks every address and connects only to the checked ones (the URL's host still goes into `Host`
 * and the TLS server name); never follows a redirect (a 3xx comes back as
 * the answer, which the deliverer counts as a failure), bounds the whole exchange (DNS, connect, TLS,
 * request, answer) by one timeout, and keeps at most the first 2 KB of the answer, closing the
 * connection as soon as it has them.
 */
import { WebhookSendError, WebhookTransport } from "@herald/core/webhooks/WebhookTransport"
import type { WebhookRequest, WebhookResponse, WebhookSendFailure } from "@herald/core/webhooks/WebhookTransport"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Http from "node:http"
import * as Https from "node:https"
import * as AddressGuard from "../net/AddressGuard.js"
import * as GuardedAgent from "../net/GuardedAgent.js"

export interface TransportOptions {
  /** Allow private and local targets and plain http (`HERALD_WEBHOOKS_ALLOW_PRIVATE=true`). */
  readonly allowPrivate: boolean
  /** Caps every request's own timeout; 10 seconds by default. */
  readonly timeout?: Duration.DurationInput
  /** Extra trusted CA certificates (PEM), for receivers behind a private CA. */
  readonly ca?: string | ReadonlyArray<string>
  /** Host name resolution; the system resolver by default. */
  readonly resolve?: AddressGuard.Resolver
}

export const defaultTimeout: Duration.Duration = Duration.seconds(10)

/** Bytes of the receiver's answer that are kept (spec: Limits, "2 KB of the receiver's response kept"). */
export const maxResponseBytes = 2048

/** The request's timeout, capped by the transport's. */
export const effectiveTimeout = (request: Duration.DurationInput, cap: Duration.DurationInput | undefined) =>
  Duration.min(Duration.decode(request), Duration.decode(cap ?? defaultTimeout))

interface Failure {
  readonly reason: WebhookSendFailure
  readonly message: string
}

interface Answer {
  readonly status: number
  readonly body: string
}

/** Drops a multi-byte UTF-8 sequence cut in half by the byte cap. */
const completeUtf8 = (bytes: Buffer): Buffer => {
  let i = bytes.length - 1
  let continuation = 0
  while (i >= 0 && continuation < 3 && (bytes[i]! & 0xc0) === 0x80) {
    i -= 1
    continuation += 1
  }
  if (i < 0) return bytes
  const lead = bytes[i]!
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return bytes.length - i < length ? bytes.subarray(0, i) : bytes
}

/** The answer as text of at most `max` UTF-8 bytes (invalid bytes become U+FFFD, which is 3 bytes). */
export const decodeCapped = (bytes: Buffer, max: number, truncated: boolean): string => {
  const text = (truncated ? completeUtf8(bytes) : bytes).toString("utf8")
  if (Buffer.byteLength(text, "utf8") <= max) return text
  let out = ""
  let used = 0
  for (const ch of text) {
    const n = Buffer.byteLength(ch, "utf8")
    if (used + n > max) break
    out += ch
    used += n
  }
  return out
}

const describeNetworkError = (error: unknown): string => {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  }
  return "the connection failed"
}

interface Target {
  readonly url: URL
  readonly hostname: string
  readonly port: number
}

const exchange = (
  target: Target,
  request: WebhookRequest,
  agents: GuardedAgent.GuardedAgents
): Effect.Effect<Answer, Failure> =>
  Effect.async<Answer, Failure>((resume) => {
    let settled = false
    const settle = (result: Effect.Effect<Answer, Failure>) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const body = Buffer.from(request.body, "utf8")
    const headers: Record<string, string> = {
      ...request.headers,
      Host: target.url.host,
      "Content-Length": String(body.length)
    }
    const secure = target.url.protocol === "https:"
    const base: Https.RequestOptions = {
      method: "POST",
      hostname: target.hostname,
      port: target.port,
      path: `${target.url.pathname}${target.url.search}`,
      headers,
      // Not pooled (the agents keep no connection alive): nothing outlives the exchange or its timeout.
      agent: secure ? agents.https : agents.http
    }
    if (target.url.username !== "") {
      base.auth = `${decodeURIComponent(target.url.username)}:${decodeURIComponent(target.url.password)}`
    }

    let req: Http.ClientRequest
    try {
      req = secure ? Https.request(base) : Http.request(base)
    } catch (error) {
      settle(Effect.fail({ reason: "network", message: describeNetworkError(error) }))
      return
    }
    req.on("error", (error) => {
      const refused = GuardedAgent.refusalIn(error)
      settle(Effect.fail(
        refused === undefined
          ? { reason: "network", message: describeNetworkError(error) }
          : { reason: refused.reason === "unresolvable" ? "network" : refused.reason, message: refused.message }
      ))
    })
    req.on("response", (res) => {
      const status = res.statusCode ?? 0
      const chunks: Array<Buffer> = []
      let size = 0
      const finish = (truncated: boolean) =>
        settle(Effect.succeed({ status, body: decodeCapped(Buffer.concat(chunks), maxResponseBytes, truncated) }))
      res.on("data", (chunk: Buffer) => {
        if (settled) return
        const room = maxResponseBytes - size
        if (chunk.length < room) {
          chunks.push(chunk)
          size += chunk.length
          return
        }
        chunks.push(chunk.subarray(0, room))
        size = maxResponseBytes
        finish(true)
        // Enough kept: stop reading and drop the connection rather than draining the rest.
        res.destroy()
        req.destroy()
      })
      res.on("end", () => finish(false))
      res.on("error", (error) => settle(Effect.fail({ reason: "network", message: describeNetworkError(error) })))
      res.on("aborted", () => settle(Effect.fail({ reason: "network", message: "the receiver closed the connection" })))
    })
    req.end(body)
    return Effect.sync(() => {
      settled = true
      req.destroy()
    })
  })

/** The receiver's origin (scheme, host, port): a webhook URL's path or query may hold a credential. */
const originOf = (url: string): string => {
  try {
    return new URL(url).origin
  } catch {
    return "invalid"
  }
}

/**
 * The exchange as an HTTP client span (when spans are on), named and attributed as the platform's
 * HTTP client names its own, with the receiver's origin only and the status it answered.
 */
const clientSpan =
  (url: string) =>
  <A extends { readonly status: number }, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) =>
      fiber.getFiberRef(FiberRef.currentTracerEnabled)
        ? Effect.withSpan(
          Effect.tap(self, (answer) => Effect.annotateCurrentSpan("http.response.status_code", answer.status)),
          "http.client POST",
          {
            kind: "client",
            captureStackTrace: false,
            attributes: { "http.request.method": "POST", "server.address": originOf(url) }
          }
        )
        : self
    )

export const make = (options: TransportOptions): WebhookTransport["Type"] => {
  const guard: AddressGuard.GuardOptions = options.resolve === undefined
    ? { allowPrivate: options.allowPrivate }
    : { allowPrivate: options.allowPrivate, resolve: options.resolve }
  const agents = GuardedAgent.make({ ...guard, ...(options.ca === undefined ? {} : { ca: options.ca }) })
  return WebhookTransport.of({
    send: (request: WebhookRequest): Effect.Effect<WebhookResponse, WebhookSendError> =>
      Effect.gen(function*() {
        const start = yield* Clock.currentTimeMillis
        const timeout = effectiveTimeout(request.timeout, options.timeout)
        const result = yield* AddressGuard.parseUrl(request.url, guard).pipe(
          Effect.mapError((refused): Failure => ({
            reason: refused.reason === "unresolvable" ? "network" : refused.reason,
            message: refused.message
          })),
          Effect.flatMap((target) => exchange(target, request, agents).pipe(clientSpan(request.url))),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: (): Failure => ({
              reason: "timeout",
              message: `no complete answer within ${Duration.format(timeout)}`
            })
          }),
          Effect.either
        )
        const durationMs = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - start))
        return yield* Either.match(result, {
          onLeft: (failure) => Effect.fail(new WebhookSendError({ ...failure, durationMs })),
          onRight: (answer) => Effect.succeed({ status: answer.status, body: answer.body, durationMs })
        })
      })
  })
}

export const layer = (options: TransportOptions): Layer.Layer<WebhookTransport> =>
  Layer.succeed(WebhookTransport, make(options))

/** `allowPrivate` from `HERALD_WEBHOOKS_ALLOW_PRIVATE`, read as `AddressGuard.fromEnv` does: only `true` turns it on. */
export const allowPrivateConfig: Config.Config<boolean> = Config.string(AddressGuard.allowPrivateEnv).pipe(
  Config.withDefault(""),
  Config.map((value) => AddressGuard.fromEnv({ [AddressGuard.allowPrivateEnv]: value }).allowPrivate)
)

export const layerConfig = (
  options: Omit<TransportOptions, "allowPrivate"> = {}
): Layer.Layer<WebhookTransport, ConfigError.ConfigError> =>
  Layer.effect(
    WebhookTransport,
    Effect.map(allowPrivateConfig, (allowPrivate) => make({ ...options, allowPrivate }))
  )
