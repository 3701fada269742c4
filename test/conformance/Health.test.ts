/**
 * Liveness and readiness over real HTTP (issue 16, item 4): `GET /health/live` answers without the
 * store, `GET /health/ready` answers 200 only when the store answers, its migrations are applied and
 * the process is not shutting down; on SIGTERM it answers 503 at once, while the publish in flight
 * drains. `GET /health` keeps its body. All three are outside `/api/v1`, without a key, not enveloped.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import * as HeraldServer from "../support/HeraldServer.js"

interface PostData {
  readonly data: { readonly id: string; readonly status: string }
}

const pgUrl = process.env.HERALD_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const pgAnswers = await (async () => {
  try {
    const { default: net } = await import("node:net")
    const url = new URL(pgUrl)
    return await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(url.port || 5432), url.hostname)
      socket.once("connect", () => (socket.destroy(), resolve(true)))
      socket.once("error", () => resolve(false))
    })
  } catch {
    return false
  }
})()
if (!pgAnswers) console.log(`Health.test: Postgres does not answer at ${pgUrl}; its cases are skipped`)

for (const postgres of [false, true]) {
  describe.skipIf(postgres && !pgAnswers)(`health probes (${postgres ? "postgres" : "sqlite"})`, () => {
    it("live 200, ready 200, /health unchanged; ready 503 with migrations pending", async () => {
      const server = await HeraldServer.start({ postgres })
      try {
        const live = await server.request("GET", "/health/live", { key: null })
        expect(live.status).toBe(200)
        expect(live.json).toEqual({ status: "ok" })

        const ready = await server.request("GET", "/health/ready", { key: null })
        expect(ready.status).toBe(200)
        expect(ready.json).toEqual({ status: "ready", store: "ok", migrations: "applied", shutting_down: false })
        expect(ready.json).not.toHaveProperty("data")

        const health = await server.request("GET", "/health", { key: null })
        expect(health.status).toBe(200)
        expect(health.json).toMatchObject({ status: "ok", store: "ok" })
        expect(health.json).toHaveProperty("oldest_due_lag_seconds")

        // The newest migration forgotten: the store answers, but this build's schema is not all there.
        await server.withStore(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`DELETE FROM herald_migrations WHERE migration_id = (SELECT MAX(migration_id) FROM herald_migrations)`
        }))
        const pending = await server.request("GET", "/health/ready", { key: null })
        expect(pending.status).toBe(503)
        expect(pending.json).toEqual({ status: "not_ready", store: "ok", migrations: "pending", shutting_down: false })
        expect((await server.request("GET", "/health/live", { key: null })).status).toBe(200)
        expect((await server.request("GET", "/health", { key: null })).status).toBe(200)
      } finally {
        await server.stop()
      }
    }, 120_000)
  })
}

describe("readiness during a graceful shutdown", () => {
  it("answers 503 (shutting_down) while the publish in flight drains, then the process exits 0", async () => {
    const server = await HeraldServer.start({ args: ["--sandbox"], env: { HERALD_SANDBOX_LATENCY_MS: "3000" } })
    const created = await server.request("POST", "/api/v1/posts", { body: { content: "In flight", account_ids: [1] } })
    expect(created.status).toBe(201)
    const id = (created.json as PostData).data.id
    const until = Date.now() + 20_000
    while ((await server.request("GET", `/api/v1/posts/${id}`)).text.includes('"publishing"') === false) {
      if (Date.now() > until) throw new Error("the post never started publishing")
      await new Promise((r) => setTimeout(r, 50))
    }
    expect((await server.request("GET", "/health/ready", { key: null })).status).toBe(200)

    const stopped = server.stop()
    const seen: Array<number> = []
    let body: unknown
    const deadline = Date.now() + 2_000
    while (Date.now() < deadline) {
      const res = await fetch(`${server.baseUrl}/health/ready`).catch(() => undefined)
      if (res !== undefined) {
        seen.push(res.status)
        if (res.status === 503) {
          body = await res.json()
          break
        }
        await res.text()
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(seen.at(-1)).toBe(503)
    expect(body).toEqual({ status: "not_ready", store: "unknown", migrations: "unknown", shutting_down: true })
    // Still listening while draining: liveness answers too.
    expect((await fetch(`${server.baseUrl}/health/live`)).status).toBe(200)
    expect(await stopped).toBe(0)
  }, 120_000)
})
