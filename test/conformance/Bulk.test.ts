/**
 * POST /posts/bulk over real HTTP, on SQLite and Postgres: 201 when every item is created, 207 for
 * mixed outcomes (each failed item with the code, message and details a single create gives), an
 * error whose details are shaped as a 207's data when none is, 400 bulk_limit_exceeded above 50 and validation_error for 0 items or no array
 * (nothing stored), the rate limit charged once plus once per created post, and the posting
 * allowance counting each post.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Bulk conformance on Postgres skipped: ${pg.reason}`)

interface ErrorObject {
  readonly code: string
  readonly message: string
  readonly retryable: boolean
  readonly details?: Record<string, unknown>
}
interface Item {
  readonly index: number
  readonly success: boolean
  readonly status: string
  readonly post: Record<string, unknown> | null
  readonly error: ErrorObject | null
}
interface BulkData {
  readonly results: ReadonlyArray<Item>
  readonly summary: { total: number; created: number; failed: number }
}
interface Json {
  readonly data: BulkData & Record<string, unknown>
  readonly error: ErrorObject & { details: Record<string, unknown> }
}
type Doc = {
  readonly paths: Record<
    string,
    Record<string, {
      readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
    }>
  >
}

const future = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("bulk create on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc
  let x: number
  let linkedin: number

  beforeAll(async () => {
    if (skip) return
    // The spec's key rate (60 per minute) applies here; tests that count use keys of their own.
    server = await HeraldServer.start({ postgres })
    const accounts = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "bulk_x" },
      { platform: "linkedin", name: "bulk_li" }
    ]))
    ;[x, linkedin] = accounts.map((a) => a.id)
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const bulk = (body: unknown, key?: string) =>
    server.request("POST", "/api/v1/posts/bulk", { body, ...(key ? { key } : {}) })
  const conforms = (path: string, res: HeraldServer.Response) => {
    const response = doc.paths[path]?.["post"]?.responses[String(res.status)]
    expect(response, `POST ${path} documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }
  const total = async (key?: string) =>
    ((await server.request("GET", "/api/v1/posts?limit=1", key ? { key } : {})).json as {
      data: { pagination: { total: number } }
    }).data.pagination.total

  it.skipIf(skip)("every item created: 201, in request order, each as a single create answers it", async () => {
    const key = await server.createKey({ name: "bulk-201" })
    const items = [
      { content: "first", account_ids: [x], scheduled_for: future(60) },
      { content: "an idea", draft: true },
      { content: "third", account_ids: [linkedin], scheduled_for: future(120), timezone: "Europe/Paris" }
    ]
    const res = await bulk({ posts: items }, key)
    expect(res.status, res.text).toBe(201)
    conforms("/api/v1/posts/bulk", res)
    const data = (res.json as Json).data
    expect(data.summary).toEqual({ total: 3, created: 3, failed: 0 })
    expect(data.results.map((r) => [r.index, r.success, r.status, r.post?.["content"]])).toEqual([
      [0, true, "created", "first"],
      [1, true, "created", "an idea"],
      [2, true, "created", "third"]
    ])
    expect(data.results[1]!.post).toMatchObject({ status: "draft", next_steps: expect.any(String) })
    // Round trip: the request's `posts` come back under their name, each as created.
    expect(data["posts"]).toEqual(data.results.map((r) => r.post))
    expect(data.results[2]!.post).toMatchObject({
      status: "scheduled",
      timezone: "Europe/Paris",
      account_ids: [linkedin]
    })
    // The created posts are real.
    const fetched = await server.request("GET", `/api/v1/posts/${String(data.results[0]!.post!["id"])}`, { key })
    expect(fetched.status).toBe(200)
  })

  it.skipIf(skip)(
    "mixed outcomes: 207; a failed item has the code, message and details of a single create",
    async () => {
      const bad = [
        { content: "a", account_ids: [999999] },
        { content: "x".repeat(281), account_ids: [x], scheduled_for: future(30) },
        { content: "a", account_ids: [x], scheduled_for: "2020-01-01T00:00:00Z" },
        { content: "a", account_ids: [x], media: ["m"] }
      ]
      const res = await bulk({ posts: [{ content: "ok", account_ids: [x], scheduled_for: future(45) }, ...bad] })
      expect(res.status, res.text).toBe(207)
      conforms("/api/v1/posts/bulk", res)
      const data = (res.json as Json).data
      expect(data.summary).toEqual({ total: 5, created: 1, failed: 4 })
      expect(data.results[0]).toMatchObject({ index: 0, success: true, error: null })
      expect(data.results.slice(1).map((r) => r.error?.code)).toEqual([
        "invalid_accounts",
        "content_too_long",
        "past_schedule_time",
        "invalid_field_name"
      ])
      for (const [i, body] of bad.entries()) {
        const single = (await server.request("POST", "/api/v1/posts", { body })).json as Json
        const item = data.results[i + 1]!
        expect(item.post).toBeNull()
        expect(item.error!.code).toBe(single.error.code)
        expect(item.error!.message).toBe(single.error.message)
        // past_schedule_time names "now" (details.earliest), which moved between the two calls.
        const { earliest: _a, ...itemDetails } = item.error!.details ?? {}
        const { earliest: _b, ...singleDetails } = single.error.details ?? {}
        expect(itemDetails).toEqual(singleDetails)
      }
    }
  )

  it.skipIf(skip)(
    "every item failing: 400 with each error in details.results and details.summary, shaped as a 207's data; nothing stored",
    async () => {
      const before = await total()
      const res = await bulk({ posts: [{ content: "a", account_ids: [999999] }, { content: 5 }] })
      expect(res.status, res.text).toBe(400)
      conforms("/api/v1/posts/bulk", res)
      const body = res.json as Json & { readonly data: unknown }
      expect(body.data).toBeNull()
      const error = body.error
      expect([error.code, error.retryable]).toEqual(["validation_error", false])
      const results = error.details["results"] as ReadonlyArray<Item>
      expect(results.map((r) => [r.index, r.success, r.status, r.post, r.error?.code])).toEqual([
        [0, false, "failed", null, "invalid_accounts"],
        [1, false, "failed", null, "validation_error"]
      ])
      expect(error.details["summary"]).toEqual({ total: 2, created: 0, failed: 2 })
      // The same items beside a valid one: the 207's data has exactly the shape of these details.
      const mixed = await bulk({
        posts: [{ content: "a", account_ids: [999999] }, { content: 5 }, { content: "ok", draft: true }]
      })
      expect(mixed.status, mixed.text).toBe(207)
      const data = (mixed.json as Json).data
      expect(Object.keys(data).sort()).toEqual(Object.keys(error.details).sort())
      expect(data.results.slice(0, 2)).toEqual(results)

      // Every item failing for one reason: that reason's code and status.
      const same = await bulk({
        posts: [{ content: "a", account_ids: [999999] }, { content: "b", account_ids: [999998] }]
      })
      expect([same.status, (same.json as Json).error.code]).toEqual([400, "invalid_accounts"])
      expect((same.json as Json).error.details["summary"]).toEqual({ total: 2, created: 0, failed: 2 })
      conforms("/api/v1/posts/bulk", same)
      expect(await total()).toBe(before + 1)
    }
  )

  it.skipIf(skip)(
    "above 50 items: 400 bulk_limit_exceeded; 0 items or no array: validation_error; nothing stored",
    async () => {
      const before = await total()
      const many = Array.from({ length: 51 }, (_, i) => ({ content: `n${i}`, draft: true }))
      const over = await bulk({ posts: many })
      expect([over.status, (over.json as Json).error.code]).toEqual([400, "bulk_limit_exceeded"])
      expect((over.json as Json).error.details).toMatchObject({ limit: 50, received: 51 })
      conforms("/api/v1/posts/bulk", over)
      for (const body of [{ posts: [] }, { posts: "x" }, {}, [1]]) {
        const res = await bulk(body)
        expect([res.status, (res.json as Json).error.code], JSON.stringify(body)).toEqual([400, "validation_error"])
      }
      // Past the generic cap of 1,000 members per array, the endpoint's own limit still answers.
      const huge = await bulk({ posts: Array.from({ length: 1001 }, () => ({})) })
      expect([huge.status, (huge.json as Json).error.code]).toEqual([400, "bulk_limit_exceeded"])
      expect((huge.json as Json).error.details).toMatchObject({ limit: 50, received: 1001 })
      conforms("/api/v1/posts/bulk", huge)
      const raw = await server.request("POST", "/api/v1/posts/bulk", { rawBody: "{\"posts\": [" })
      expect([raw.status, (raw.json as Json).error.code]).toEqual([400, "invalid_json"])
      expect(await total()).toBe(before)
    }
  )

  it.skipIf(skip)("needs the write scope", async () => {
    const readOnly = await server.createKey({ scopes: ["read"] })
    const res = await bulk({ posts: [{ content: "a", draft: true }] }, readOnly)
    expect([res.status, (res.json as Json).error.code]).toEqual([403, "insufficient_scope"])
  })

  it.skipIf(skip)(
    "the key's rate limit is charged once plus once per created post (50 posts use 51 of 60)",
    async () => {
      const key = await server.createKey({ name: "bulk-rate" })
      // Start at the top of a fresh minute window so the count is not split.
      const msIntoMinute = Date.now() % 60_000
      if (msIntoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_500 - msIntoMinute))
      const res = await bulk(
        { posts: Array.from({ length: 50 }, (_, i) => ({ content: `rate ${i}`, draft: true })) },
        key
      )
      expect(res.status, res.text).toBe(201)
      const statuses: Array<number> = []
      for (let i = 0; i < 10; i++) {
        statuses.push((await server.request("GET", "/api/v1/me", { key })).status)
      }
      // 51 used: nine more requests fit in the 60, the tenth is refused.
      expect(statuses.slice(0, 9).every((s) => s === 200)).toBe(true)
      expect(statuses[9]).toBe(429)
    },
    90_000
  )

  it.skipIf(skip)(
    "posting allowances count each post: the 21st immediate publish in one bulk is 429 post_limit_reached",
    async () => {
      const key = await server.createKey({ name: "bulk-allowance" })
      const msIntoMinute = Date.now() % 60_000
      if (msIntoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_500 - msIntoMinute))
      const res = await bulk({
        posts: Array.from({ length: 21 }, (_, i) => ({ content: `now ${i} ${Date.now()}`, account_ids: [linkedin] }))
      }, key)
      expect(res.status, res.text).toBe(207)
      const data = (res.json as Json).data
      const failed = data.results.filter((r) => !r.success)
      expect(failed).toHaveLength(1)
      expect(failed[0]!.error).toMatchObject({ code: "post_limit_reached", retryable: true })
      expect(failed[0]!.error!.details).toMatchObject({ limit: 20, publish_mode: "immediate" })
    },
    90_000
  )
})
