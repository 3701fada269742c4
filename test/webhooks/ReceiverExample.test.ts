/**
 * The receiver example (examples/webhook-receiver.ts) against what the transport really sends.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as HttpWebhookTransport from "@herald/adapters/webhooks/HttpWebhookTransport"
import * as WebhookSignature from "@herald/core/webhooks/WebhookSignature"
import { WebhookTransport } from "@herald/core/webhooks/WebhookTransport"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Receiver from "../../examples/webhook-receiver.js"

interface Captured {
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Buffer
}

const listen = (server: Http.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as Net.AddressInfo).port)))

const close = (server: Http.Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

describe("examples/webhook-receiver.ts", () => {
  let secret: string
  const captured: Array<Captured> = []
  const capture = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      captured.push({ headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(204).end()
    })
  })
  const handled: Array<{ readonly payload: unknown; readonly eventId: string }> = []
  let receiver: Http.Server
  let capturePort = 0
  let receiverPort = 0

  const event = {
    id: "6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b",
    type: "post.published",
    organizationId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    createdAt: DateTime.unsafeMake("2026-06-11T10:00:00.000Z"),
    data: { post_id: "3fa85f64-5717-4562-b3fc-2c963f66afa6", text: "naïve café ✓" }
  }

  /** One delivery attempt through the real signing and the real transport. */
  const deliver = (url: string, attempt: number) =>
    Effect.gen(function*() {
      const body = WebhookSignature.buildPayload(event)
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const headers = yield* WebhookSignature.headers({
        secret: Redacted.make(secret),
        event,
        deliveryId: crypto.randomUUID(),
        attempt,
        timestamp,
        body
      })
      return yield* (yield* WebhookTransport).send({ url, headers, body, timeout: "5 seconds" })
    }).pipe(
      Effect.provide(HttpWebhookTransport.layer({ allowPrivate: true })),
      Effect.provide(NodeCrypto.layer)
    )

  beforeAll(async () => {
    secret = await Effect.runPromise(WebhookSignature.generateSecret.pipe(Effect.provide(NodeCrypto.layer)))
    receiver = Receiver.createReceiver(secret, (payload, eventId) => handled.push({ payload, eventId }))
    capturePort = await listen(capture)
    receiverPort = await listen(receiver)
  })
  afterAll(async () => {
    await close(capture)
    await close(receiver)
  })

  it.live("verify and verifyStandard accept the transport's real output and reject a tampered body", () =>
    Effect.gen(function*() {
      const response = yield* deliver(`http://127.0.0.1:${capturePort}/hook`, 1)
      expect(response.status).toBe(204)
      const { body, headers } = captured[0]!
      expect(Receiver.verify(secret, body, headers)).toEqual({ ok: true, eventId: event.id })
      expect(Receiver.verifyStandard(secret, body, headers)).toEqual({ ok: true, eventId: event.id })

      const tampered = Buffer.from(body.toString("utf8").replace("café", "cafe"))
      expect(Receiver.verify(secret, tampered, headers)).toMatchObject({ ok: false, status: 401 })
      expect(Receiver.verifyStandard(secret, tampered, headers)).toMatchObject({ ok: false, status: 401 })
      // Re-serialized JSON is not the raw body: key order and escapes may differ, so never verify it.
      const other = WebhookSignature.secretPrefix + Buffer.alloc(48, 1).toString("base64")
      expect(Receiver.verify(other, body, headers)).toMatchObject({ ok: false, status: 401 })
      expect(Receiver.verifyStandard(other, body, headers)).toMatchObject({ ok: false, status: 401 })
    }))

  it.live("timestamps more than 5 minutes away are rejected", () =>
    Effect.sync(() => {
      const { body, headers } = captured[0]!
      const sent = Number(headers["x-service-timestamp"])
      expect(Receiver.verify(secret, body, headers, sent + 300)).toMatchObject({ ok: true })
      expect(Receiver.verify(secret, body, headers, sent + 301)).toMatchObject({ ok: false, status: 400 })
      expect(Receiver.verifyStandard(secret, body, headers, sent + 301)).toMatchObject({ ok: false, status: 400 })
      expect(Receiver.verify(secret, body, headers, sent - 301)).toMatchObject({ ok: false, status: 400 })
    }))

  it.live("the runnable receiver handles a delivery once and acknowledges its retry as a duplicate", () =>
    Effect.gen(function*() {
      const first = yield* deliver(`http://127.0.0.1:${receiverPort}/webhooks`, 1)
      expect(first).toMatchObject({ status: 200, body: "ok" })
      const retry = yield* deliver(`http://127.0.0.1:${receiverPort}/webhooks`, 2)
      expect(retry).toMatchObject({ status: 200, body: "duplicate" })
      expect(handled).toHaveLength(1)
      expect(handled[0]!.eventId).toBe(event.id)
      expect(handled[0]!.payload).toMatchObject({ event: "post.published", event_id: event.id, data: event.data })
    }))

  it("docs/webhooks.md shows exactly this file's code", () => {
    const example = Fs.readFileSync(new URL("../../examples/webhook-receiver.ts", import.meta.url), "utf8")
    const docs = Fs.readFileSync(new URL("../../docs/webhooks.md", import.meta.url), "utf8")
    expect(docs).toContain("```ts\n" + example + "```")
  })
})
