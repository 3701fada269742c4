/**
 * Liveness and readiness over real HTTP: `GET /health/live` answers without the
 * store, `GET /health/ready` answers 200 only when the store answers, its migrations are applied and
 * the process is not shutting down; on SIGTERM it answers 503 at once, while the publish in flight
 * drains. `GET /health` keeps its body. All three are outside `/api/v1`, without a key, not enveloped.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import { isStoreUnavailable } from "@herald/adapters/sql/StoreFaults"
import * as Health from "@herald/http/groups/Health"
import * as Server from "@herald/http/Server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
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
    while ((await server.request("GET", `/api/v1/posts/${id}`)).text.includes("\"publishing\"") === false) {
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

/** A TCP proxy on loopback to Postgres that the test can cut (refusing and dropping connections) and restore. */
const pgProxy = async () => {
  const target = new URL(pgUrl)
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    sockets.add(client)
    sockets.add(upstream)
    client.pipe(upstream).pipe(client)
    const drop = () => (client.destroy(), upstream.destroy(), sockets.delete(client), sockets.delete(upstream))
    client.on("error", drop).on("close", drop)
    upstream.on("error", drop).on("close", drop)
  })
  const listen = (port: number) =>
    new Promise<number>((resolve) =>
      server.listen(port, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port))
    )
  const port = await listen(0)
  return {
    port,
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      }),
    restore: () => listen(port).then(() => undefined)
  }
}

interface ErrorBody {
  readonly error: { readonly code: string; readonly retryable: boolean }
}

const waitFor = async (what: string, check: () => Promise<boolean>, ms = 30_000) => {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe.skipIf(!pgAnswers)("an unreachable Postgres", () => {
  it("answers 500 service_unavailable (retryable) on writes and reads, readiness 503, and recovers", async () => {
    const proxy = await pgProxy()
    const server = await HeraldServer.start({ postgres: true, postgresVia: proxy.port, args: ["--sandbox"] })
    try {
      const before = await server.request("POST", "/api/v1/posts", { body: { content: "Before", account_ids: [1] } })
      expect(before.status).toBe(201)
      expect((await server.request("GET", "/health/ready", { key: null })).status).toBe(200)

      await proxy.cut()
      const write = await server.request("POST", "/api/v1/posts", { body: { content: "During", account_ids: [1] } })
      expect(write.status).toBe(500)
      expect((write.json as ErrorBody).error).toMatchObject({ code: "service_unavailable", retryable: true })
      const read = await server.request("GET", "/api/v1/posts")
      expect(read.status).toBe(500)
      expect((read.json as ErrorBody).error.code).toBe("service_unavailable")
      // The probe's last answer is kept for 2 s.
      await waitFor("readiness to report the store down", async () => {
        const ready = await server.request("GET", "/health/ready", { key: null })
        return ready.status === 503 && (ready.json as { store?: string }).store === "down"
      }, 10_000)
      expect((await server.request("GET", "/health", { key: null })).status).toBe(503)
      expect((await server.request("GET", "/health/live", { key: null })).status).toBe(200)

      await proxy.restore()
      await waitFor(
        "readiness to return",
        async () => (await server.request("GET", "/health/ready", { key: null })).status === 200
      )
      const after = await server.request("POST", "/api/v1/posts", { body: { content: "After", account_ids: [1] } })
      expect(after.status).toBe(201)
    } finally {
      await proxy.restore().catch(() => undefined)
      await server.stop()
    }
  }, 120_000)
})

describe("a SQLite store that cannot be written", () => {
  it("is not ready, though it still answers reads; its write errors count as unavailable", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-readonly-"))
    const filename = path.join(dir, "herald.db")
    try {
      const probeWith = (database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
        Effect.runPromise(Effect.scoped(
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const read = yield* sql`SELECT COUNT(*) AS n FROM organizations`.pipe(
              Effect.as(true),
              Effect.orElseSucceed(() => false)
            )
            const readiness = yield* Health.readiness
            const writeError = yield* sql`UPDATE store_heartbeat SET beat_at = 1`.pipe(Effect.flip, Effect.option)
            return { read, readiness, writeError }
          }).pipe(
            Effect.provide(
              Layer.mergeAll(Server.sqlStoreProbe, Server.sqlMigrationProbe).pipe(Layer.provideMerge(database))
            )
          )
        ))

      const writable = await probeWith(SqlDatabase.layer({ _tag: "Sqlite", filename }))
      expect(writable.readiness).toEqual({ status: "ready", store: "ok", migrations: "applied", shutting_down: false })

      // The same file reopened read-only, as after a remount read-only or a full disk refuses writes.
      const readOnly = await probeWith(SqliteClient.layer({ filename, readonly: true }))
      expect(readOnly.read).toBe(true)
      expect(readOnly.readiness).toMatchObject({ status: "not_ready", store: "down" })
      expect(readOnly.writeError._tag).toBe("Some")
      expect(Option.isSome(readOnly.writeError) && isStoreUnavailable(readOnly.writeError.value)).toBe(true)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("a full database file (SQLITE_FULL) counts as unavailable; a statement's own fault does not", async () => {
    const outcome = await Effect.runPromise(Effect.scoped(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE filler (x TEXT)`
        const pages = (yield* sql<{ page_count: number }>`PRAGMA page_count`)[0]!.page_count
        yield* sql.unsafe(`PRAGMA max_page_count = ${pages}`)
        const full = yield* sql`INSERT INTO filler (x) VALUES (${"x".repeat(64_000)})`.pipe(Effect.flip)
        const syntax = yield* sql`SELECT * FROM no_such_table`.pipe(Effect.flip)
        return { full, syntax }
      }).pipe(Effect.provide(SqliteClient.layer({ filename: ":memory:" })))
    ))
    expect(isStoreUnavailable(outcome.full)).toBe(true)
    expect(isStoreUnavailable(outcome.syntax)).toBe(false)
  })
})
