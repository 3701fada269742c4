/**
 * Per-key rate limits over real HTTP, on a server configured with a low per-minute limit: headers
 * only on the 429, the 429 envelope, independence of keys, counts kept off the store on SQLite, and
 * on Postgres one count shared exactly by two servers.
 */
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as RateLimit from "@herald/http/RateLimit"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
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

  it("counts a request without writing the store (no durable write on the read path)", async () => {
    await freshWindow()
    const key = await server.createKey({ name: "memory" })
    for (let i = 0; i < limit; i++) expect((await server.request("GET", "/api/v1/me", { key })).status).toBe(200)
    expect((await server.request("GET", "/api/v1/me", { key })).status).toBe(429)
    const keyId = await server.cli(["keys", "list", "--org", server.orgId]).then((r) =>
      r.stdout.split("\n").find((line) => line.endsWith("\"memory\""))?.split("\t")[0]
    )
    expect(keyId).toBeDefined()
    const stored = await server.withStore(
      Effect.gen(function*() {
        const now = yield* DateTime.now
        return yield* (yield* UsageCounters).get(`rate:key:${keyId}:minute`, RateLimit.windowEnd(now, 60_000))
      })
    )
    expect(stored).toBe(0)
  })
})

/** A second `herald serve` on the store of `first` (Postgres): its base URL and a stop function. */
const secondServer = async (first: HeraldServer.HeraldServer, env: Record<string, string>) => {
  const child = spawn(process.execPath, [HeraldServer.bin, "serve", "--port", "0", ...first.storeArgs], {
    env: { ...process.env, PORT: "", HERALD_DATA_DIR: "", HERALD_DATABASE_URL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`second server did not start:\n${output}`)), 60_000)
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const found = /Herald listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]
      if (found !== undefined) {
        clearTimeout(timer)
        resolve(found)
      }
    })
    child.on("exit", (code) => reject(new Error(`second server exited with ${code}:\n${output}`)))
  })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    child.kill("SIGTERM")
    await exited
  }
  return { baseUrl: `http://127.0.0.1:${port}`, stop }
}

const pg = await probePostgres
describe.skipIf(!pg.available)("rate limits shared by two servers on one Postgres", () => {
  if (!pg.available) console.warn(`[skip] two servers on one Postgres: ${pg.reason}`)

  it("admits exactly the limit across both servers, requests racing on both", async () => {
    const shared = 10
    const env = { HERALD_RATE_LIMIT_PER_MINUTE: String(shared) }
    const first = await HeraldServer.start({ postgres: true, env })
    const second = await secondServer(first, env).catch(async (error) => {
      await first.stop()
      throw error
    })
    try {
      await freshWindow()
      const key = await first.createKey({ name: "two servers" })
      const statuses = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
        const base = i % 2 === 0 ? first.baseUrl : second.baseUrl
        const res = await fetch(`${base}/api/v1/accounts`, { headers: { authorization: `Bearer ${key}` } })
        await res.text()
        return res.status
      }))
      expect(statuses.filter((s) => s === 200).length).toBe(shared)
      expect(statuses.filter((s) => s === 429).length).toBe(30 - shared)
      // Both servers now refuse the key, with the spec's headers.
      for (const base of [first.baseUrl, second.baseUrl]) {
        const res = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
        expect(res.status).toBe(429)
        expect(res.headers.get("x-ratelimit-limit")).toBe(String(shared))
        expect(res.headers.get("x-ratelimit-remaining")).toBe("0")
      }
    } finally {
      await second.stop()
      await first.stop()
    }
  }, 120_000)
})
