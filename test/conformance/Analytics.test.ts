/**
 * GET /analytics/summary over real HTTP, on SQLite and Postgres: posts by derived status (agreeing
 * with GET /posts for a mix of posts), destinations and metrics per platform, totals, AI credits,
 * the periods and their bounds, invalid_period and invalid_range, scopes and restricted keys, and
 * the OpenAPI document.
 */
import { Destination, Metrics } from "@herald/core/domain/Destination"
import type { DestinationStatus } from "@herald/core/domain/Destination"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { OrganizationId, PostId } from "@herald/core/kernel/Ids"
import * as Post from "@herald/core/domain/Post"
import { PostStore } from "@herald/core/posts/PostStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Analytics conformance on Postgres skipped: ${pg.reason}`)

interface Summary {
  readonly period: string
  readonly from: string | null
  readonly to: string | null
  readonly posts: { readonly total: number; readonly by_status: Record<string, number> }
  readonly platforms: Record<
    string,
    { destinations: number; by_status: Record<string, number> } & Record<string, number>
  >
  readonly totals: Record<string, number>
  readonly ai_credits_used: number
}
interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly retryable: boolean
  readonly details: Record<string, unknown>
}
type Doc = {
  readonly paths: Record<
    string,
    Record<string, {
      readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
    }>
  >
}

const postStatuses = ["draft", "scheduled", "publishing", "published", "partially_failed", "failed"]
const day = 86_400_000

/** Sets the destinations of a post to the given statuses (in account order) and metrics. */
const settle = (orgId: string, postId: string, states: ReadonlyArray<DestinationStatus>, views: number) =>
  Effect.gen(function*() {
    const store = yield* PostStore
    const record = Option.getOrThrow(yield* store.findById(OrganizationId.make(orgId), PostId.make(postId)))
    yield* store.updateDestinations(record.destinations.map((d, i) =>
      new Destination({
        ...d,
        status: states[i]!,
        metrics: new Metrics({ views, likes: 1, comments: 2, shares: 3, impressions: 4, saves: 5, clicks: 6 })
      })
    ))
  })

