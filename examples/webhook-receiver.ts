/**
 * A webhook receiver for Herald's deliveries, with nothing but node:http and node:crypto.
 *
 *   WEBHOOK_SECRET=whsec_... PORT=8787 npx tsx examples/webhook-receiver.ts
 *
 * It verifies `X-Service-Signature` over the RAW body (never re-serialized JSON) in constant time,
 * rejects timestamps more than 5 minutes away, and deduplicates by event id (delivery is
 * at-least-once: a retry carries the same event id). `verifyStandard` shows the Standard Webhooks
 * check (`webhook-signature`), which also binds the timestamp.
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import { pathToFileURL } from "node:url"

export type Verdict =
  | { readonly ok: true; readonly eventId: string }
  | { readonly ok: false; readonly status: 400 | 401; readonly reason: string }

/** How far the delivery's timestamp may be from our clock. */
export const toleranceSeconds = 5 * 60

type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name.toLowerCase()]
  return typeof value === "string" ? value : value?.[0]
}

/** Constant time over the content; the lengths of our signatures are public anyway. */
const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a, "utf8")
  const y = Buffer.from(b, "utf8")
  return x.length === y.length && Crypto.timingSafeEqual(x, y)
}

const fresh = (timestamp: string | undefined, nowSeconds: number): boolean => {
  if (timestamp === undefined || !/^\d+$/.test(timestamp)) return false
  return Math.abs(nowSeconds - Number(timestamp)) <= toleranceSeconds
}

const now = (): number => Math.floor(Date.now() / 1000)

/**
 * Herald's own scheme: `X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, keyed with
 * the whole secret string (`whsec_` included) as UTF-8.
 */
export const verify = (secret: string, rawBody: Buffer, headers: Headers, nowSeconds: number = now()): Verdict => {
  const signature = header(headers, "x-service-signature")
  const eventId = header(headers, "x-service-event-id")
  if (signature === undefined || eventId === undefined) {
    return { ok: false, status: 400, reason: "missing signature headers" }
  }
  const expected = "sha256=" + Crypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(rawBody).digest("hex")
  if (!safeEqual(expected, signature)) return { ok: false, status: 401, reason: "bad signature" }
  if (!fresh(header(headers, "x-service-timestamp"), nowSeconds)) {
    return { ok: false, status: 400, reason: "timestamp too old or too far ahead" }
  }
  return { ok: true, eventId }
}

/**
 * Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed
 * with the base64-decoded part of the secret after `whsec_`. The header may list several signatures.
 */
export const verifyStandard = (
  secret: string,
  rawBody: Buffer,
  headers: Headers,
  nowSeconds: number = now()
): Verdict => {
  const id = header(headers, "webhook-id")
  const timestamp = header(headers, "webhook-timestamp")
  const signatures = header(headers, "webhook-signature")
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    return { ok: false, status: 400, reason: "missing signature headers" }
  }
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64")
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), rawBody])
  const expected = Crypto.createHmac("sha256", key).update(signed).digest("base64")
  const match = signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",", 2)
    return version === "v1" && value !== undefined && safeEqual(expected, value)
  })
  if (!match) return { ok: false, status: 401, reason: "bad signature" }
  if (!fresh(timestamp, nowSeconds)) return { ok: false, status: 400, reason: "timestamp too old or too far ahead" }
  return { ok: true, eventId: id }
}

/**
 * Event ids already handled. Retries of one delivery span under 8 hours (30 s, 2 min, 10 min, 1 h,
 * 6 h), so a day of memory covers them. Use a database table with a unique key in production.
 */
export class SeenEvents {
  private readonly seen = new Map<string, number>()
  constructor(private readonly keepSeconds: number = 24 * 60 * 60) {}

  has(eventId: string): boolean {
    return this.seen.has(eventId)
  }

  /** Call after the event was handled, so a failure before that lets the retry through. */
  add(eventId: string, nowSeconds: number = now()): void {
    for (const [id, at] of this.seen) {
      if (nowSeconds - at > this.keepSeconds) this.seen.delete(id)
    }
    this.seen.set(eventId, nowSeconds)
  }
}

/** Larger bodies are refused before the signature is computed. */
const maxBodyBytes = 1024 * 1024

export const createReceiver = (
  secret: string,
  handle: (payload: unknown, eventId: string) => void,
  seen: SeenEvents = new SeenEvents()
): Http.Server =>
  Http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end()
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        res.writeHead(413).end()
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (res.headersSent) return
      const rawBody = Buffer.concat(chunks)
      const verdict = verify(secret, rawBody, req.headers)
      if (!verdict.ok) {
        res.writeHead(verdict.status, { "Content-Type": "text/plain" }).end(verdict.reason)
        return
      }
      // A retry of an event already handled: acknowledge it so Herald stops retrying.
      if (seen.has(verdict.eventId)) {
        res.writeHead(200, { "Content-Type": "text/plain" }).end("duplicate")
        return
      }
      try {
        handle(JSON.parse(rawBody.toString("utf8")), verdict.eventId)
      } catch {
        res.writeHead(500, { "Content-Type": "text/plain" }).end("not handled")
        return
      }
      seen.add(verdict.eventId)
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok")
    })
  })

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET
  if (secret === undefined || secret === "") {
    console.error("Set WEBHOOK_SECRET to the whsec_... secret shown when the webhook was created.")
    process.exit(1)
  }
  const port = Number(process.env.PORT ?? "8787")
  createReceiver(secret, (payload, eventId) => {
    const event = (payload as { readonly event?: unknown }).event
    console.log(`received ${String(event)} (${eventId})`)
  }).listen(port, () => console.log(`webhook receiver on http://localhost:${port}`))
}
