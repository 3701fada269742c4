/**
 * The request middleware in-process (no socket), over a probe API with a JSON body: bad JSON,
 * schema failures, domain errors with the catalogue's status and an override, 429 headers, defects.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { DomainError } from "@herald/core/kernel/Errors"
import * as IdGenerator from "@herald/core/kernel/IdGenerator"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import { afterAll, describe, expect, it } from "vitest"
import * as ApiGroup from "../src/ApiGroup.js"
import * as Envelope from "../src/Envelope.js"
import * as RequestMiddleware from "../src/RequestMiddleware.js"

const secret = "pe_live_0123456789abcdef0123456789abcdef"

const ProbeGroup = HttpApiGroup.make("probe")
  .add(
    HttpApiEndpoint.post("probe", "/api/v1/probe")
      .setPayload(ApiGroup.payload(Schema.Struct({ name: Schema.String, count: Schema.Int })))
      .addSuccess(Envelope.ok(Schema.Struct({ name: Schema.String })))
  )
  .addError(ApiGroup.errors.badRequest)

const ProbeLive = HttpApiBuilder.group(
  ApiGroup.apiOf(ProbeGroup),
  "probe",
  (handlers) =>
    handlers.handle("probe", ({ payload }) => {
      switch (payload.name) {
        case "conflict":
          return DomainError.fail("invalid_post_status", "Only drafts can be scheduled", undefined, 409)
        case "limited":
          return DomainError.fail("rate_limit_exceeded", "slow down", {
            limit: 5,
            remaining: 0,
            reset_at: "2099-01-01T00:01:00.000Z"
          })
        case "posting":
          return DomainError.fail("daily_limit_reached", "no more today")
        case "boom":
          return Effect.die(new Error(`database password is hunter2, key ${secret}`))
        default:
          return Effect.succeed({ name: payload.name })
      }
    })
)

const { dispose, handler } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(
    HttpApiBuilder.api(ApiGroup.apiOf(ProbeGroup)).pipe(Layer.provide(ProbeLive)),
    RequestMiddleware.layer.pipe(Layer.provide(IdGenerator.layerSequential)),
    HttpServer.layerContext,
    Logger.minimumLogLevel(LogLevel.None)
  )
)
afterAll(() => dispose())

const post = async (body: string, contentType = "application/json") => {
  const res = await handler(
    new Request("http://localhost/api/v1/probe", { method: "POST", body, headers: { "content-type": contentType } })
  )
  return { status: res.status, headers: res.headers, text: await res.text() }
}

interface ErrorBody {
  readonly data: null
  readonly error: { code: string; message: string; retryable: boolean; details?: Record<string, unknown> }
  readonly meta: { request_id: string; timestamp: string }
}

describe("request middleware", () => {
  it("wraps success data in the envelope with the request id of the X-Request-Id header", async () => {
    const res = await post(JSON.stringify({ name: "ok", count: 1 }))
    expect(res.status).toBe(200)
    const body = JSON.parse(res.text)
    expect(body).toEqual({
      data: { name: "ok" },
      error: null,
      meta: { request_id: res.headers.get("x-request-id"), timestamp: expect.stringMatching(/Z$/) }
    })
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
    expect(res.headers.get("retry-after")).toBeNull()
  })

  it("answers malformed JSON with 400 invalid_json", async () => {
    const res = await post("{\"name\": \"a\u0001b\", ")
    expect(res.status).toBe(400)
    const body: ErrorBody = JSON.parse(res.text)
    expect(body.data).toBeNull()
    expect(body.error).toMatchObject({ code: "invalid_json", retryable: false })
    expect(body.meta.request_id).toBe(res.headers.get("x-request-id"))
  })

  it("answers schema failures with 400 validation_error and details.validation_errors [{path, message}]", async () => {
    const res = await post(JSON.stringify({ name: 3 }))
    expect(res.status).toBe(400)
    const body: ErrorBody = JSON.parse(res.text)
    expect(body.error.code).toBe("validation_error")
    expect(body.error.retryable).toBe(false)
    const errors = body.error.details?.validation_errors as Array<{ path: string; message: string }>
    expect(errors.map((e) => e.path).sort()).toEqual(["count", "name"])
    for (const e of errors) expect(typeof e.message).toBe("string")
  })

  it("takes the status from the catalogue unless the error overrides it, retryable from the code", async () => {
    const res = await post(JSON.stringify({ name: "conflict", count: 1 }))
    expect(res.status).toBe(409)
    const body: ErrorBody = JSON.parse(res.text)
    expect(body.error).toEqual({
      code: "invalid_post_status",
      message: "Only drafts can be scheduled",
      retryable: false
    })
    expect(body.error).not.toHaveProperty("status")
  })

  it("adds the rate-limit headers and Retry-After to an API-key 429", async () => {
    const res = await post(JSON.stringify({ name: "limited", count: 1 }))
    expect(res.status).toBe(429)
    const body: ErrorBody = JSON.parse(res.text)
    expect(body.error.retryable).toBe(true)
    expect(body.error.details).toEqual({ limit: 5, remaining: 0, reset_at: "2099-01-01T00:01:00.000Z" })
    expect(res.headers.get("x-ratelimit-limit")).toBe("5")
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0")
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2099-01-01T00:01:00.000Z") / 1000))
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("gives every other 429 a Retry-After of 30 seconds and no X-RateLimit headers", async () => {
    const res = await post(JSON.stringify({ name: "posting", count: 1 }))
    expect(res.status).toBe(429)
    expect(res.headers.get("retry-after")).toBe("30")
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
  })

  it("answers a defect with a generic 500 internal_error that leaks nothing", async () => {
    const res = await post(JSON.stringify({ name: "boom", count: 1 }))
    expect(res.status).toBe(500)
    const body: ErrorBody = JSON.parse(res.text)
    expect(body.error).toEqual({ code: "internal_error", message: "An internal error occurred", retryable: true })
    expect(res.text).not.toContain("hunter2")
    expect(res.text).not.toContain(secret)
  })

  it("answers an unknown route with 404 not_found", async () => {
    const res = await handler(new Request("http://localhost/api/v1/nowhere"))
    expect(res.status).toBe(404)
    const body = (await res.json()) as ErrorBody
    expect(body.error).toMatchObject({ code: "not_found", retryable: false })
  })
})

describe("the request's log line", () => {
  it("carries request_id, the handler's fields and duration_ms, and leaves none of them on the fiber", async () => {
    const lines: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
    const logger = Logger.make(({ annotations, message }) => {
      lines.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
    })
    const program = Effect.gen(function*() {
      const wrap = yield* RequestMiddleware.make
      const app = wrap(Effect.as(RequestMiddleware.annotateRequestLog("post_id", "p1"), HttpServerResponse.text("ok")))
      const request = HttpServerRequest.fromWeb(new Request("http://localhost/api/v1/accounts"))
      yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, request)
      yield* Effect.log("after")
    }).pipe(
      Effect.annotateLogs("outer", "kept"),
      Effect.provide(IdGenerator.layerSequential),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    await Effect.runPromise(program)
    expect(lines).toHaveLength(2)
    expect(Object.keys(lines[0]!.annotations).sort()).toEqual(["duration_ms", "outer", "post_id", "request_id"])
    expect(lines[0]!.annotations["post_id"]).toBe("p1")
    expect(lines[1]!.annotations).toEqual({ outer: "kept" })
  })
})
