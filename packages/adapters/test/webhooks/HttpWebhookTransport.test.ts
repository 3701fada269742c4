import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as WebhookSignature from "@herald/core/webhooks/WebhookSignature"
import { WebhookTransport } from "@herald/core/webhooks/WebhookTransport"
import type { WebhookRequest, WebhookSendError } from "@herald/core/webhooks/WebhookTransport"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"
import * as Crypto from "../../src/NodeCrypto.js"
import * as HttpWebhookTransport from "../../src/webhooks/HttpWebhookTransport.js"
import * as Receivers from "./Receivers.js"

const secret = "whsec_" + NodeCrypto.randomBytes(48).toString("base64")

const event = {
  id: "0f8fad5b-d9cb-469f-a165-70867728950e",
  type: "post.published",
  organizationId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  createdAt: DateTime.unsafeMake("2026-06-11T10:00:00.000Z"),
  data: { post_id: "3fa85f64-5717-4562-b3fc-2c963f66afa6", account_id: 12, account_name: "Zoë ✓" }
}

/** A real signed request, as the deliverer will build it. */
const signedRequest = (url: string, timeout: Duration.DurationInput = "10 seconds") =>
  Effect.gen(function*() {
    const body = WebhookSignature.buildPayload(event)
    const headers = yield* WebhookSignature.headers({
      secret: Redacted.make(secret),
      event,
      deliveryId: "9b2e4c1a-1111-4f2a-8c3d-5e6f7a8b9c0d",
      attempt: 2,
      timestamp: 1_781_172_000,
      body
    })
    return { url, headers, body, timeout } satisfies WebhookRequest
  }).pipe(Effect.provide(Crypto.layer))

const send = (options: HttpWebhookTransport.TransportOptions, url: string, timeout?: Duration.DurationInput) =>
  Effect.gen(function*() {
    const transport = yield* WebhookTransport
    return yield* transport.send(yield* signedRequest(url, timeout))
  }).pipe(Effect.provide(HttpWebhookTransport.layer(options)))

const sendEither = (options: HttpWebhookTransport.TransportOptions, url: string, timeout?: Duration.DurationInput) =>
  Effect.either(send(options, url, timeout))

const failure = (result: Either.Either<unknown, WebhookSendError>): WebhookSendError => {
  if (Either.isRight(result)) throw new Error("expected a failed send")
  return result.left
}

// Independent verifiers written here with node:crypto, not with WebhookSignature.
const expectedServiceSignature = (body: Buffer) =>
  "sha256=" + NodeCrypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(body).digest("hex")
const expectedStandardSignature = (id: string, timestamp: string, body: Buffer) =>
  "v1," + NodeCrypto.createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64"))
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]))
    .digest("base64")

