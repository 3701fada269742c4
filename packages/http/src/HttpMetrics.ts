/**
 * The server's metrics as the request middleware sees them (`Metrics` builds them): a recorder, or
 * none when metrics are off. Apart from `Metrics`, which reads the API's definition, so that the
 * request middleware can depend on it without importing the API it is part of.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** The metrics of a running server: what the request middleware records, and the scrape. */
export interface Recorder {
  /** Counts and times one answered request (`url` as sent: only its route template is kept). */
  readonly recordRequest: (method: string, url: string, status: number, seconds: number) => void
  /** Answers `GET /metrics`, checking the bearer token. */
  readonly scrape: (
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
}

/** The server's metrics, or none when they are off (`HERALD_METRICS_TOKEN` unset). */
export class HttpMetrics
  extends Context.Tag("@herald/http/Metrics/HttpMetrics")<HttpMetrics, Option.Option<Recorder>>()
{}

/** The recorder when metrics are on, read where `HttpMetrics` may not be provided at all. */
export const current: Effect.Effect<Option.Option<Recorder>> = Effect.map(
  Effect.serviceOption(HttpMetrics),
  Option.flatten
)