/** A scheduled post with no destinations yet, created `ageMillis` ago (older than any API call can make). */
const insertOldPost = (orgId: string, ageMillis: number) =>
  Effect.gen(function*() {
    const createdAt = DateTime.unsafeMake(Date.now() - ageMillis)
    const post = new Post.Post({
      id: PostId.make(yield* (yield* IdGenerator).uuid),
      organizationId: OrganizationId.make(orgId),
      createdByKey: Option.none(),
      content: "an old post",
      accountIds: [],
      platformContent: {},
      mediaIds: [],
      scheduledFor: Option.none(),
      timezone: Option.none(),
      campaignId: Option.none(),
      isDraft: false,
      createdStatus: "scheduled",
      approval: Option.none(),
      idempotencyKey: Option.none(),
      requestHash: Option.none(),
      threadPosts: [],
      useQueue: false,
      createdAt,
      updatedAt: createdAt
    })
    yield* (yield* PostStore).insert({ post, destinations: [] })
  })

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("analytics on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc
  let x: number
  let bluesky: number
  let linkedin: number
  /** Destination statuses of the posts of the mix, in account order x, bluesky, linkedin. */
  const mix: ReadonlyArray<ReadonlyArray<DestinationStatus>> = [
    ["queued"],
    ["queued", "queued"],
    ["publishing", "queued"],
    ["published", "queued"],
    ["published"],
    ["published", "published", "published"],
    ["failed"],
    ["failed", "failed"],
    ["published", "failed"],
    ["published", "failed", "publishing"],
    ["published", "published", "failed"]
  ]

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
    })
    const accounts = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "an_x" },
      { platform: "bluesky", name: "a_bsky", connectionFlow: "credential" },
      { platform: "linkedin", name: "a_li" }
    ]))
    ;[x, bluesky, linkedin] = accounts.map((a) => a.id)
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const summary = async (query = "", key?: string) => {
    const res = await server.request("GET", `/api/v1/analytics/summary${query}`, key === undefined ? {} : { key })
    expect(res.status, res.text).toBe(200)
    conforms(res)
    return (res.json as { data: Summary }).data
  }
  const failure = async (query: string) => {
    const res = await server.request("GET", `/api/v1/analytics/summary${query}`)
    conforms(res)
    return { status: res.status, error: (res.json as { error: ErrorBody }).error }
  }
  const conforms = (res: HeraldServer.Response) => {
    const response = doc.paths["/api/v1/analytics/summary"]?.get?.responses[String(res.status)]
    expect(response, `documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }

  it.skipIf(skip)("an organization with nothing yet: zeros, the month by default, no AI credits", async () => {
    const empty = await summary()
    expect(empty).toMatchObject({
      period: "month",
      posts: { total: 0, by_status: Object.fromEntries(postStatuses.map((s) => [s, 0])) },
      platforms: {},
      totals: { destinations: 0, views: 0, likes: 0, comments: 0, shares: 0, impressions: 0, saves: 0, clicks: 0 },
      ai_credits_used: 0
    })
  })

  it.skipIf(skip)(
    "counts posts by the status GET /posts reports, with the per-platform breakdown and metric totals",
    async () => {
      const accounts = [x, bluesky, linkedin]
      const ids: Array<string> = []
      for (const [i, states] of mix.entries()) {
        const res = await server.request("POST", "/api/v1/posts", {
          body: {
            content: `post ${i}`,
            account_ids: accounts.slice(0, states.length),
            scheduled_for: new Date(Date.now() + day).toISOString()
          }
        })
        expect(res.status, res.text).toBe(201)
        const id = (res.json as { data: { id: string } }).data.id
        ids.push(id)
        await server.withStore(settle(server.orgId, id, states, 10 * (i + 1)))
      }
      for (let i = 0; i < 2; i++) {
        const draft = await server.request("POST", "/api/v1/posts", { body: { content: `draft ${i}`, draft: true } })
        expect(draft.status, draft.text).toBe(201)
      }

      const data = await summary("?period=month")
      // What GET /posts reports, post by post and through its status filter.
      const reported: Record<string, number> = Object.fromEntries(postStatuses.map((s) => [s, 0]))
      const list = await server.request("GET", "/api/v1/posts?limit=100")
      for (
        const p of (list.json as { data: { posts: ReadonlyArray<{ status: string }> } }).data.posts
      ) reported[p.status]! += 1
      expect(data.posts.by_status).toEqual(reported)
      for (const status of postStatuses) {
        const filtered = await server.request("GET", `/api/v1/posts?status=${status}&limit=1`)
        expect((filtered.json as { data: { pagination: { total: number } } }).data.pagination.total, status)
          .toBe(data.posts.by_status[status])
      }
      expect(data.posts.total).toBe(mix.length + 2)
      expect(data.posts.by_status).toEqual({
        draft: 2,
        scheduled: 2,
        publishing: 3,
        published: 2,
        partially_failed: 2,
        failed: 2
      })

      // The breakdown, from the mix itself.
      const platforms = ["x", "bluesky", "linkedin"]
      const expected: Record<string, { destinations: number; by_status: Record<string, number>; views: number }> = {}
      let views = 0
      for (const [i, states] of mix.entries()) {
        for (const [j, status] of states.entries()) {
          const entry = expected[platforms[j]!] ??= {
            destinations: 0,
            by_status: { queued: 0, publishing: 0, published: 0, failed: 0 },
            views: 0
          }
          entry.destinations += 1
          entry.by_status[status]! += 1
          entry.views += 10 * (i + 1)
          views += 10 * (i + 1)
        }
      }
      const destinations = mix.flat().length
      for (const platform of platforms) expect(data.platforms[platform], platform).toMatchObject(expected[platform]!)
      expect(Object.keys(data.platforms).sort()).toEqual([...platforms].sort())
      expect(data.platforms.x).toMatchObject({ likes: mix.length, clicks: 6 * mix.length })
      expect(data.totals).toEqual({
        destinations,
        views,
        likes: destinations,
        comments: 2 * destinations,
        shares: 3 * destinations,
        impressions: 4 * destinations,
        saves: 5 * destinations,
        clicks: 6 * destinations
      })
      expect(data.ai_credits_used).toBe(0)
    }
  )

  it.skipIf(skip)("periods: UTC bounds of today, the ISO week and the month; all; custom [from, to)", async () => {
    await server.withStore(insertOldPost(server.orgId, 400 * day))
    const now = new Date()
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())

    const today = await summary("?period=today")
    expect([today.from, today.to]).toEqual([new Date(midnight).toISOString(), new Date(midnight + day).toISOString()])
    const week = await summary("?period=week")
    const monday = midnight - ((now.getUTCDay() + 6) % 7) * day
    expect([week.from, week.to]).toEqual([new Date(monday).toISOString(), new Date(monday + 7 * day).toISOString()])
    const month = await summary("?period=month")
    expect([month.from, month.to]).toEqual([
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
    ])
    expect(await summary()).toEqual(month)

    // Everything so far was created today, except the old post.
    for (const current of [today, week, month]) expect(current.posts).toEqual(month.posts)
    const all = await summary("?period=all")
    expect([all.from, all.to]).toEqual([null, null])
    expect(all.posts.total).toBe(month.posts.total + 1)
    expect(all.posts.by_status.scheduled).toBe(month.posts.by_status.scheduled! + 1)

    const around = (from: number, to: number) =>
      `?period=custom&from=${encodeURIComponent(new Date(from).toISOString())}&to=${
        encodeURIComponent(new Date(to).toISOString())
      }`
    const old = await summary(around(Date.now() - 401 * day, Date.now() - 399 * day))
    expect(old.posts).toMatchObject({ total: 1, by_status: { scheduled: 1 } })
    expect(old.period).toBe("custom")
    const recent = await summary(around(Date.now() - day, Date.now() + day))
    expect(recent.posts).toEqual(month.posts)
    expect(recent.totals).toEqual(month.totals)
    // `to` is exclusive; a timestamp without an offset is UTC.
    const before = await summary(around(Date.now() - 401 * day, Date.now() - 2 * day))
    expect(before.posts.total).toBe(1)
    const naive = await summary("?period=custom&from=2000-01-01T00:00:00&to=2000-01-02T00:00:00")
    expect([naive.from, naive.to]).toEqual(["2000-01-01T00:00:00.000Z", "2000-01-02T00:00:00.000Z"])
    expect(naive.posts.total).toBe(0)
  })

  it.skipIf(skip)("400 invalid_period and invalid_range", async () => {
    for (const query of ["?period=year", "?period=", "?period=Month"]) {
      const { error, status } = await failure(query)
      expect(status, query).toBe(400)
      expect(error, query).toMatchObject({ code: "invalid_period", retryable: false })
      expect(error.details.valid_periods).toEqual(["today", "week", "month", "all", "custom"])
    }
    const at = "2026-01-01T00:00:00Z"
    for (
      const query of [
        "?period=custom",
        `?period=custom&from=${at}`,
        `?period=custom&to=${at}`,
        `?period=custom&from=yesterday&to=${at}`,
        `?period=custom&from=${at}&to=2026-13-01T00:00:00Z`,
        `?period=custom&from=${at}&to=${at}`,
        `?period=custom&from=2026-02-01T00:00:00Z&to=${at}`
      ]
    ) {
      const { error, status } = await failure(query)
      expect(status, query).toBe(400)
      expect(error, query).toMatchObject({ code: "invalid_range", retryable: false })
    }
    // from and to mean nothing outside custom.
    expect((await summary(`?period=all&from=nonsense`)).period).toBe("all")
  })

  it.skipIf(skip)(
    "no plan gates analytics or the platform rules: the smallest plan (lite) gets both, never 402",
    async () => {
      expect((await server.cli(["orgs", "set-plan", server.orgId, "lite"])).code).toBe(0)
      try {
        expect((await summary("?period=all")).posts.total).toBeGreaterThan(0)
        expect((await server.request("GET", "/api/v1/platform-rules")).status).toBe(200)
      } finally {
        expect((await server.cli(["orgs", "set-plan", server.orgId, "trial"])).code).toBe(0)
      }
    }
  )

  it.skipIf(skip)("needs the read scope; a restricted key counts only the posts it can see", async () => {
    const writeOnly = await server.createKey({ scopes: ["write"] })
    const refused = await server.request("GET", "/api/v1/analytics/summary", { key: writeOnly })
    expect(refused.status).toBe(403)
    expect((refused.json as { error: ErrorBody }).error.code).toBe("insufficient_scope")
    expect((await server.request("GET", "/api/v1/analytics/summary", { key: null })).status).toBe(401)

    const onlyX = await server.createKey({ scopes: ["read"], accounts: [x] })
    const mine = await summary("?period=all", onlyX)
    // Posts whose every target is x: the single-account posts of the mix (drafts without accounts too).
    const single = mix.filter((states) => states.length === 1).length
    expect(mine.posts.total).toBe(single + 2 + 1)
    expect(Object.keys(mine.platforms)).toEqual(["x"])
    expect(mine.platforms.x!.destinations).toBe(single)
  })
})
