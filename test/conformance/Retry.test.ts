/**
 * POST /posts/{post_id}/retry and POST /posts/retry-failed over real HTTP against `herald serve`, on
 * SQLite and (where it answers) Postgres: shapes, the envelope, 409 with nothing failed, filters and
 * their errors, scopes and restricted keys.
 */
import type { SocialAccount } from "@herald/core/domain/Account"
import { Destination, Metrics } from "@herald/core/domain/Destination"
import { DestinationId, OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { Post } from "@herald/core/domain/Post"
import { PostStore } from "@herald/core/posts/PostStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Retry conformance on Postgres skipped: ${pg.reason}`)

type Status = "queued" | "publishing" | "published" | "failed"

/** A post written straight into the store, with one destination per account in the given status. */
const insertPost = (
  orgId: string,
  targets: ReadonlyArray<{ account: SocialAccount; status: Status; failedAt?: number }>
) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const organizationId = OrganizationId.make(orgId)
    const postId = PostId.make(randomUUID())
    const post = new Post({
      id: postId,
      organizationId,
      createdByKey: Option.none(),
      content: "retry me",
      accountIds: targets.map((t) => t.account.id),
      platformContent: {},
      mediaIds: [],
      scheduledFor: Option.none(),
      timezone: Option.none(),
      campaignId: Option.none(),
      isDraft: false,
      createdStatus: "publishing",
      approval: Option.none(),
      idempotencyKey: Option.none(),
      requestHash: Option.none(),
      threadPosts: [],
      useQueue: false,
      createdAt: now,
      updatedAt: now
    })
    // Failed and published destinations are settled: the server's dispatcher leaves them alone.
    const destinations = targets.map(({ account, failedAt, status }) =>
      new Destination({
        id: DestinationId.make(randomUUID()),
        postId,
        organizationId,
        accountId: account.id,
        platform: account.platform,
        accountName: account.accountName,
        status,
        dueAt: now,
        attempts: status === "queued" ? 0 : 3,
        error: status === "failed"
          ? Option.some("The platform answered 503 (gave up after 3 attempts)")
          : Option.none(),
        platformPostId: status === "published" ? Option.some("123") : Option.none(),
        platformPostUrl: status === "published" ? Option.some("https://example.test/123") : Option.none(),
        publishedAt: status === "published" ? Option.some(now) : Option.none(),
        failedAt: status === "failed"
          ? Option.some(DateTime.unsafeMake(failedAt ?? DateTime.toEpochMillis(now)))
          : Option.none(),
        metrics: Metrics.zero,
        createdAt: now,
        updatedAt: now
      })
    )
    yield* (yield* PostStore).insert({ post, destinations })
    return { post, destinations }
  })

interface Envelope<A> {
  readonly data: A
  readonly error: {
    readonly code: string
    readonly message: string
    readonly retryable: boolean
    readonly details?: Readonly<Record<string, unknown>>
  } | null
}