describe("HttpWebhookTransport over HTTP (allowPrivate, 127.0.0.1)", () => {
  let receiver: Receivers.Receiver
  let base: string
  const options: HttpWebhookTransport.TransportOptions = { allowPrivate: true, timeout: "300 millis" }
  beforeAll(async () => {
    receiver = await Receivers.startHttp()
    base = `http://127.0.0.1:${receiver.port}`
  })
  afterAll(() => receiver.close())

  it.live("sends the raw body with every header, and both signatures verify independently", () =>
    Effect.gen(function*() {
      const response = yield* send(options, `${base}/ok/1?x=1`)
      expect(response.status).toBe(200)
      expect(response.body).toBe("thanks")
      expect(response.durationMs).toBeGreaterThanOrEqual(0)
      const got = receiver.received.find((r) => r.path === "/ok/1?x=1")!
      expect(got.method).toBe("POST")
      expect(got.body.toString("utf8")).toBe(WebhookSignature.buildPayload(event))
      expect(JSON.parse(got.body.toString("utf8"))).toEqual({
        event: "post.published",
        event_id: event.id,
        created_at: "2026-06-11T10:00:00.000Z",
        organization_id: event.organizationId,
        data: event.data
      })
      const h = got.headers
      expect(h["content-type"]).toBe("application/json")
      expect(h["user-agent"]).toBe("Service-Webhook/1.0")
      expect(h["x-service-event"]).toBe("post.published")
      expect(h["x-service-event-id"]).toBe(event.id)
      expect(h["x-service-delivery-id"]).toBe("9b2e4c1a-1111-4f2a-8c3d-5e6f7a8b9c0d")
      expect(h["x-service-timestamp"]).toBe("1781172000")
      expect(h["x-service-attempt"]).toBe("2")
      expect(h["x-service-signature"]).toBe(expectedServiceSignature(got.body))
      expect(h["webhook-id"]).toBe(event.id)
      expect(h["webhook-timestamp"]).toBe("1781172000")
      expect(h["webhook-signature"]).toBe(expectedStandardSignature(event.id, "1781172000", got.body))
      expect(h["host"]).toBe(`127.0.0.1:${receiver.port}`)
      expect(h["content-length"]).toBe(String(got.body.length))
      // The secret itself never travels.
      expect(got.rawHeaders.join("\n")).not.toContain(secret)
      expect(got.body.toString("utf8")).not.toContain(secret)
    }))

  it.live("a non-2xx answer is a response, with its body", () =>
    Effect.gen(function*() {
      const response = yield* send(options, `${base}/fail`)
      expect(response.status).toBe(500)
      expect(response.body).toBe("boom")
    }))

  it.live("does not follow redirects: the 3xx is the answer", () =>
    Effect.gen(function*() {
      const response = yield* send(options, `${base}/redirect`)
      expect(response.status).toBe(302)
      expect(receiver.received.some((r) => r.path === "/ok-after-redirect")).toBe(false)
    }))

  it.live("times out a receiver that never answers and closes the connection", () =>
    Effect.gen(function*() {
      const before = receiver.received.length
      const error = failure(yield* sendEither(options, `${base}/hang`))
      expect(error.reason).toBe("timeout")
      expect(error.message).toBe("no complete answer within 300ms")
      expect(receiver.received.length).toBe(before + 1)
      // Resolves only once the server saw every connection close, ours included.
      yield* Effect.promise(() => receiver.connectionsClosed())
    }))

  it.live("the timeout covers the whole exchange: headers without the end of the body time out too", () =>
    Effect.gen(function*() {
      const error = failure(yield* sendEither(options, `${base}/hang-body`))
      expect(error.reason).toBe("timeout")
    }))

  it.live("the request's own timeout applies when shorter than the transport's", () =>
    Effect.gen(function*() {
      const error = failure(
        yield* sendEither({ allowPrivate: true, timeout: "10 seconds" }, `${base}/hang`, "200 millis")
      )
      expect(error.reason).toBe("timeout")
      expect(error.message).toBe("no complete answer within 200ms")
    }))

  it.live("keeps only the first 2048 bytes of a 1 MB answer", () =>
    Effect.gen(function*() {
      const response = yield* send(options, `${base}/big`)
      expect(response.status).toBe(200)
      expect(Buffer.byteLength(response.body, "utf8")).toBe(2048)
      expect(response.body).toBe("a".repeat(2048))
    }))

  it.live("cuts at a character boundary: at most 2048 UTF-8 bytes, no broken character", () =>
    Effect.gen(function*() {
      const response = yield* send(options, `${base}/big-utf8`)
      expect(Buffer.byteLength(response.body, "utf8")).toBe(2047)
      expect(response.body).toBe("x" + "é".repeat(1023))
      expect(response.body).not.toContain("\uFFFD")
    }))

  it.live("stops reading after 2 KB: the receiver cannot push its whole answer through", () =>
    Effect.gen(function*() {
      const response = yield* send(options, `${base}/stream`)
      expect(Buffer.byteLength(response.body, "utf8")).toBe(2048)
      yield* Effect.promise(() => receiver.streamed.closed)
      expect(receiver.streamed.finished).toBe(false)
      expect(receiver.streamed.bytes).toBeLessThan(Receivers.streamLimit)
    }))

  it.live("a closed port is a network failure", () =>
    Effect.gen(function*() {
      const error = failure(yield* sendEither(options, "http://127.0.0.1:1/ok"))
      expect(error.reason).toBe("network")
      expect(error.message).toContain("ECONNREFUSED")
    }))
})

if (!Receivers.opensslAvailable) {
  console.warn("HttpWebhookTransport HTTPS tests skipped: the openssl command is not installed")
}

describe.skipIf(!Receivers.opensslAvailable)(
  "HttpWebhookTransport over HTTPS (self-signed certificate from openssl)",
  () => {
    let certificate: Receivers.Certificate
    let receiver: Receivers.Receiver
    const resolved: Array<string> = []
    // receiver.test is resolved by the test, to 127.0.0.1: the URL's name must still be Host and SNI.
    const resolve = (hostname: string) => {
      resolved.push(hostname)
      return Promise.resolve([{ address: "127.0.0.1", family: 4 as const }])
    }
    beforeAll(async () => {
      certificate = Receivers.makeCertificate()
      receiver = await Receivers.startHttps(certificate)
    })
    afterAll(() => receiver.close())

    it.live("connects to the checked address while keeping the URL's Host and TLS server name", () =>
      Effect.gen(function*() {
        const options: HttpWebhookTransport.TransportOptions = {
          allowPrivate: true,
          timeout: "2 seconds",
          ca: certificate.cert,
          resolve
        }
        const response = yield* send(options, `https://receiver.test:${receiver.port}/ok/tls`)
        expect(response.status).toBe(200)
        const got = receiver.received.find((r) => r.path === "/ok/tls")!
        expect(got.headers["host"]).toBe(`receiver.test:${receiver.port}`)
        expect(got.servername).toBe("receiver.test")
        expect(got.headers["x-service-signature"]).toBe(expectedServiceSignature(got.body))
        expect(got.headers["webhook-signature"])
          .toBe(expectedStandardSignature(event.id, String(got.headers["webhook-timestamp"]), got.body))
        // Resolved once, by the guard; the connection asked nobody else.
        expect(resolved).toEqual(["receiver.test"])
      }))

    it.live("verifies the receiver's certificate: an untrusted one is a network failure", () =>
      Effect.gen(function*() {
        const error = failure(
          yield* sendEither(
            { allowPrivate: true, timeout: "2 seconds", resolve },
            `https://receiver.test:${receiver.port}/ok/x`
          )
        )
        expect(error.reason).toBe("network")
        expect(error.message).toMatch(/self[- ]signed/i)
        expect(receiver.received.some((r) => r.path === "/ok/x")).toBe(false)
      }))

    it.live("a literal IP in an https URL is checked as it is and connected to directly", () =>
      Effect.gen(function*() {
        const response = yield* send(
          { allowPrivate: true, timeout: "2 seconds", ca: certificate.cert },
          `https://127.0.0.1:${receiver.port}/ok/literal`
        )
        expect(response.status).toBe(200)
        expect(receiver.received.find((r) => r.path === "/ok/literal")!.headers["host"]).toBe(
          `127.0.0.1:${receiver.port}`
        )
      }))
  }
)

