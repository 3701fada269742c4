/**
 * Traces over OTLP/HTTP (JSON), to a receiver started here: a server built in this process with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set publishes a post to Telegram (the Bot API fake) and delivers its
 * `post.published` webhook; the exported spans make one trace from `POST /api/v1/posts` (the server
 * span, its root) through the publish (`Dispatcher.publish`, in another fiber, joined through the
 * context stored with the post) to the Bot API call (a client span) and the webhook delivery
 * (`Webhooks.deliver` and its client span). No exported attribute holds the bot token; the
 * dispatcher's polling and health probes are not traced.
 */
import * as SpanUrls from "@herald/adapters/net/SpanUrls"
import * as OtlpTracing from "@herald/http/OtlpTracing"
import * as Http from "node:http"
import type * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TelegramFake from "../../packages/adapters/test/platforms/fakes/TelegramFake.js"
import * as InProcessServer from "../support/InProcessServer.js"

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
}

interface AnyValue {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly boolValue?: boolean
  readonly doubleValue?: number
}

const valueOf = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue === undefined ? undefined : Number(v.intValue)) ?? v.boolValue ?? v.doubleValue

/** Spans of an OTLP/JSON `ExportTraceServiceRequest`. */
const spansOf = (body: unknown): Array<Span> => {
  const request = body as {
    resourceSpans: Array<{
      scopeSpans: Array<{
        spans: Array<{
          traceId: string
          spanId: string
          parentSpanId?: string
          name: string
          kind: number
          attributes: Array<{ key: string; value: AnyValue }>
        }>
      }>
    }>
  }
  return request.resourceSpans.flatMap((r) =>
    r.scopeSpans.flatMap((s) =>
      s.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
        name: span.name,
        kind: span.kind,
        attributes: Object.fromEntries(span.attributes.map((a) => [a.key, valueOf(a.value)]))
      }))
    )
  )
}

const kinds = { internal: 1, server: 2, client: 3 }

/** One node:http server: OTLP traces at POST /v1/traces, webhook deliveries at POST /hook. */
const startReceiver = async () => {
  const exports: Array<string> = []
  const hooks: Array<{ event: string; data: Record<string, unknown> }> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      if (req.url === "/v1/traces") exports.push(body)
      else hooks.push(JSON.parse(body) as { event: string; data: Record<string, unknown> })
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const base = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
  return {
    base,
    exports,
    hooks,
    spans: () => exports.flatMap((body) => spansOf(JSON.parse(body))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const until = async (what: string, check: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

let receiver: Awaited<ReturnType<typeof startReceiver>>
let telegram: TelegramFake.TelegramFake
let server: InProcessServer.InProcessServer
const names = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_BSP_SCHEDULE_DELAY",
  "HERALD_TELEGRAM_API_URL",
  "HERALD_WEBHOOKS_ALLOW_PRIVATE"
]
const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]))

beforeAll(async () => {
  receiver = await startReceiver()
  telegram = await TelegramFake.start()
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    HERALD_TELEGRAM_API_URL: telegram.server.url,
    HERALD_WEBHOOKS_ALLOW_PRIVATE: "true"
  })
  server = await InProcessServer.start({ sandbox: false, around: OtlpTracing.layerFromEnv })
})