interface DestinationBody {
  readonly id: string
  readonly account_id: number
  readonly platform: string
  readonly status: string
  readonly attempts: number
  readonly error: string | null
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("retry on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let x: SocialAccount
  let linkedin: SocialAccount
  let telegram: SocialAccount

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({ postgres })
    ;[x, linkedin, telegram] = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "retry_x" },
      { platform: "linkedin", name: "retry_linkedin" },
      { platform: "telegram", name: "retry_telegram", connectionFlow: "credential" }
    ]))
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const seed = (targets: Parameters<typeof insertPost>[1]) => server.withStore(insertPost(server.orgId, targets))

  it.skipIf(skip)("retries every failed destination without a body: 200, queued, no synchronous publish", async () => {
    const { post } = await seed([
      { account: x, status: "failed" },
      { account: linkedin, status: "failed" },
      { account: telegram, status: "published" }
    ])
    const response = await server.request("POST", `/api/v1/posts/${post.id}/retry`)
    expect(response.status).toBe(200)
    const body = response.json as Envelope<{
      post_id: string
      retried_count: number
      destinations: ReadonlyArray<DestinationBody>
      next_step: string
    }>
    expect(body.error).toBeNull()
    expect(body.data.post_id).toBe(post.id)
    expect(body.data.retried_count).toBe(2)
    expect(body.data.destinations.map((d) => d.platform).sort()).toEqual(["linkedin", "x"])
    for (const d of body.data.destinations) {
      expect(d).toMatchObject({ status: "queued", attempts: 0, error: null })
      expect(Object.keys(d)).toEqual(expect.arrayContaining([
        "account_id",
        "account_name",
        "platform",
        "status",
        "platform_post_id",
        "platform_post_url",
        "published_at",
        "error",
        "attempts"
      ]))
    }
    expect(typeof body.data.next_step).toBe("string")
  })

  it.skipIf(skip)("account_ids limits the retry; nothing failed among them is 409 no_failed_destinations", async () => {
    const { post } = await seed([{ account: x, status: "failed" }, { account: linkedin, status: "failed" }])
    const only = await server.request("POST", `/api/v1/posts/${post.id}/retry`, {
      body: { account_ids: [linkedin.id] }
    })
    expect(only.status).toBe(200)
    const data = (only.json as Envelope<{ retried_count: number; destinations: ReadonlyArray<DestinationBody> }>).data
    expect(data.retried_count).toBe(1)
    expect(data.destinations[0]!.account_id).toBe(linkedin.id)

    const published = await seed([{ account: telegram, status: "published" }])
    const conflict = await server.request("POST", `/api/v1/posts/${published.post.id}/retry`, { body: {} })
    expect(conflict.status).toBe(409)
    const error = (conflict.json as Envelope<null>).error!
    expect(error.code).toBe("no_failed_destinations")
    expect(error.retryable).toBe(false)
    expect((conflict.json as Envelope<null>).data).toBeNull()
  })

  it.skipIf(skip)("unknown or malformed post ids are 404; bad bodies are 400", async () => {
    expect((await server.request("POST", `/api/v1/posts/${randomUUID()}/retry`)).status).toBe(404)
    expect((await server.request("POST", "/api/v1/posts/not-a-uuid/retry")).status).toBe(404)
    const { post } = await seed([{ account: x, status: "failed" }])
    const badJson = await server.request("POST", `/api/v1/posts/${post.id}/retry`, { rawBody: "{\"account_ids\": [" })
    expect(badJson.status).toBe(400)
    expect((badJson.json as Envelope<null>).error!.code).toBe("invalid_json")
    const badField = await server.request("POST", `/api/v1/posts/${post.id}/retry`, { body: { account_ids: "x" } })
    expect(badField.status).toBe(400)
    expect((badField.json as Envelope<null>).error!.code).toBe("validation_error")
  })

  it.skipIf(skip)("needs the write scope; a key restricted to other accounts does not see the post", async () => {
    const { post } = await seed([{ account: x, status: "failed" }, { account: linkedin, status: "failed" }])
    const readOnly = await server.createKey({ scopes: ["read"] })
    const denied = await server.request("POST", `/api/v1/posts/${post.id}/retry`, { key: readOnly })
    expect(denied.status).toBe(403)
    expect((denied.json as Envelope<null>).error!.code).toBe("insufficient_scope")
    const restricted = await server.createKey({ scopes: ["read", "write"], accounts: [x.id] })
    const hidden = await server.request("POST", `/api/v1/posts/${post.id}/retry`, { key: restricted })
    expect(hidden.status).toBe(404)
  })

  it.skipIf(skip)("retry-failed: no_filter, bulk_limit_exceeded, bad values", async () => {
    for (const body of [undefined, {}, { max_attempts: 3 }]) {
      const response = await server.request("POST", "/api/v1/posts/retry-failed", body === undefined ? {} : { body })
      expect(response.status).toBe(400)
      expect((response.json as Envelope<null>).error!.code).toBe("no_filter")
    }
    const tooMany = await server.request("POST", "/api/v1/posts/retry-failed", {
      body: { post_ids: Array.from({ length: 201 }, () => randomUUID()) }
    })
    expect(tooMany.status).toBe(400)
    expect((tooMany.json as Envelope<null>).error!.code).toBe("bulk_limit_exceeded")
    // Past the generic cap of 1,000 members per array, the endpoint's own limit still answers.
    const huge = await server.request("POST", "/api/v1/posts/retry-failed", {
      body: { post_ids: Array.from({ length: 1001 }, () => randomUUID()) }
    })
    expect([huge.status, (huge.json as Envelope<null>).error!.code]).toEqual([400, "bulk_limit_exceeded"])
    expect((huge.json as Envelope<null>).error!.details).toMatchObject({ limit: 200, received: 1001 })
    const badPlatform = await server.request("POST", "/api/v1/posts/retry-failed", { body: { platform: "myspace" } })
    expect(badPlatform.status).toBe(400)
    expect((badPlatform.json as Envelope<null>).error!.code).toBe("validation_error")
    const badTime = await server.request("POST", "/api/v1/posts/retry-failed", { body: { failed_after: "yesterday" } })
    expect(badTime.status).toBe(400)
    expect((badTime.json as Envelope<null>).error!.code).toBe("invalid_datetime")
  })

  it.skipIf(skip)("retry-failed by post_ids, then by platform (twitter means x) and time range", async () => {
    const now = Date.now()
    const a = await seed([{ account: x, status: "failed", failedAt: now - 3_600_000 }, {
      account: telegram,
      status: "published"
    }])
    const b = await seed([{ account: linkedin, status: "failed", failedAt: now - 3_600_000 }])
    const byIds = await server.request("POST", "/api/v1/posts/retry-failed", { body: { post_ids: [b.post.id] } })
    expect(byIds.status).toBe(200)
    const idsData = (byIds.json as Envelope<{
      retried_count: number
      post_count: number
      posts: ReadonlyArray<{ post_id: string; retried_count: number; destinations: ReadonlyArray<DestinationBody> }>
      has_more: boolean
      next_step: string
    }>).data
    expect(idsData).toMatchObject({ retried_count: 1, post_count: 1, has_more: false })
    expect(idsData.posts[0]).toMatchObject({ post_id: b.post.id, retried_count: 1 })
    expect(idsData.posts[0]!.destinations[0]).toMatchObject({ status: "queued", platform: "linkedin" })

    const window = {
      failed_after: new Date(now - 2 * 3_600_000).toISOString(),
      failed_before: new Date(now - 1_800_000).toISOString()
    }
    const byPlatform = await server.request("POST", "/api/v1/posts/retry-failed", {
      body: { platform: "twitter", ...window }
    })
    expect(byPlatform.status).toBe(200)
    const data =
      (byPlatform.json as Envelope<{ retried_count: number; posts: ReadonlyArray<{ post_id: string }> }>).data
    // Other tests' failures on x lie outside the window.
    expect(data.posts.map((p) => p.post_id)).toEqual([a.post.id])
    expect(data.retried_count).toBe(1)
  })
})
