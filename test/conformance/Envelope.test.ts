/**
 * The response envelope over real HTTP: success and error shapes, meta and X-Request-Id, unknown
 * routes, and (on an endpoint that takes a JSON body) invalid_json and validation_error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HeraldServer from "../support/HeraldServer.js"

let server: HeraldServer.HeraldServer
/** Endpoints that take a JSON body: the posts' own reader and the retry group's. */
const bodyEndpoints = ["/api/v1/posts", "/api/v1/posts/retry-failed"]

beforeAll(async () => {
  server = await HeraldServer.start()
})
afterAll(async () => {
  await server?.stop()
})

const isoUtc = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

interface ErrorEnvelope {
  readonly data: null
  readonly error: { code: string; message: string; retryable: boolean; details?: Record<string, unknown> }
  readonly meta: { request_id: string; timestamp: string }
}

const expectErrorEnvelope = (res: HeraldServer.Response, status: number, code: string): ErrorEnvelope => {
  expect(res.status).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  const body = res.json as ErrorEnvelope
  expect(Object.keys(body).sort()).toEqual(["data", "error", "meta"])
  expect(body.data).toBeNull()
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe("string")
  expect(typeof body.error.retryable).toBe("boolean")
  expect(body.error).not.toHaveProperty("status")
  expect(Object.keys(body.meta).sort()).toEqual(["request_id", "timestamp"])
  expect(body.meta.request_id).toBe(res.headers.get("x-request-id"))
  expect(body.meta.timestamp).toMatch(isoUtc)
  return body
}

describe("envelope", () => {
  it("wraps success in {data, error: null, meta{request_id, timestamp}} with the id in X-Request-Id", async () => {
    const res = await server.request("GET", "/api/v1/me")
    expect(res.status).toBe(200)
    const body = res.json as { data: unknown; error: unknown; meta: { request_id: string; timestamp: string } }
    expect(Object.keys(body)).toEqual(["data", "error", "meta"])
    expect(body.error).toBeNull()
    expect(body.data).not.toBeNull()
    expect(body.meta.request_id).toBe(res.headers.get("x-request-id"))
    expect(body.meta.request_id.length).toBeGreaterThan(0)
    expect(body.meta.timestamp).toMatch(isoUtc)
    expect(Math.abs(Date.parse(body.meta.timestamp) - Date.now())).toBeLessThan(60_000)
  })

  it("gives every request its own id", async () => {
    const ids = new Set<string | null>()
    for (let i = 0; i < 3; i++) ids.add((await server.request("GET", "/api/v1/accounts")).headers.get("x-request-id"))
    expect(ids.size).toBe(3)
  })

  it("logs each request with its id, never with the key", async () => {
    const res = await server.request("GET", "/api/v1/accounts")
    const id = res.headers.get("x-request-id")!
    await new Promise((resolve) => setTimeout(resolve, 200))
    const line = server.output().split("\n").find((l) => l.includes(id))
    expect(line).toMatch(/GET \/api\/v1\/accounts 200/)
    expect(server.output().split(server.key).length - 1).toBe(1) // only the bootstrap notice
  })

  it("answers unknown routes with 404 not_found in the envelope", async () => {
    expectErrorEnvelope(await server.request("GET", "/api/v1/nothing-here"), 404, "not_found")
    expectErrorEnvelope(await server.request("GET", "/nothing", { key: null }), 404, "not_found")
    expectErrorEnvelope(await server.request("DELETE", "/api/v1/me"), 404, "not_found")
    const body = expectErrorEnvelope(await server.request("GET", "/api/v1/nope"), 404, "not_found")
    expect(body.error.retryable).toBe(false)
  })

  it("answers domain errors in the envelope with retryable from the catalogue", async () => {
    const body = expectErrorEnvelope(await server.request("GET", "/api/v1/accounts/xyz"), 400, "invalid_id")
    expect(body.error.retryable).toBe(false)
    expect(
      expectErrorEnvelope(await server.request("GET", "/api/v1/accounts/424242"), 404, "not_found").error.retryable
    )
      .toBe(false)
  })

  it.each(bodyEndpoints)("answers a body that is not JSON on %s with 400 invalid_json", async (endpoint) => {
    // Errors table: invalid_json is "Body is not valid JSON (raw control characters in strings)".
    for (
      const rawBody of [
        "{\"content\": \"a\u0001b\", \"account_ids\": [1]}",
        "{\"content\": \"a\nb\"}",
        "{\"content\": "
      ]
    ) {
      const res = await server.request("POST", endpoint, { rawBody })
      expect(expectErrorEnvelope(res, 400, "invalid_json").error.retryable).toBe(false)
    }
  })

  it.each(bodyEndpoints)("answers a body that fails the schema on %s with 400 validation_error", async (endpoint) => {
    const res = await server.request("POST", endpoint, {
      body: { content: 42, account_ids: "nope", post_ids: "nope", account_id: "x" }
    })
    const body = expectErrorEnvelope(res, 400, "validation_error")
    const errors = body.error.details?.validation_errors as Array<{ path: string; message: string }>
    expect(errors.length).toBeGreaterThan(0)
    for (const e of errors) {
      expect(typeof e.path).toBe("string")
      expect(typeof e.message).toBe("string")
    }
  })

  it("serves /health outside /api/v1 without a key", async () => {
    const res = await server.request("GET", "/health", { key: null })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ status: "ok", store: "ok" })
    expect(res.json).toHaveProperty("oldest_due_lag_seconds")
  })

  it("stops gracefully on SIGTERM with exit code 0", async () => {
    expect(await server.stop()).toBe(0)
  })
})