afterAll(async () => {
  await server?.stop()
  await telegram?.server.close()
  await receiver?.close()
  for (const [n, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[n]
    else process.env[n] = v
  }
})

describe("OTLP traces", () => {
  it("one connected trace from POST /posts through the publish and the Bot API call to the webhook delivery", async () => {
    const connected = await server.request("POST", "/api/v1/accounts/connect-credential", {
      body: { platform: "telegram", bot_token: TelegramFake.botToken, channel: "@herald_news" }
    })
    expect(connected.status).toBe(200)
    const accountId = (connected.json as { data: { account: { id: number } } }).data.account.id
    const hook = await server.request("POST", "/api/v1/webhooks", {
      body: { url: `${receiver.base}/hook`, events: ["post.published"] }
    })
    expect(hook.status).toBe(201)

    expect((await server.request("GET", "/health/ready", { key: null })).status).toBe(200)
    const created = await server.request("POST", "/api/v1/posts", {
      body: { content: "Traced", account_ids: [accountId] }
    })
    expect(created.status).toBe(201)
    const postId = (created.json as { data: { id: string } }).data.id

    await until(
      "the post.published delivery",
      () => receiver.hooks.some((h) => h.event === "post.published" && h.data["post_id"] === postId)
    )
    expect(telegram.sent.length).toBe(1)
    const delivered = () => receiver.spans().find((s) => s.name === "Webhooks.deliver")
    await until(
      "the delivery's spans to be exported",
      () => delivered() !== undefined && receiver.spans().some((s) => s.parentSpanId === delivered()!.spanId)
    )

    const spans = receiver.spans()
    const request = spans.find((s) =>
      s.kind === kinds.server && s.attributes["http.request.method"] === "POST" &&
      s.attributes["url.path"] === "/api/v1/posts"
    )
    expect(request).toBeDefined()
    const trace = spans.filter((s) => s.traceId === request!.traceId)
    const byId = new Map(trace.map((s) => [s.spanId, s]))
    // A tree: the request's server span is the only root; every other span's parent was exported.
    expect(trace.filter((s) => s.parentSpanId === undefined)).toEqual([request])
    for (const s of trace) if (s !== request) expect([s.name, byId.has(s.parentSpanId!)]).toEqual([s.name, true])
    const ancestors = (s: Span): Array<string> =>
      s.parentSpanId === undefined ? [] : [s.parentSpanId, ...ancestors(byId.get(s.parentSpanId)!)]

    const publish = trace.find((s) => s.name === "Dispatcher.publish")!
    expect(publish.attributes).toMatchObject({
      "herald.platform": "telegram",
      "herald.post_id": postId,
      "herald.attempt": 1
    })
    expect(ancestors(publish)).toContain(request!.spanId)

    const botApi = trace.filter((s) => s.kind === kinds.client && s.parentSpanId === publish.spanId)
    expect(
      botApi.map((
        s
      ) => [
        s.name,
        s.attributes["server.address"],
        s.attributes["url.path"],
        s.attributes["http.response.status_code"]
      ])
    )
      .toEqual([["http.client POST", telegram.server.url, "/{redacted}/sendMessage", 200]])

    const deliver = trace.find((s) => s.name === "Webhooks.deliver")!
    expect(deliver.parentSpanId).toBe(publish.spanId)
    expect(deliver.attributes).toMatchObject({ "herald.event_type": "post.published", "herald.attempt": 1 })
    const post = trace.filter((s) => s.kind === kinds.client && s.parentSpanId === deliver.spanId)
    expect(post.map((s) => [s.name, s.attributes["server.address"], s.attributes["http.response.status_code"]]))
      .toEqual([["http.client POST", receiver.base, 200]])

    // Polling and probes are not traced: no round of the dispatcher's loop, no health check.
    expect(spans.filter((s) => s.name === "Dispatcher.runOnce" || s.name === "DispatchStore.claimDue")).toEqual([])
    expect(spans.filter((s) => String(s.attributes["url.path"] ?? "").startsWith("/health"))).toEqual([])

    // The bot token's secret half is in no span of any trace.
    const secret = TelegramFake.botToken.split(":")[1]!
    expect(receiver.exports.some((body) => body.includes(secret))).toBe(false)
  })
})

describe("OtlpTracing.configFromEnv", () => {
  it("on with an endpoint (base or full URL), off without one or when disabled; protocol, headers, service", () => {
    expect(OtlpTracing.configFromEnv({})._tag).toBe("None")
    const base = OtlpTracing.configFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D1, other = two"
    })
    expect(base._tag === "Some" && base.value).toMatchObject({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      headers: { "x-api-key": "abc=1", other: "two" },
      serviceName: "herald"
    })
    const full = OtlpTracing.configFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/api/v1/otlp",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "herald-eu"
    })
    expect(full._tag === "Some" && full.value).toMatchObject({
      url: "https://traces.example/api/v1/otlp",
      protocol: "http/json",
      serviceName: "herald-eu"
    })
    expect(OtlpTracing.configFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })._tag)
      .toBe("None")
    expect(
      OtlpTracing.configFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })._tag
    )
      .toBe("None")
  })

  it("URLs in spans keep their origin and route, not what may be a credential", () => {
    expect(SpanUrls.scrubUrl("https://api.telegram.org/bot123:AAH-secret/sendMessage?chat_id=@x&token=t"))
      .toBe("https://api.telegram.org/{redacted}/sendMessage?chat_id={redacted}&token={redacted}")
    expect(SpanUrls.scrubPath(`/api/webhooks/123456789/${"a".repeat(68)}`)).toBe("/api/webhooks/123456789/{redacted}")
    expect(SpanUrls.scrubPath("/api/v1/posts/0b8f5c1e-3c1a-4c55-9a43-7d0c2b0e9f11")).toBe(
      "/api/v1/posts/0b8f5c1e-3c1a-4c55-9a43-7d0c2b0e9f11"
    )
  })
})
