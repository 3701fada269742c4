/**
 * GET /me over real HTTP: the current-context object (key, organization, subscription, usage, posts).
 */
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { OrganizationId, PostId } from "@herald/core/kernel/Ids"
import * as Post from "@herald/core/posts/Post"
import { PostStore } from "@herald/core/posts/PostStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

let server: HeraldServer.HeraldServer

beforeAll(async () => {
  server = await HeraldServer.start()
})
afterAll(async () => {
  await server?.stop()
})

const insertDraft = (organizationId: string) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const post = new Post.Post({
      id: PostId.make(yield* (yield* IdGenerator).uuid),
      organizationId: OrganizationId.make(organizationId),
      createdByKey: Option.none(),
      content: "a draft",
      accountIds: [],
      platformContent: {},
      mediaIds: [],
      scheduledFor: Option.none(),
      timezone: Option.none(),
      campaignId: Option.none(),
      isDraft: true,
      createdStatus: "draft",
      approval: Option.none(),
      idempotencyKey: Option.none(),
      requestHash: Option.none(),
      threadPosts: [],
      useQueue: false,
      createdAt: now,
      updatedAt: now
    })
    yield* (yield* PostStore).insert({ post, destinations: [] })
  })

interface MeBody {
  readonly key: Record<string, unknown>
  readonly organization: Record<string, unknown>
  readonly subscription: Record<string, unknown>
  readonly usage: Record<string, Record<string, unknown>>
  readonly posts: { total: number; by_status: Record<string, number> }
}

const getMe = async (key?: string) => {
  const res = await server.request("GET", "/api/v1/me", key === undefined ? {} : { key })
  expect(res.status).toBe(200)
  return (res.json as { data: MeBody }).data
}

describe("GET /me", () => {
  it("describes the bootstrap key, its trial organization and its usage", async () => {
    const me = await getMe()
    expect(Object.keys(me).sort()).toEqual(["key", "organization", "posts", "subscription", "usage"])
    expect(me.key).toEqual({
      id: expect.any(String),
      name: "bootstrap",
      scopes: ["read", "write", "ai"],
      account_ids: null,
      expires_at: null
    })
    expect(me.organization).toEqual({ id: server.orgId, name: "Default organization", plan: "trial" })
    expect(me.subscription.status).toBe("trialing")
    const trialEnds = Date.parse(String(me.subscription.trial_ends_at))
    const days = (trialEnds - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(13)
    expect(days).toBeLessThanOrEqual(14)
    expect(me.usage).toEqual({
      accounts: { used: 0, limit: 5 },
      ai_credits: { used: 0, limit: 25, remaining: 25 },
      storage: { used_bytes: 0, limit_bytes: null },
      seats: { used: 1, limit: 2 }
    })
    expect(me.posts).toEqual({
      total: 0,
      by_status: { draft: 0, scheduled: 0, publishing: 0, published: 0, partially_failed: 0, failed: 0 }
    })
  })

  it("counts accounts and posts, and follows the plan's allowances", async () => {
    const [first] = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "one" },
      { platform: "bluesky", name: "two", connectionFlow: "credential" }
    ]))
    await server.withStore(insertDraft(server.orgId))
    const setPlan = await server.cli(["orgs", "set-plan", server.orgId, "growth"])
    expect(setPlan.code).toBe(0)

    const me = await getMe()
    expect(me.organization.plan).toBe("growth")
    expect(me.subscription).toEqual({ status: "active", trial_ends_at: expect.any(String) })
    expect(me.usage.accounts).toEqual({ used: 2, limit: 10 })
    expect(me.usage.ai_credits).toEqual({ used: 0, limit: 100, remaining: 100 })
    expect(me.usage.seats).toEqual({ used: 1, limit: 3 })
    expect(me.posts.total).toBe(1)
    expect(me.posts.by_status.draft).toBe(1)

    const restricted = await server.createKey({
      name: "restricted",
      scopes: ["read"],
      accounts: [first.id],
      expires: "2099-01-01T00:00:00Z"
    })
    const mine = await getMe(restricted)
    expect(mine.key).toEqual({
      id: expect.any(String),
      name: "restricted",
      scopes: ["read"],
      account_ids: [first.id],
      expires_at: "2099-01-01T00:00:00.000Z"
    })
  })
})
