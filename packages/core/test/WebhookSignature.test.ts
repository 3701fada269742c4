import { describe, expect, it } from "@effect/vitest"
import { Crypto } from "@herald/core/kernel/Crypto"
import * as WebhookSignature from "@herald/core/webhooks/WebhookSignature"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"

// The core cannot import the adapters' NodeCrypto; this test supplies the port itself.
const CryptoTest = Layer.succeed(
  Crypto,
  Crypto.of({
    randomHex: (bytes) => Effect.sync(() => NodeCrypto.randomBytes(bytes).toString("hex")),
    sha256Hex: (text) => Effect.sync(() => NodeCrypto.createHash("sha256").update(text).digest("hex")),
    hmacSha256Hex: (key, text) => Effect.sync(() => NodeCrypto.createHmac("sha256", key).update(text).digest("hex")),
    hmacSha256Base64: (key, text) =>
      Effect.sync(() => NodeCrypto.createHmac("sha256", key).update(text).digest("base64")),
    timingSafeEqual: (a, b) => a === b
  })
)

const secret = "whsec_" + Buffer.alloc(48, 7).toString("base64")

const input: WebhookSignature.SignInput = {
  secret: Redacted.make(secret),
  event: { id: "7d3c6f7e-0c4b-4b8e-9a53-2f1f0a7e2b11", type: "post.published" },
  deliveryId: "1b6f2c9e-5d0a-4a57-8f7e-3c2d1e0f9a88",
  attempt: 3,
  timestamp: 1_767_225_600,
  body: "{\"event\":\"post.published\",\"data\":{\"text\":\"héllo ✓\"}}"
}

describe("WebhookSignature", () => {
  it.effect("builds exactly the spec's headers and the Standard Webhooks headers", () =>
    Effect.gen(function*() {
      const headers = yield* WebhookSignature.headers(input)
      // Independent computation with node:crypto: whole secret's UTF-8 bytes; base64-decoded tail.
      const hex = NodeCrypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(input.body, "utf8").digest("hex")
      const b64 = NodeCrypto.createHmac("sha256", Buffer.from(secret.slice(6), "base64"))
        .update(`${input.event.id}.${input.timestamp}.${input.body}`, "utf8")
        .digest("base64")
      expect(headers).toEqual({
        "Content-Type": "application/json",
        "User-Agent": "Service-Webhook/1.0",
        "X-Service-Event": "post.published",
        "X-Service-Event-Id": input.event.id,
        "X-Service-Delivery-Id": input.deliveryId,
        "X-Service-Timestamp": "1767225600",
        "X-Service-Signature": `sha256=${hex}`,
        "X-Service-Attempt": "3",
        "webhook-id": input.event.id,
        "webhook-timestamp": "1767225600",
        "webhook-signature": `v1,${b64}`
      })
      expect(headers["X-Service-Signature"]).toMatch(/^sha256=[0-9a-f]{64}$/)
    }).pipe(Effect.provide(CryptoTest)))

  it.effect("webhook-id is the event id, so retries keep it; the delivery id changes per attempt", () =>
    Effect.gen(function*() {
      const first = yield* WebhookSignature.headers(input)
      const retry = yield* WebhookSignature.headers({
        ...input,
        attempt: 4,
        deliveryId: "2c7f3d0f-6e1b-4b68-9f8f-4d3e2f1a0b99",
        timestamp: input.timestamp + 120
      })
      expect(retry["webhook-id"]).toBe(first["webhook-id"])
      expect(retry["X-Service-Event-Id"]).toBe(first["X-Service-Event-Id"])
      expect(retry["X-Service-Delivery-Id"]).not.toBe(first["X-Service-Delivery-Id"])
      // The body is the same, so the body-only signature is too; the Standard one covers the timestamp.
      expect(retry["X-Service-Signature"]).toBe(first["X-Service-Signature"])
      expect(retry["webhook-signature"]).not.toBe(first["webhook-signature"])
    }).pipe(Effect.provide(CryptoTest)))

  it.effect("reproduces the published Standard Webhooks test vector", () =>
    Effect.gen(function*() {
      const signature = yield* WebhookSignature.standardSignature(
        Redacted.make("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        "{\"test\": 2432232314}"
      )
      expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }).pipe(Effect.provide(CryptoTest)))

  it.effect("generated secrets are whsec_ + base64 of 48 random bytes (64 characters)", () =>
    Effect.gen(function*() {
      const a = yield* WebhookSignature.generateSecret
      const b = yield* WebhookSignature.generateSecret
      expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{64}$/)
      expect(a.length - "whsec_".length).toBe(64)
      expect(WebhookSignature.isSecret(a)).toBe(true)
      expect(a).not.toBe(b)
      expect(Buffer.from(a.slice(6), "base64")).toHaveLength(48)
      expect(WebhookSignature.standardWebhooksKey(a)).toEqual(new Uint8Array(Buffer.from(a.slice(6), "base64")))
    }).pipe(Effect.provide(CryptoTest)))

  it("formatSecret is the base64 of the bytes behind the prefix", () => {
    const bytes = Uint8Array.from({ length: 48 }, (_, i) => i * 5)
    expect(WebhookSignature.formatSecret(bytes)).toBe("whsec_" + Buffer.from(bytes).toString("base64"))
  })

  it("a secret whose tail is not base64 is keyed with its whole UTF-8 bytes", () => {
    const odd = "whsec_" + "!".repeat(64)
    expect(WebhookSignature.isSecret(odd)).toBe(false)
    expect(WebhookSignature.standardWebhooksKey(odd)).toEqual(new TextEncoder().encode(odd))
    expect(WebhookSignature.standardWebhooksKey("plain")).toEqual(new TextEncoder().encode("plain"))
  })

  it("buildPayload writes the envelope in the spec's field order with an ISO 8601 created_at", () => {
    const body = WebhookSignature.buildPayload({
      id: input.event.id,
      type: "post.published",
      organizationId: "5a1e2d3c-4b5a-4697-8877-665544332211",
      createdAt: DateTime.unsafeMake("2026-01-01T00:00:00.000Z"),
      data: { post_id: "p", account_id: 42 }
    })
    expect(body).toBe(
      "{\"event\":\"post.published\",\"event_id\":\"7d3c6f7e-0c4b-4b8e-9a53-2f1f0a7e2b11\"," +
        "\"created_at\":\"2026-01-01T00:00:00.000Z\",\"organization_id\":\"5a1e2d3c-4b5a-4697-8877-665544332211\"," +
        "\"data\":{\"post_id\":\"p\",\"account_id\":42}}"
    )
  })

  it.effect("sign is the same header builder", () =>
    Effect.gen(function*() {
      expect(yield* WebhookSignature.sign(input)).toEqual(yield* WebhookSignature.headers(input))
    }).pipe(Effect.provide(CryptoTest)))
})
