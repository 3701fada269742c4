/**
 * Device login over real HTTP against `herald serve` (SQLite and, where it answers, Postgres):
 * POST /auth/device and POST /auth/device/token without an API key, pending and slow_down, approval
 * and denial with `herald device approve|deny`, the minted key working on GET /me and shown once,
 * the verification page, expiry (a server configured with a 2-second lifetime) and the per-address
 * rate limits (a server configured with small limits).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] DeviceLogin conformance on Postgres skipped: ${pg.reason}`)

interface Envelope<A> {
  readonly data: A | null
  readonly error: {
    readonly code: string
    readonly message: string
    readonly retryable: boolean
    readonly details?: Record<string, unknown>
  } | null
  readonly meta: { readonly request_id: string; readonly timestamp: string }
}

interface Started {
  readonly device_code: string
  readonly user_code: string
  readonly verification_uri: string
  readonly verification_uri_complete: string
  readonly interval: number
  readonly expires_in: number
  readonly client_name: string | null
}

interface Token {
  readonly status: string
  readonly interval?: number
  readonly api_key?: string
  readonly key?: { readonly id: string; readonly name: string; readonly scopes: ReadonlyArray<string> }
  readonly user?: { readonly email: string }
  readonly organization_id?: string
}

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>>
}

const body = <A>(response: HeraldServer.Response) => response.json as Envelope<A>
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const userCodePattern = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("device login on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc

  beforeAll(async () => {
    if (skip) return
    // A 3-second interval: the two quick polls below must land within it even on a loaded machine.
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_DEVICE_POLL_INTERVAL_SECONDS: "3", HERALD_PUBLIC_URL: "" }
    })
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const conforms = (path: string, method: string, res: HeraldServer.Response) => {
    const response = doc.paths[path]?.[method]?.responses[String(res.status)]
    expect(response, `${method} ${path} documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }

  const start = async (clientName?: string) => {
    const res = await server.request("POST", "/api/v1/auth/device", {
      key: null,
      body: clientName === undefined ? {} : { client_name: clientName }
    })
    expect(res.status, res.text).toBe(200)
    conforms("/api/v1/auth/device", "post", res)
    return body<Started>(res).data!
  }

  const poll = async (deviceCode: string) => {
    const res = await server.request("POST", "/api/v1/auth/device/token", {
      key: null,
      body: { device_code: deviceCode }
    })
    conforms("/api/v1/auth/device/token", "post", res)
    return res
  }

  it.skipIf(skip)(
    "the whole flow: start, pending, slow_down, approve, authorized key works, reuse refused",
    async () => {
      const started = await start("herald-cli <test>")
      expect(started.user_code).toMatch(userCodePattern)
      expect(started.device_code).toMatch(/^[0-9a-f]{64}$/)
      expect(started.interval).toBe(3)
      expect(started.expires_in).toBe(600)
      expect(started.client_name).toBe("herald-cli <test>")
      expect(started.verification_uri).toBe(`${server.baseUrl}/device`)
      expect(started.verification_uri_complete).toBe(`${server.baseUrl}/device?code=${started.user_code}`)

      const first = await poll(started.device_code)
      expect(first.status).toBe(200)
      expect(body<Token>(first).data).toEqual({ status: "pending", interval: 3 })
      const fast = await poll(started.device_code)
      expect(body<Token>(fast).data).toEqual({ status: "slow_down", interval: 3 })

      // The verification URI is the dashboard's device page (it shows the client once a person signs in;
      // see test/dashboard); the page itself carries nothing of the request.
      const page = await fetch(started.verification_uri_complete)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toMatch(/^text\/html/)
      const html = await page.text()
      expect(html).toContain("/dashboard/assets/app.js")
      expect(html).not.toContain("herald-cli")

      // Typed by a person: lower case, no dash.
      const typed = started.user_code.replace("-", "").toLowerCase()
      const approved = await server.cli(["device", "approve", typed, "--org", server.orgId])
      expect(approved.code, approved.stderr).toBe(0)
      expect(approved.stderr).toContain(started.user_code)
      expect(approved.stdout).toBe("")
      const again = await server.cli(["device", "approve", started.user_code])
      expect(again.code).toBe(1)
      expect(again.stderr).toContain("already approved")

      await sleep(3100)
      const authorized = await poll(started.device_code)
      expect(authorized.status).toBe(200)
      const token = body<Token>(authorized).data!
      expect(token).toMatchObject({
        status: "authorized",
        user: { email: "owner@localhost" },
        organization_id: server.orgId,
        key: { name: "device: herald-cli <test>", scopes: ["read", "write", "ai"] }
      })
      expect(token.api_key).toMatch(/^pe_live_[0-9a-f]{32}$/)

      const me = await server.request("GET", "/api/v1/me", { key: token.api_key! })
      expect(me.status, me.text).toBe(200)
      expect(body<{ key: { id: string; name: string } }>(me).data!.key).toMatchObject({
        id: token.key!.id,
        name: "device: herald-cli <test>"
      })

      // Shown once: the device code is spent.
      const reused = await poll(started.device_code)
      expect(reused.status).toBe(400)
      expect(body<Token>(reused).error).toMatchObject({
        code: "validation_error",
        details: { reason: "device_code_used" }
      })
      expect(reused.text).not.toContain("pe_live_")

      // The store holds neither code nor the key, only hashes.
      const rows = await server.withStore(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<Record<string, unknown>>`SELECT * FROM device_authorizations`)
      )
      const dump = JSON.stringify(rows)
      expect(dump).not.toContain(started.device_code)
      expect(dump).not.toContain(started.user_code.replace("-", ""))
      expect(dump).not.toContain(token.api_key)
      expect(dump).toContain(createHash("sha256").update(started.device_code).digest("hex"))
      // Nor does the server's output (request lines carry the path only).
      expect(server.output()).not.toContain(started.device_code)
      expect(server.output()).not.toContain(token.api_key)
      expect(server.output()).not.toContain(started.user_code)
    },
    180_000
  )

  it.skipIf(skip)("a denied request polls denied and cannot be approved afterwards", async () => {
    const started = await start()
    expect(started.client_name).toBeNull()
    const denied = await server.cli(["device", "deny", started.user_code])
    expect(denied.code, denied.stderr).toBe(0)
    const poll1 = await poll(started.device_code)
    expect(body<Token>(poll1).data).toEqual({ status: "denied" })
    const approve = await server.cli(["device", "approve", started.user_code])
    expect(approve.code).toBe(1)
    expect(approve.stderr).toContain("already denied")
    await sleep(3100)
    expect(body<Token>(await poll(started.device_code)).data).toEqual({ status: "denied" })
  }, 180_000)

  it.skipIf(skip)("refuses unknown device codes and user codes, and bad bodies", async () => {
    const unknown = await poll("0".repeat(64))
    expect(unknown.status).toBe(400)
    expect(body<Token>(unknown).error).toMatchObject({
      code: "validation_error",
      retryable: false,
      details: { reason: "invalid_device_code" }
    })
    // RFC 8628 clients send form bodies: read as well as JSON.
    const form = await server.request("POST", "/api/v1/auth/device/token", {
      key: null,
      rawBody: `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=${"1".repeat(64)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(form.status).toBe(400)
    expect(body<Token>(form).error!.details).toEqual({ reason: "invalid_device_code" })
    // A start without any body is a start without a client name; a body that is not an object is refused.
    const empty = await server.request("POST", "/api/v1/auth/device", { key: null })
    expect(empty.status, empty.text).toBe(200)
    expect(body<Started>(empty).data!.client_name).toBeNull()
    const list = await server.request("POST", "/api/v1/auth/device", { key: null, body: ["x"] })
    expect(list.status).toBe(400)
    expect(body<Token>(list).error!.code).toBe("validation_error")
    const missing = await server.request("POST", "/api/v1/auth/device/token", { key: null, body: {} })
    expect(missing.status).toBe(400)
    expect(body<Token>(missing).error!.details!.validation_errors).toEqual([
      expect.objectContaining({ path: "device_code" })
    ])
    const long = await server.request("POST", "/api/v1/auth/device", {
      key: null,
      body: { client_name: "x".repeat(101) }
    })
    expect(long.status).toBe(400)
    expect(body<Token>(long).error!.code).toBe("validation_error")
    const cli = await server.cli(["device", "approve", "BCDF-GHJK"])
    expect(cli.code).toBe(1)
    expect(cli.stderr).toContain("No device login request")
    const usage = await server.cli(["device", "approve"])
    expect(usage.code).toBe(2)
    // The page is the dashboard's shell: it never echoes the code it was given.
    const page = await fetch(`${server.baseUrl}/device?code=<b>nope</b>`)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).not.toContain("<b>nope</b>")
  }, 180_000)

  it.skipIf(skip)("needs no API key, and ignores a bad one", async () => {
    const res = await server.request("POST", "/api/v1/auth/device", {
      key: "pe_live_00000000000000000000000000000000",
      body: { client_name: "with a stale key" }
    })
    expect(res.status).toBe(200)
  })
})

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("device login expiry and rate limits on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: {
        HERALD_DEVICE_CODE_TTL_SECONDS: "2",
        HERALD_DEVICE_POLL_INTERVAL_SECONDS: "1",
        HERALD_DEVICE_RATE_LIMIT_PER_MINUTE: "3",
        HERALD_DEVICE_TOKEN_RATE_LIMIT_PER_MINUTE: "4",
        HERALD_PUBLIC_URL: "https://herald.example.com/"
      }
    })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it.skipIf(skip)("codes expire: the poll says expired and the operator can no longer approve", async () => {
    const res = await server.request("POST", "/api/v1/auth/device", { key: null, body: { client_name: "slow" } })
    const started = body<Started>(res).data!
    expect(started.expires_in).toBe(2)
    expect(started.verification_uri).toBe("https://herald.example.com/device")
    await sleep(2100)
    const approve = await server.cli(["device", "approve", started.user_code])
    expect(approve.code).toBe(1)
    expect(approve.stderr).toContain("expired")
    const polled = await server.request("POST", "/api/v1/auth/device/token", {
      key: null,
      body: { device_code: started.device_code }
    })
    expect(body<Token>(polled).data).toEqual({ status: "expired" })
  }, 180_000)

  const until429 = async (path: string, payload: unknown) => {
    // Windows are aligned to the clock minute: at most one boundary can fall inside the loop.
    for (let i = 0; i < 12; i++) {
      const res = await server.request("POST", path, { key: null, body: payload })
      if (res.status === 429) return res
    }
    throw new Error(`${path} was never limited`)
  }

  it.skipIf(skip)(
    "both endpoints are limited per client address: 429 rate_limit_exceeded with Retry-After",
    async () => {
      const limited = await until429("/api/v1/auth/device", { client_name: "flood" })
      const error = body<Token>(limited).error!
      expect(error).toMatchObject({ code: "rate_limit_exceeded", retryable: true, details: { limit: 3, remaining: 0 } })
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(error.details!.retry_after).toBe(retryAfter)
      expect(typeof error.details!.reset_at).toBe("string")

      const polls = await until429("/api/v1/auth/device/token", { device_code: "0".repeat(64) })
      expect(body<Token>(polls).error).toMatchObject({ code: "rate_limit_exceeded", details: { limit: 4 } })
      expect(polls.headers.get("retry-after")).not.toBeNull()

      // API-key traffic is not counted against the address.
      const me = await server.request("GET", "/api/v1/me")
      expect(me.status).toBe(200)
    }
  )
})
