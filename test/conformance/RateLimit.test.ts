/**
 * Per-key rate limits over real HTTP, on a server configured with a low per-minute limit: headers
 * only on the 429, the 429 envelope, independence of keys, and counts shared through the store.
 */
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as RateLimit from "@herald/http/RateLimit"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HeraldServer from "../support/HeraldServer.js"

const limit = 4
let server: HeraldServer.HeraldServer

beforeAll(async () => {
  server = await HeraldServer.start({ env: { HERALD_RATE_LIMIT_PER_MINUTE: String(limit) } })
})
afterAll(async () => {
  await server?.stop()
})

/** Waits for a fresh minute window when the current one is about to end, so one test stays in one window. */
const freshWindow = async () => {
  const intoMinute = Date.now() % 60_000
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200))
}

describe("rate limits", () => {
  it("allows the limit per minute without rate-limit headers, then answers 429 with them", async () => {
    await freshWindow()
    const key = await server.createKey({ name: "limited" })
    for (let i = 0; i < limit; i++) {
      const ok = await server.request("GET", "/api/v1/me", { key })
      expect(ok.status).toBe(200)
      for (const header of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"]) {
        expect(ok.headers.get(header)).toBeNull()
      }
    }
    const res = await server.request("GET", "/api/v1/me", { key })
    expect(res.status).toBe(429)
    const body = res.json as {
      data: null
      error: { code: string; retryable: boolean; details: { limit: number; remaining: number; reset_at: string } }
      meta: { request_id: string; timestamp: string }
    }
    expect(body.data).toBeNull()
    expect(body.error.code).toBe("rate_limit_exceeded")
    expect(body.error.retryable).toBe(true)
    expect(body.error.details.limit).toBe(limit)
    expect(body.error.details.remaining).toBe(0)
    expect(body.meta.request_id).toBe(res.headers.get("x-request-id"))

    const resetAt = Date.parse(body.error.details.reset_at)
    expect(resetAt % 60_000).toBe(0) // a fixed minute window
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(limit))
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0")
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(resetAt / 1000))
    const retryAfter = Number(res.headers.get("retry-after"))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)

    // Other endpoints share the key's budget.
    expect((await server.request("GET", "/api/v1/accounts", { key })).status).toBe(429)
  })

  it("counts each key separately", async () => {
    await freshWindow()
    const a = await server.createKey({ name: "a" })
    const b = await server.createKey({ name: "b" })
    for (let i = 0; i < limit; i++) expect((await server.request("GET", "/api/v1/me", { key: a })).status).toBe(200)
    expect((await server.request("GET", "/api/v1/me", { key: a })).status).toBe(429)
    expect((await server.request("GET", "/api/v1/me", { key: b })).status).toBe(200)
  })

  it("keeps the count in the store, where another process sees it", async () => {
    await freshWindow()
    const key = await server.createKey({ name: "shared" })
    for (let i = 0; i < limit; i++) expect((await server.request("GET", "/api/v1/me", { key })).status).toBe(200)
    const keyId = await server.cli(["keys", "list", "--org", server.orgId]).then((r) =>
      r.stdout.split("\n").find((line) => line.endsWith("\"shared\""))?.split("\t")[0]
    )
    expect(keyId).toBeDefined()
    const counted = await server.withStore(
      Effect.gen(function*() {
        const now = yield* DateTime.now
        return yield* (yield* UsageCounters).get(`rate:key:${keyId}:minute`, RateLimit.windowEnd(now, 60_000))
      })
    )
    expect(counted).toBe(limit)
  })
})
