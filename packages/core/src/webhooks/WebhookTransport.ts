import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The exact bytes that were signed. */
  readonly body: string
  readonly timeout: Duration.DurationInput
}

export interface WebhookResponse {
  readonly status: number
  /** At most the first 2 KB of the receiver's answer. */
  readonly body: string
  readonly durationMs: number
}

export const WebhookSendFailure = Schema.Literal("timeout", "refused_address", "invalid_url", "network")
export type WebhookSendFailure = typeof WebhookSendFailure.Type

export class WebhookSendError extends Schema.TaggedError<WebhookSendError>()("WebhookSendError", {
  reason: WebhookSendFailure,
  message: Schema.String,
  durationMs: Schema.Number
}) {}

/** Sends one signed delivery over HTTP; the adapter enforces safe targets and the timeout. */
export class WebhookTransport extends Context.Tag("@herald/core/webhooks/WebhookTransport")<WebhookTransport, {
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse, WebhookSendError>
}>() {}
