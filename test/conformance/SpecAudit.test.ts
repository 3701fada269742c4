/**
 * Findings of a line-by-line audit of the running server against the spec (api-v1.md), each over
 * real HTTP: the round-trip rule on the schedule and retry endpoints, form-body guidance naming the
 * endpoint it was sent to, posting-limit 429 headers, secrets kept out of the server's output, and
 * the request id and post id on the request and dispatcher log lines.
 */
import type { SocialAccount } from "@herald/core/domain/Account"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

interface Json {
  readonly data: Readonly<Record<string, unknown>> & {
    readonly id: string
    readonly destinations: ReadonlyArray<{ readonly id: string; readonly status: string }>
  }
  readonly error: {
    readonly code: string
    readonly message: string
    readonly details: Readonly<Record<string, unknown>>
  }
}
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>>
}

let server: HeraldServer.HeraldServer
let doc: Doc
let x: SocialAccount
let linkedin: SocialAccount

beforeAll(async () => {
  server = await HeraldServer.start({
    env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
  })
  ;[x, linkedin] = await server.withStore(insertAccounts(server.orgId, [
    { platform: "x", name: "audit_x" },
    { platform: "linkedin", name: "audit_li" }
  ]))
  doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
}, 120_000)
afterAll(async () => {
  await server?.stop()
})

const future = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString()

const conforms = (path: string, method: string, res: HeraldServer.Response) => {
  const response = doc.paths[path]?.[method]?.responses[String(res.status)]
  expect(response, `${method} ${path} documents ${res.status}`).toBeDefined()
  expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
}

const draft = async (): Promise<string> => {
  const res = await server.request("POST", "/api/v1/posts", {
    body: { content: `audit draft ${Date.now()} ${Math.random()}`, draft: true, account_ids: [x.id] }
  })
  expect(res.status, res.text).toBe(201)
  return (res.json as Json).data.id
}

