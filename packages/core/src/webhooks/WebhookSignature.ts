/**
 * What a webhook delivery carries: the payload envelope and the signed headers (spec: Events, Payload
 * envelope and Delivery headers), plus the Standard Webhooks headers (standardwebhooks.com) so that
 * receivers can use an off-the-shelf verifier.
 *
 * Keys:
 * - `X-Service-Signature` is keyed with the UTF-8 bytes of the whole secret string, `whsec_` included
 *   ("HMAC-SHA256 of the raw request body using the subscription secret").
 * - `webhook-signature` is keyed as Standard Webhooks says: the base64 decoding of what follows `whsec_`.
 *   Herald's secrets are `whsec_` + the standard base64 of 48 random bytes (exactly 64 characters, no
 *   padding), so Standard Webhooks libraries verify them unchanged. A secret whose tail is not valid
 *   base64 (never one Herald generated) falls back to the UTF-8 bytes of the whole secret.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Redacted from "effect/Redacted"
import { Crypto } from "../kernel/Crypto.js"

export const secretPrefix = "whsec_"

/** Random bytes in a secret: their base64 is exactly 64 characters without padding. */
export const secretBytes = 48

const secretPattern = /^whsec_[A-Za-z0-9+/]{64}$/

/** `whsec_` + the standard base64 of the given bytes (48 of them make the 64 characters the spec shows). */
export const formatSecret = (bytes: Uint8Array): string => secretPrefix + Encoding.encodeBase64(bytes)

/** A new subscription secret from the `Crypto` port's random source. */
export const generateSecret: Effect.Effect<string, never, Crypto> = Effect.gen(function*() {
  const hex = yield* (yield* Crypto).randomHex(secretBytes)
  return formatSecret(Either.getOrThrow(Encoding.decodeHex(hex)))
})

/** Whether a string has the shape of a secret Herald generates. */
export const isSecret = (secret: string): boolean => secretPattern.test(secret)

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

/** The HMAC key of the Standard Webhooks signature for this secret (see the module comment). */
export const standardWebhooksKey = (secret: string): Uint8Array => {
  if (secret.startsWith(secretPrefix)) {
    const tail = secret.slice(secretPrefix.length)
    if (tail.length > 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(tail)) {
      const decoded = Encoding.decodeBase64(tail)
      // Only the Right is used: a DecodeException carries its input, which here is the secret.
      if (Either.isRight(decoded)) return decoded.right
    }
  }
  return utf8(secret)
}

/** `sha256=` + lowercase hex HMAC-SHA256 of the raw body under the whole secret's UTF-8 bytes. */
export const serviceSignature = (
  secret: Redacted.Redacted<string>,
  body: string
): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) => crypto.hmacSha256Hex(Redacted.value(secret), body)).pipe(
    Effect.map((hex) => `sha256=${hex}`)
  )

/** `v1,` + base64 HMAC-SHA256 of `{webhookId}.{timestamp}.{body}` under the Standard Webhooks key. */
export const standardSignature = (
  secret: Redacted.Redacted<string>,
  webhookId: string,
  timestamp: number,
  body: string
): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(
    Crypto,
    (crypto) =>
      crypto.hmacSha256Base64(standardWebhooksKey(Redacted.value(secret)), `${webhookId}.${timestamp}.${body}`)
  ).pipe(Effect.map((signature) => `v1,${signature}`))

export interface SignInput {
  readonly secret: Redacted.Redacted<string>
  readonly event: { readonly id: string; readonly type: string }
  /** The per-attempt `X-Service-Delivery-Id`. */
  readonly deliveryId: string
  /** 1 to 6. */
  readonly attempt: number
  /** Unix epoch seconds. */
  readonly timestamp: number
  /** The exact body that will be sent. */
  readonly body: string
}

export type DeliveryHeaders = Readonly<Record<string, string>>

/** Every header of one delivery attempt, named as the spec and Standard Webhooks write them. */
export const headers = (input: SignInput): Effect.Effect<DeliveryHeaders, never, Crypto> =>
  Effect.gen(function*() {
    const timestamp = String(Math.trunc(input.timestamp))
    const service = yield* serviceSignature(input.secret, input.body)
    const standard = yield* standardSignature(input.secret, input.event.id, Math.trunc(input.timestamp), input.body)
    return {
      "Content-Type": "application/json",
      "User-Agent": "Service-Webhook/1.0",
      "X-Service-Event": input.event.type,
      "X-Service-Event-Id": input.event.id,
      "X-Service-Delivery-Id": input.deliveryId,
      "X-Service-Timestamp": timestamp,
      "X-Service-Signature": service,
      "X-Service-Attempt": String(input.attempt),
      // The event id, not the delivery id: stable across retries, so Standard Webhooks receivers dedupe.
      "webhook-id": input.event.id,
      "webhook-timestamp": timestamp,
      "webhook-signature": standard
    }
  })

/** The headers of one delivery attempt (`headers` under the name the deliverer may prefer). */
export const sign: (input: SignInput) => Effect.Effect<DeliveryHeaders, never, Crypto> = headers

/** The fields of an event the payload envelope needs (an `Event`, or a test event never stored). */
export interface PayloadEvent {
  readonly id: string
  readonly type: string
  readonly organizationId: string
  readonly createdAt: DateTime.DateTime
  readonly data: Readonly<Record<string, unknown>>
}

/** The payload envelope `{event, event_id, created_at, organization_id, data}` as the exact body to sign. */
export const buildPayload = (event: PayloadEvent): string =>
  JSON.stringify({
    event: event.type,
    event_id: event.id,
    created_at: DateTime.formatIso(event.createdAt),
    organization_id: event.organizationId,
    data: event.data
  })
