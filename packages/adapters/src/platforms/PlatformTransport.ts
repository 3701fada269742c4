/**
 * The HTTP client every platform call goes through (publishing, uploads, metrics, token exchanges):
 * Node's own `http`/`https` client. The fetch-based client cannot send a streamed body with a length:
 * it drops the `Content-Length` a body declares and sends `Transfer-Encoding: chunked`, which TikTok's
 * chunk `PUT` refuses and the other upload endpoints (X's APPEND, YouTube's resumable `PUT`, Pinterest's
 * upload form, LinkedIn's and Meta's upload URLs) expect. This one sends the length `MediaBytes`
 * computes, and never follows a redirect (YouTube's `308 Resume Incomplete` is an answer).
 *
 * While spans are on, each call is a client span (`http.client <METHOD>`) with the platform's origin,
 * the path with token-like segments replaced (`SpanUrls`: Telegram and Discord carry their token in
 * it) and the status answered. The platform client's own span is off: it records the full URL and
 * query. The trace context is never sent to a platform (no `traceparent` header).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as SpanUrls from "../net/SpanUrls.js"

const attributesOf = (request: HttpClientRequest.HttpClientRequest): Record<string, unknown> => {
  try {
    const url = new URL(request.url)
    return {
      "http.request.method": request.method,
      "server.address": url.origin,
      "url.scheme": url.protocol.slice(0, -1),
      "url.path": SpanUrls.scrubPath(url.pathname)
    }
  } catch {
    return { "http.request.method": request.method }
  }
}

/** `effect` (one call's response) as a client span, when spans are on. */
const clientSpan = <E, R>(
  effect: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? Effect.withSpan(
        Effect.tap(effect, (response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
        `http.client ${request.method}`,
        { kind: "client", captureStackTrace: false, attributes: attributesOf(request) }
      )
      : effect
  )

export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    client.pipe(
      HttpClient.withTracerDisabledWhen(() => true),
      HttpClient.withTracerPropagation(false),
      HttpClient.transform(clientSpan)
    ))
).pipe(Layer.provide(NodeHttpClient.layer))
