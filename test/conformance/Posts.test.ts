/**
 * The posts endpoints over real HTTP (a `herald serve` child process), on SQLite and (where one
 * answers) Postgres: shapes, the round-trip (clone) rule, the raw-body rules, errors with their
 * statuses, posting limits with Retry-After, the circuit breaker, and the OpenAPI document.
 */
import * as CircuitBreaker from "@herald/core/posts/CircuitBreaker"
import { OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { Destination } from "@herald/core/domain/Destination"
import { PostStore } from "@herald/core/posts/PostStore"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import * as MediaFixtures from "../support/MediaFixtures.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Posts conformance on Postgres skipped: ${pg.reason}`)

/** A response body, read loosely: the tests assert on its parts with `expect`. */
type Data = Readonly<Record<string, unknown>> & {
  readonly id: string
  readonly content: string
  readonly posts: ReadonlyArray<Data>
  readonly pagination: Readonly<Record<string, unknown>>
  readonly destinations: ReadonlyArray<unknown>
}
interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly retryable: boolean
  readonly details: Readonly<Record<string, unknown>>
}
interface Json {
  readonly data: Data
  readonly error: ErrorBody
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

/** Every top-level field of POST /posts, which a post must return under the same name. */
const requestFields = [
  "content",
  "account_ids",
  "scheduled_for",
  "timezone",
  "platform_content",
  "media_ids",
  "campaign_id",
  "draft",
  "request_approval",
  "use_queue",
  "idempotency_key",
  "threadPosts"
]

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("posts on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc
  let x: number
  let linkedin: number
  let youtube: number

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
    })
    const accounts = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "posts_x" },
      { platform: "linkedin", name: "posts_li" },
      { platform: "youtube", name: "posts_yt" }
    ]))
    ;[x, linkedin, youtube] = accounts.map((a) => a.id)
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const post = (body: unknown, key?: string) =>
    server.request("POST", "/api/v1/posts", { body, ...(key ? { key } : {}) })

  const conforms = (path: string, method: string, res: HeraldServer.Response) => {
    const response = doc.paths[path]?.[method]?.responses[String(res.status)]
    expect(response, `${method} ${path} documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }

  it.skipIf(skip)("a draft: 201 with status draft, post_id and next_steps; no accounts needed", async () => {
    const res = await post({ content: "an idea", draft: true })
    expect(res.status, res.text).toBe(201)
    const data = (res.json as Json).data
    expect(data).toMatchObject({
      status: "draft",
      draft: true,
      account_ids: [],
      platform_content: {},
      destinations: []
    })
    expect(data.post_id).toBe(data.id)
    expect(data.next_steps).toContain("/schedule")
    conforms("/api/v1/posts", "post", res)
  })

  it.skipIf(skip)(
    "a scheduled post: the full post with destinations and inline metrics; GET returns the same",
    async () => {
      const at = future(120)
      const res = await post({
        content: "launch day",
        account_ids: [x, linkedin],
        scheduled_for: at,
        timezone: "Europe/Paris"
      })
      expect(res.status, res.text).toBe(201)
      const data = (res.json as Json).data
      expect(data).toMatchObject({
        status: "scheduled",
        scheduled_for: at,
        timezone: "Europe/Paris",
        account_ids: [x, linkedin]
      })
      expect(data.destinations).toHaveLength(2)
      expect(data.destinations[0]).toMatchObject({
        account_id: x,
        account_name: "posts_x",
        platform: "x",
        status: "queued",
        platform_post_id: null,
        platform_post_url: null,
        published_at: null,
        error: null,
        attempts: 0,
        views: 0,
        likes: 0,
        comments: 0,
        shares: 0,
        impressions: 0,
        saves: 0,
        clicks: 0
      })
      const got = await server.request("GET", `/api/v1/posts/${data.id}`)
      expect(got.status).toBe(200)
      expect((got.json as Json).data).toEqual(data)
      conforms("/api/v1/posts/{id}", "get", got)
      const results = await server.request("GET", `/api/v1/posts/${data.id}/results`)
      expect((results.json as Json).data).toMatchObject({
        post_id: data.id,
        status: "scheduled",
        summary: { total: 2, queued: 2, publishing: 0, published: 0, failed: 0 }
      })
      conforms("/api/v1/posts/{id}/results", "get", results)
    }
  )

  it.skipIf(skip)(
    "round trip: every request field comes back under its name, and a fetched post sent back clones it",
    async () => {
      // YouTube requires a video at create time (media rules): upload one.
      const video = MediaFixtures.movie()
      const presigned = (await server.request("POST", "/api/v1/media/upload", {
        body: { filename: "clip.mp4", content_type: "video/mp4", file_size: video.length }
      })).json as Json
      const put = await fetch(String(presigned.data["upload_url"]), {
        method: "PUT",
        headers: { "content-type": "video/mp4" },
        body: video
      })
      expect(put.status).toBe(200)
      const campaign = (await server.request("POST", "/api/v1/campaigns", { body: { name: "clones" } })).json as Json
      const body = {
        content: "clone me",
        account_ids: [youtube, x],
        scheduled_for: future(300),
        timezone: "America/New_York",
        platform_content: {
          youtube: { content: "description", settings: { title: "A title", privacyStatus: "unlisted" } },
          x: { content: "for x", contentType: "text", settings: { replySettings: "following" } }
        },
        media_ids: [presigned.data.id],
        campaign_id: campaign.data.id,
        draft: false,
        request_approval: false,
        use_queue: false,
        idempotency_key: "clone-1",
        threadPosts: [{ content: "second part" }]
      }
      const created = await post(body)
      expect(created.status, created.text).toBe(201)
      const data = (created.json as Json).data
      for (const field of requestFields) expect(data[field], field).toEqual(body[field as keyof typeof body])

      const fetched = (await server.request("GET", `/api/v1/posts/${data.id}`)).json as Json
      const clone = await post(fetched.data)
      expect(clone.status, clone.text).toBe(201)
      const copy = (clone.json as Json).data
      expect(copy.id).not.toBe(data.id)
      for (const field of requestFields) expect(copy[field], field).toEqual(data[field])

      // A draft in the approval workflow clones too.
      const draft = await post({ content: "draft clone", draft: true, request_approval: true, account_ids: [x] })
      expect((draft.json as Json).data).toMatchObject({
        draft: true,
        request_approval: true,
        approval_status: "pending"
      })
      const fetchedDraft = (await server.request("GET", `/api/v1/posts/${(draft.json as Json).data.id}`)).json as Json
      const again = await post(fetchedDraft.data)
      expect(again.status, again.text).toBe(201)
      expect((again.json as Json).data).toMatchObject({ status: "draft", request_approval: true, account_ids: [x] })

      // scheduled_at, when sent, comes back too.
      const alias = await post({ content: "alias", account_ids: [x], scheduled_at: future(60).replace("Z", "") })
      expect(alias.status, alias.text).toBe(201)
      expect((alias.json as Json).data.scheduled_at).toBe((alias.json as Json).data.scheduled_for)
    }
  )

  it.skipIf(skip)("media field names other than media_ids are 400 invalid_field_name", async () => {
    for (const field of ["media", "media_id", "mediaId", "attachments"]) {
      const res = await post({ content: "pic", account_ids: [x], [field]: ["abc"] })
      expect(res.status).toBe(400)
      expect((res.json as Json).error).toMatchObject({ code: "invalid_field_name", retryable: false })
      expect((res.json as Json).error.message).toContain("media_ids")
    }
  })

  it.skipIf(skip)("multipart/form-data is 400 with the JSON shape and the upload flow", async () => {
    const form = new FormData()
    form.append("content", "hi")
    const response = await fetch(`${server.baseUrl}/api/v1/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}` },
      body: form
    })
    expect(response.status).toBe(400)
    const body = (await response.json()) as Json
    expect(body.error.code).toBe("validation_error")
    expect(body.error.message).toContain("media_ids")
    expect(body.error.message).toContain("/media/upload")
    expect(body.error.details.expected_content_type).toBe("application/json")
  })

  it.skipIf(skip)("validation errors over HTTP: statuses and codes", async () => {
    const cases: ReadonlyArray<[unknown, number, string]> = [
      [{ content: "x".repeat(281), account_ids: [x] }, 400, "content_too_long"],
      [{ content: "a", account_ids: Array.from({ length: 26 }, (_, i) => i + 1) }, 400, "too_many_accounts"],
      [{ content: "a", account_ids: [x], timezone: "Nowhere/City" }, 400, "invalid_timezone"],
      [{ content: "a", account_ids: [999999] }, 400, "invalid_accounts"],
      [{ content: "a" }, 400, "invalid_accounts"],
      [{ content: "a", account_ids: [x], scheduled_for: "soon" }, 400, "invalid_datetime"],
      [{ content: "a", account_ids: [x], scheduled_for: "2020-01-01T00:00:00Z" }, 400, "past_schedule_time"],
      [{ content: "a", account_ids: [x], use_queue: true, scheduled_for: future(10) }, 400, "validation_error"],
      [{ content: "a", account_ids: [x], use_queue: true }, 400, "validation_error"],
      [{ content: 5, account_ids: [x] }, 400, "validation_error"],
      [
        { content: "a", account_ids: [youtube], media_ids: ["6f1c2a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"] },
        400,
        "validation_error"
      ]
    ]
    for (const [body, status, code] of cases) {
      const res = await post(body)
      expect([res.status, (res.json as Json).error?.code], JSON.stringify(body).slice(0, 80)).toEqual([status, code])
    }
    const tooLong = await post({ content: "x".repeat(281), account_ids: [x] })
    expect((tooLong.json as Json).error.details).toMatchObject({ platform: "x", limit: 280, length: 281 })
    conforms("/api/v1/posts", "post", tooLong)
    const badJson = await server.request("POST", "/api/v1/posts", { rawBody: "{\"content\": " })
    expect([badJson.status, (badJson.json as Json).error.code]).toEqual([400, "invalid_json"])
  })

  it.skipIf(skip)("GET /posts: filters, twitter = x, invalid values dropped, pagination", async () => {
    const tag = `list-${Date.now()}`
    await post({ content: `${tag} one`, account_ids: [x], scheduled_for: future(30) })
    await post({ content: `${tag} two`, account_ids: [linkedin], scheduled_for: future(40) })
    await post({ content: `${tag} draft`, draft: true })
    const all = await server.request("GET", `/api/v1/posts?search=${tag}`)
    expect(all.status).toBe(200)
    const data = (all.json as Json).data
    expect(data.posts.map((p) => p.content)).toEqual([`${tag} draft`, `${tag} two`, `${tag} one`])
    expect(data.pagination).toEqual({ limit: 20, offset: 0, total: 3, has_more: false, next_cursor: null })
    conforms("/api/v1/posts", "get", all)
    const twitter = await server.request("GET", `/api/v1/posts?search=${tag}&platform=twitter,nope`)
    expect((twitter.json as Json).data.posts.map((p) => p.content)).toEqual([`${tag} one`])
    const drafts = await server.request("GET", `/api/v1/posts?search=${tag}&status=draft&status=bogus`)
    expect((drafts.json as Json).data.posts.map((p) => p.content)).toEqual([`${tag} draft`])
    const junk = await server.request(
      "GET",
      `/api/v1/posts?search=${tag}&limit=abc&sort=nope&order=up&created_after=never&account_id=x`
    )
    expect(junk.status).toBe(200)
    expect((junk.json as Json).data.pagination.total).toBe(3)
    const page = await server.request("GET", `/api/v1/posts?search=${tag}&limit=1&offset=1&order=asc`)
    expect((page.json as Json).data.posts.map((p) => p.content)).toEqual([`${tag} two`])
    expect((page.json as Json).data.pagination).toEqual({
      limit: 1,
      offset: 1,
      total: 3,
      has_more: true,
      next_cursor: expect.any(String)
    })
    const clamped = await server.request("GET", "/api/v1/posts?limit=1000")
    expect((clamped.json as Json).data.pagination.limit).toBe(100)
  })

  it.skipIf(skip)(
    "GET /posts?cursor: a walk reads every post exactly once while posts are created during it",
    async () => {
      const tag = `walk-${Date.now()}`
      const before: Array<string> = []
      for (let i = 0; i < 7; i++) {
        before.push(
          ((await post({ content: `${tag} ${i}`, account_ids: [x], scheduled_for: future(30 + i) })).json as Json).data
            .id
        )
      }
      /** Walks the tag's posts two at a time in `order`, creating a post after every page. */
      const walk = async (order: string) => {
        const seen: Array<string> = []
        const created: Array<string> = []
        let cursor: string | null = null
        let pages = 0
        do {
          const res = await server.request(
            "GET",
            `/api/v1/posts?search=${tag}&limit=2&order=${order}${cursor === null ? "" : `&cursor=${cursor}`}`
          )
          expect(res.status, res.text).toBe(200)
          conforms("/api/v1/posts", "get", res)
          const data = (res.json as Json).data
          seen.push(...data.posts.map((p) => p.id))
          expect(data.pagination.offset).toBe(0)
          cursor = data.pagination.next_cursor as string | null
          expect(cursor === null).toBe(data.pagination.has_more === false)
          created.push(((await post({ content: `${tag} during ${order} ${pages}`, draft: true })).json as Json).data.id)
          pages++
        } while (cursor !== null && pages < 50)
        return { seen, created }
      }
      const newest = await walk("desc")
      // Newest first: the posts created during the walk sort before the cursor; every other exactly once.
      expect(new Set(newest.seen).size).toBe(newest.seen.length)
      expect([...newest.seen].sort()).toEqual([...before].sort())
      const oldest = await walk("asc")
      // Oldest first: posts created during the walk come after the cursor and are read too, once each.
      expect(new Set(oldest.seen).size).toBe(oldest.seen.length)
      const all = [...before, ...newest.created, ...oldest.created.slice(0, -1)]
      expect([...oldest.seen].sort()).toEqual(all.sort())
      // The same walk by scheduled_for (nullable: drafts without a time come last).
      const bySchedule: Array<string> = []
      let cursor: string | null = null
      do {
        const res = await server.request(
          "GET",
          `/api/v1/posts?search=${tag}&limit=3&sort=scheduled_for&order=asc${
            cursor === null ? "" : `&cursor=${cursor}`
          }`
        )
        const data = (res.json as Json).data
        bySchedule.push(...data.posts.map((p) => p.id))
        cursor = data.pagination.next_cursor as string | null
      } while (cursor !== null)
      expect(bySchedule.slice(0, before.length)).toEqual(before)
      expect([...bySchedule].sort()).toEqual([...all, oldest.created.at(-1)!].sort())
    }
  )

  it.skipIf(skip)(
    "GET /posts?cursor: a cursor not handed out, or beside an offset or another sort, is a validation error",
    async () => {
      const first = await server.request("GET", "/api/v1/posts?limit=1")
      const cursor = (first.json as Json).data.pagination.next_cursor as string
      expect(typeof cursor).toBe("string")
      for (
        const query of [
          "cursor=not-a-cursor",
          "cursor=%24%24%24",
          `cursor=${
            Buffer.from(JSON.stringify({ s: "created_at", o: "desc", k: 1, i: "nope" })).toString("base64url")
          }`,
          `cursor=${cursor}&offset=5`,
          `cursor=${cursor}&sort=updated_at`,
          `cursor=${cursor}&order=asc`
        ]
      ) {
        const res = await server.request("GET", `/api/v1/posts?${query}`)
        expect([res.status, (res.json as Json).error.code], query).toEqual([400, "validation_error"])
        expect((res.json as Json).error.retryable).toBe(false)
        expect((res.json as Json).error.details.validation_errors).toEqual([{
          path: "cursor",
          message: expect.any(String)
        }])
        conforms("/api/v1/posts", "get", res)
      }
      // The cursor's own sort and order named again are fine.
      const same = await server.request(
        "GET",
        `/api/v1/posts?limit=1&cursor=${cursor}&sort=created_at&order=desc&offset=0`
      )
      expect(same.status, same.text).toBe(200)
    }
  )

  it.skipIf(skip)("PATCH, DELETE, schedule: statuses and codes", async () => {
    const scheduled = (await post({ content: "v1", account_ids: [x], scheduled_for: future(60) })).json as Json
    const id = scheduled.data.id
    const patched = await server.request("PATCH", `/api/v1/posts/${id}`, {
      body: { content: "v2", scheduled_for: future(90) }
    })
    expect(patched.status, patched.text).toBe(200)
    expect((patched.json as Json).data).toMatchObject({ content: "v2", status: "scheduled" })
    conforms("/api/v1/posts/{id}", "patch", patched)
    const conflict = await server.request("POST", `/api/v1/posts/${id}/schedule`, { body: { publish_now: true } })
    expect([conflict.status, (conflict.json as Json).error.code]).toEqual([409, "invalid_post_status"])

    const draft = ((await post({ content: "plan", draft: true, account_ids: [linkedin] })).json as Json).data
    const soon = await server.request("POST", `/api/v1/posts/${draft.id}/schedule`, {
      body: { scheduled_for: future(0.5) }
    })
    expect([soon.status, (soon.json as Json).error.code]).toEqual([400, "past_schedule_time"])
    const ok = await server.request("POST", `/api/v1/posts/${draft.id}/schedule`, {
      body: { scheduled_for: future(5), timezone: "Asia/Tokyo" }
    })
    expect(ok.status, ok.text).toBe(200)
    expect((ok.json as Json).data).toMatchObject({ status: "scheduled", draft: false, timezone: "Asia/Tokyo" })
    expect((ok.json as Json).data.destinations).toHaveLength(1)
    conforms("/api/v1/posts/{id}/schedule", "post", ok)

    const deleted = await server.request("DELETE", `/api/v1/posts/${id}`)
    expect(deleted.status).toBe(200)
    expect((deleted.json as Json).data).toEqual({ id, post_id: id, deleted: true })
    expect((await server.request("GET", `/api/v1/posts/${id}`)).status).toBe(404)
    expect((await server.request("GET", "/api/v1/posts/not-a-uuid")).status).toBe(404)
  })

  it.skipIf(skip)(
    "PATCH from any state: a failed post's text is fixed before its retry; campaign_id cleared on a partially failed post; post.updated each time",
    async () => {
      const campaign = await server.request("POST", "/api/v1/campaigns", { body: { name: `patch ${Date.now()}` } })
      expect(campaign.status, campaign.text).toBe(201)
      const campaignId = Number((campaign.json as Json).data["id"])
      // Published immediately to two accounts the server has no client for: both fail.
      const created = await post({
        content: `fails ${Date.now()}`,
        account_ids: [x, linkedin],
        campaign_id: campaignId
      })
      expect(created.status, created.text).toBe(201)
      const id = (created.json as Json).data.id
      const settled = async (): Promise<Data> => {
        for (let i = 0; i < 300; i++) {
          const got = ((await server.request("GET", `/api/v1/posts/${id}`)).json as Json).data
          if ((got.destinations as ReadonlyArray<{ status: string }>).every((d) => d.status === "failed")) return got
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error("the post did not fail")
      }
      const failed = await settled()
      expect(failed["status"]).toBe("failed")
      const fixed = await server.request("PATCH", `/api/v1/posts/${id}`, { body: { content: "fixed text" } })
      expect(fixed.status, fixed.text).toBe(200)
      conforms("/api/v1/posts/{id}", "patch", fixed)
      expect((fixed.json as Json).data).toMatchObject({ content: "fixed text", status: "failed" })
      // The failed destinations are untouched by the edit: still failed, same attempts and error.
      expect((fixed.json as Json).data.destinations).toEqual(failed.destinations)

      // One destination published (as if retried successfully): partially failed; campaign_id can be cleared.
      const [first] = await server.withStore(Effect.map(
        Effect.flatMap(PostStore, (store) => store.findById(OrganizationId.make(server.orgId), PostId.make(id))),
        (found) => Option.getOrThrow(found).destinations
      ))
      await server.withStore(
        Effect.flatMap(
          PostStore,
          (store) =>
            store.updateDestinations([new Destination({ ...first!, status: "published", error: Option.none() })])
        )
      )
      const cleared = await server.request("PATCH", `/api/v1/posts/${id}`, { body: { campaign_id: null } })
      expect(cleared.status, cleared.text).toBe(200)
      expect((cleared.json as Json).data).toMatchObject({ campaign_id: null, status: "partially_failed" })
      // Nothing waits to publish: a new scheduled_for is refused (retry instead); the published account stays.
      const moved = await server.request("PATCH", `/api/v1/posts/${id}`, { body: { scheduled_for: future(60) } })
      expect([moved.status, (moved.json as Json).error.code]).toEqual([400, "invalid_post_status"])
      const dropped = await server.request("PATCH", `/api/v1/posts/${id}`, { body: { account_ids: [linkedin] } })
      expect([dropped.status, (dropped.json as Json).error.code]).toEqual([400, "invalid_post_status"])

      const updates = await server.withStore(Effect.map(
        Effect.flatMap(EventStore, (events) => events.list(OrganizationId.make(server.orgId))),
        (events) =>
          events.filter((e) => e.type === "post.updated" && e.data["post_id"] === id).map((e) => e.data["changed"])
      ))
      expect(updates).toEqual([["content"], ["campaign_id"]])
    },
    90_000
  )

  it.skipIf(skip)("scopes and restricted keys", async () => {
    const readOnly = await server.createKey({ scopes: ["read"] })
    const denied = await post({ content: "a", draft: true }, readOnly)
    expect([denied.status, (denied.json as Json).error.code]).toEqual([403, "insufficient_scope"])
    const id =
      ((await post({ content: "li only", account_ids: [linkedin], scheduled_for: future(30) })).json as Json).data.id
    const restricted = await server.createKey({ accounts: [x] })
    expect((await server.request("GET", `/api/v1/posts/${id}`, { key: restricted })).status).toBe(404)
    const refused = await post({ content: "a", account_ids: [linkedin] }, restricted)
    expect((refused.json as Json).error.code).toBe("invalid_accounts")
  })

  it.skipIf(skip)(
    "posting limit: the 21st immediate publish in a minute is 429 with Retry-After and publish_mode",
    async () => {
      const key = await server.createKey({ name: "limits" })
      let last: HeraldServer.Response | undefined
      // A minute boundary in the middle of a burst resets the window; a second burst then fills one.
      for (let burst = 0; burst < 2 && last?.status !== 429; burst++) {
        for (let i = 0; i <= 20; i++) {
          last = await post({ content: `burst ${burst} ${Date.now()} ${i}`, account_ids: [linkedin] }, key)
          if (last.status !== 201) break
        }
      }
      expect(last!.status, last!.text).toBe(429)
      const error = (last!.json as Json).error
      expect(error).toMatchObject({ code: "post_limit_reached", retryable: true })
      expect(error.details).toMatchObject({ limit: 20, remaining: 0, publish_mode: "immediate" })
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      conforms("/api/v1/posts", "post", last!)
      // Scheduled posts do not use the immediate allowance.
      const scheduled = await post({
        content: `later ${Date.now()}`,
        account_ids: [linkedin],
        scheduled_for: future(60)
      }, key)
      expect(scheduled.status).toBe(201)
    }
  )

  it.skipIf(skip)(
    "circuit breaker: a body with 5 recorded failures is 422, not retryable; an idempotency_key gets through",
    async () => {
      const body = { account_ids: [x], content: "always fails", scheduled_for: future(30) }
      const hash = createHash("sha256").update(CircuitBreaker.canonicalJson(body), "utf8").digest("hex")
      const org = OrganizationId.make(server.orgId)
      for (let i = 0; i < 5; i++) await server.withStore(CircuitBreaker.recordFailure(org, hash))
      const res = await post(body)
      expect(res.status, res.text).toBe(422)
      expect((res.json as Json).error).toMatchObject({
        code: "permanent_failure_circuit_breaker",
        retryable: false,
        details: { circuit_breaker_open: true, content_hash: hash, fail_count: 5, threshold: 5, ttl_seconds: 21600 }
      })
      // Errors, Circuit breaker: exactly these keys in details.
      expect(Object.keys((res.json as Json).error.details).sort()).toEqual(
        ["circuit_breaker_open", "content_hash", "fail_count", "hint", "threshold", "ttl_seconds"]
      )
      conforms("/api/v1/posts", "post", res)
      expect((await post({ ...body, idempotency_key: "new" })).status).toBe(201)
    }
  )

  it.skipIf(skip)(
    "circuit breaker: the 6-hour window slides (a failure over 5 clock hours back counts, one 6 h 1 s old does not)",
    async () => {
      const org = OrganizationId.make(server.orgId)
      /** Records failures of `body` that happened `agesMs` ago, as the engine would have then. */
      const failedAgo = async (body: unknown, agesMs: ReadonlyArray<number>) => {
        const hash = createHash("sha256").update(CircuitBreaker.canonicalJson(body), "utf8").digest("hex")
        for (const age of [...agesMs].sort((a, b) => b - a)) {
          const then = Date.now() - age
          const real = Clock.make()
          const clock: Clock.Clock = {
            [Clock.ClockTypeId]: Clock.ClockTypeId,
            unsafeCurrentTimeMillis: () => then,
            currentTimeMillis: Effect.sync(() => then),
            unsafeCurrentTimeNanos: () => BigInt(then) * 1_000_000n,
            currentTimeNanos: Effect.sync(() => BigInt(then) * 1_000_000n),
            sleep: (duration) => real.sleep(duration)
          }
          await server.withStore(Effect.withClock(CircuitBreaker.recordFailure(org, hash), clock))
        }
        return hash
      }
      const minute = 60_000
      const recent = [minute, 2 * minute, 3 * minute, 4 * minute]
      const inside = { account_ids: [x], content: `sliding in ${Date.now()}`, scheduled_for: future(30) }
      // Just before the start of the clock hour five hours back (which hourly buckets no longer count),
      // and at most 5 h 50 min old, so that it is still within 6 hours when the post arrives.
      const sinceHour = Date.now() % (60 * minute)
      const old = Math.min(5 * 60 * minute + sinceHour + 30_000, 350 * minute)
      const hash = await failedAgo(inside, [old, ...recent])
      const open = await post(inside)
      expect([open.status, (open.json as Json).error.code]).toEqual([422, "permanent_failure_circuit_breaker"])
      expect((open.json as Json).error.details).toMatchObject({ content_hash: hash, fail_count: 5 })
      const outside = { account_ids: [x], content: `sliding out ${Date.now()}`, scheduled_for: future(30) }
      await failedAgo(outside, [6 * 60 * minute + 1000, ...recent])
      const closed = await post(outside)
      expect(closed.status, closed.text).toBe(201)
    }
  )
})