describe("HttpWebhookTransport refuses unsafe targets without allowPrivate", () => {
  let receiver: Receivers.Receiver
  const options: HttpWebhookTransport.TransportOptions = { allowPrivate: false, timeout: "2 seconds" }
  beforeAll(async () => {
    receiver = await Receivers.startHttps(Receivers.makeCertificate())
  })
  afterAll(() => receiver.close())

  it.live("private, loopback, metadata and mapped addresses, in every spelling, and localhost", () =>
    Effect.gen(function*() {
      const p = receiver.port
      const urls = [
        `https://127.0.0.1:${p}/ok/r?token=tok-123`,
        `https://2130706433:${p}/ok/r?token=tok-123`,
        `https://0177.0.0.1:${p}/ok/r?token=tok-123`,
        `https://0x7f.1:${p}/ok/r?token=tok-123`,
        `https://[::ffff:127.0.0.1]:${p}/ok/r?token=tok-123`,
        `https://localhost:${p}/ok/r?token=tok-123`,
        `https://10.0.0.1/ok/r?token=tok-123`,
        `https://172.16.5.4/ok/r?token=tok-123`,
        `https://192.168.0.1/ok/r?token=tok-123`,
        `https://169.254.169.254/latest/meta-data?token=tok-123`,
        `https://100.64.0.1/ok/r?token=tok-123`,
        `https://[::1]:${p}/ok/r?token=tok-123`,
        `https://[fe80::1]/ok/r?token=tok-123`,
        `https://[fd00::1]/ok/r?token=tok-123`,
        `https://0.0.0.0:${p}/ok/r?token=tok-123`
      ]
      for (const url of urls) {
        const error = failure(yield* sendEither(options, url))
        expect(error.reason, url).toBe("refused_address")
        expect(error.message).not.toContain("tok-123")
        expect(error.message).not.toContain(secret)
      }
      expect(receiver.received).toEqual([])
    }))

  it.live("plain http is refused, even to a public address", () =>
    Effect.gen(function*() {
      const error = failure(yield* sendEither(options, "http://93.184.215.14/hook"))
      expect(error.reason).toBe("invalid_url")
      expect(error.message).toBe("only https URLs are allowed")
    }))

  it.live("an unparsable URL is invalid_url", () =>
    Effect.gen(function*() {
      const error = failure(yield* sendEither(options, "https://exa mple.com/"))
      expect(error.reason).toBe("invalid_url")
    }))

  it.live("allowPrivate still refuses the cloud metadata address", () =>
    Effect.gen(function*() {
      const error = failure(yield* sendEither({ allowPrivate: true }, "http://169.254.169.254/latest/meta-data"))
      expect(error.reason).toBe("refused_address")
    }))
})

describe("HttpWebhookTransport helpers", () => {
  it("the default timeout is 10 seconds, and the shorter of request and transport wins", () => {
    expect(Duration.toMillis(HttpWebhookTransport.defaultTimeout)).toBe(10_000)
    expect(Duration.toMillis(HttpWebhookTransport.effectiveTimeout("30 seconds", undefined))).toBe(10_000)
    expect(Duration.toMillis(HttpWebhookTransport.effectiveTimeout("10 seconds", "300 millis"))).toBe(300)
    expect(Duration.toMillis(HttpWebhookTransport.effectiveTimeout("1 second", "10 seconds"))).toBe(1000)
  })

  it("decodeCapped never returns more than the cap in UTF-8 bytes, even from invalid bytes", () => {
    const invalid = Buffer.alloc(2048, 0xff)
    const text = HttpWebhookTransport.decodeCapped(invalid, 2048, true)
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(2048)
    expect(HttpWebhookTransport.decodeCapped(Buffer.from("héllo"), 2048, false)).toBe("héllo")
  })
})