/** Polls the post until every destination has settled (the server has no client for x: they fail). */
const settled = async (id: string): Promise<Json["data"]> => {
  for (let i = 0; i < 100; i++) {
    const post = (await server.request("GET", `/api/v1/posts/${id}`)).json as Json
    const destinations = post.data.destinations
    if (destinations.length > 0 && destinations.every((d) => d.status === "failed" || d.status === "published")) {
      return post.data
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`post ${id} did not settle`)
}

/** The server's log lines (stderr logfmt) that mention `text`, waiting briefly for them to be written. */
const logLines = async (text: string, atLeast = 1): Promise<Array<string>> => {
  for (let i = 0; i < 50; i++) {
    const lines = server.output().split("\n").filter((l) => l.includes(text))
    if (lines.length >= atLeast) return lines
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return server.output().split("\n").filter((l) => l.includes(text))
}

describe("round trip (Versioning 4: every top-level request field name also appears in the response)", () => {
  it("POST /posts/{id}/schedule echoes scheduled_at (deprecated alias) and publish_now", async () => {
    const at = future(3600)
    const viaAlias = await server.request("POST", `/api/v1/posts/${await draft()}/schedule`, {
      body: { scheduled_at: at, timezone: "Europe/Paris", account_ids: [x.id] }
    })
    expect(viaAlias.status, viaAlias.text).toBe(200)
    const data = (viaAlias.json as Json).data
    expect(data).toMatchObject({ scheduled_for: at, scheduled_at: at, timezone: "Europe/Paris", account_ids: [x.id] })
    conforms("/api/v1/posts/{id}/schedule", "post", viaAlias)

    const now = await server.request("POST", `/api/v1/posts/${await draft()}/schedule`, { body: { publish_now: true } })
    expect(now.status, now.text).toBe(200)
    expect((now.json as Json).data).toMatchObject({ publish_now: true, scheduled_for: null })
    expect((now.json as Json).data).not.toHaveProperty("scheduled_at")
    conforms("/api/v1/posts/{id}/schedule", "post", now)
  })

  it("POST /posts/{post_id}/retry echoes account_ids (null when omitted)", async () => {
    const created = await server.request("POST", "/api/v1/posts", {
      body: { content: `audit retry ${Date.now()}`, account_ids: [x.id, linkedin.id] }
    })
    expect(created.status, created.text).toBe(201)
    const id = (created.json as Json).data.id
    await settled(id)
    const some = await server.request("POST", `/api/v1/posts/${id}/retry`, { body: { account_ids: [linkedin.id] } })
    expect(some.status, some.text).toBe(200)
    expect((some.json as Json).data).toMatchObject({ post_id: id, account_ids: [linkedin.id], retried_count: 1 })
    conforms("/api/v1/posts/{post_id}/retry", "post", some)
    await settled(id)
    const all = await server.request("POST", `/api/v1/posts/${id}/retry`)
    expect(all.status, all.text).toBe(200)
    expect((all.json as Json).data).toMatchObject({ post_id: id, account_ids: null, retried_count: 2 })
  })

  it("POST /posts/retry-failed echoes the filters it was given", async () => {
    const body = { platform: "twitter", failed_after: "2020-01-01T00:00:00Z", max_attempts: 5 }
    const res = await server.request("POST", "/api/v1/posts/retry-failed", { body })
    expect(res.status, res.text).toBe(200)
    expect((res.json as Json).data).toMatchObject(body)
    expect((res.json as Json).data).not.toHaveProperty("post_ids")
    conforms("/api/v1/posts/retry-failed", "post", res)
  })
})

describe("error bodies", () => {
  it("a body that is not an object: the validation message has no empty path prefix", async () => {
    const res = await server.request("POST", "/api/v1/posts", { rawBody: "[1, 2]" })
    expect(res.status).toBe(400)
    const error = (res.json as Json).error
    expect(error.code).toBe("validation_error")
    expect(error.message).toBe("The body must be a JSON object")
    expect(error.details.validation_errors).toEqual([{ path: "", message: "The body must be a JSON object" }])
  })

  it("form bodies (spec: multipart gets guidance) name the endpoint and the content type actually sent", async () => {
    const id = await draft()
    const patch = await server.request("PATCH", `/api/v1/posts/${id}`, {
      rawBody: "content=hello",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(patch.status).toBe(400)
    const error = (patch.json as Json).error
    expect(error.code).toBe("validation_error")
    expect(error.message).toMatch(/^PATCH \/posts\/\{id\} takes a JSON body .*not application\/x-www-form-urlencoded\./)
    expect(error.details).toMatchObject({ content_type: "application/x-www-form-urlencoded" })
  })

  it("posting-limit 429 (Limits: every 429 carries Retry-After; X-RateLimit-* only on API-key 429s)", async () => {
    // Allowances are per user (and per organization for keys without one): exhaust them in an
    // organization of its own, so the other tests' posts are not refused.
    const org = (await server.cli(["orgs", "create", "Audit limits", "--plan", "starter"])).stdout.trim()
    const [own] = await server.withStore(insertAccounts(org, [{ platform: "linkedin", name: "audit_limits_li" }]))
    const key = await server.createKey({ name: "audit limits", org })
    let last: HeraldServer.Response | undefined
    for (let burst = 0; burst < 2 && last?.status !== 429; burst++) {
      for (let i = 0; i <= 20; i++) {
        last = await server.request("POST", "/api/v1/posts", {
          key,
          body: { content: `audit burst ${burst} ${Date.now()} ${i}`, account_ids: [own!.id] }
        })
        if (last.status !== 201) break
      }
    }
    expect(last!.status, last!.text).toBe(429)
    expect((last!.json as Json).error).toMatchObject({ code: "post_limit_reached", retryable: true })
    expect(Object.keys((last!.json as Json).error.details)).toEqual(
      expect.arrayContaining(["limit", "publish_mode", "remaining", "reset_at"])
    )
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(last!.headers.get("x-ratelimit-limit")).toBeNull()
    expect(last!.headers.get("x-ratelimit-remaining")).toBeNull()
    expect(last!.headers.get("x-ratelimit-reset")).toBeNull()
  })
})

describe("logs", () => {
  it("the request line of POST /posts carries request_id and post_id; the dispatcher's lines carry post_id", async () => {
    const res = await server.request("POST", "/api/v1/posts", {
      body: { content: `audit log ${Date.now()}`, account_ids: [x.id] }
    })
    expect(res.status, res.text).toBe(201)
    const id = (res.json as Json).data.id
    const requestId = res.headers.get("x-request-id")!
    const [requestLine] = await logLines(`request_id=${requestId}`)
    expect(requestLine).toMatch(/POST \/api\/v1\/posts 201/)
    expect(requestLine).toContain(`post_id=${id}`)
    const destination = (await settled(id)).destinations[0]!
    const dispatcherLines = (await logLines(`post_id=${id}`, 2)).filter((l) => l.includes("Dispatcher"))
    expect(dispatcherLines.length).toBeGreaterThan(0)
    expect(dispatcherLines[0]).toContain(`destination_id=${destination.id}`)
    expect(dispatcherLines[0]).toMatch(/Dispatcher: publish failed/)
  })

  it("never writes an API key: only the one-time bootstrap line contains pe_live_", async () => {
    const created = await server.createKey({ name: "audit secret" })
    expect((await server.request("GET", "/api/v1/me", { key: created })).status).toBe(200)
    expect((await server.request("GET", "/api/v1/me")).status).toBe(200)
    const unknown = "pe_live_0123456789abcdef0123456789abcdef"
    expect((await server.request("GET", "/api/v1/me", { key: unknown })).status).toBe(401)
    const malformed = "pe_live_not-a-key"
    expect((await server.request("GET", "/api/v1/me", { key: malformed })).status).toBe(401)
    expect((await server.request("GET", "/api/v1/nothing", { key: created })).status).toBe(404)
    await logLines("/api/v1/nothing")
    const lines = server.output().split("\n").filter((l) => l.includes("pe_live_"))
    expect(lines).toEqual([`HERALD_API_KEY=${server.key}`])
  })
})
