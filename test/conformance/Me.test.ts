/**
 * GET /me over real HTTP, on SQLite and (where one answers) Postgres: the current-context object (key,
 * organization, subscription, usage, posts); storage from the media actually stored; team seats
 * enforced where users are added.
 */
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
import * as Admin from "@herald/http/Admin"
import * as HeraldServer from "../support/HeraldServer.js"
import * as MediaFixtures from "../support/MediaFixtures.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Me conformance on Postgres skipped: ${pg.reason}`)

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

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("GET /me on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({ postgres })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const getMe = async (key?: string) => {
    const res = await server.request("GET", "/api/v1/me", key === undefined ? {} : { key })
    expect(res.status).toBe(200)
    return (res.json as { data: MeBody }).data
  }

  it.skipIf(skip)("describes the bootstrap key, its trial organization and its usage", async () => {
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

  it.skipIf(skip)("counts accounts and posts, and follows the plan's allowances", async () => {
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
  }, 120_000)

  const usage = async (key?: string) => (await getMe(key)).usage

  /** Presign, PUT the bytes to the signed URL, complete: the media id. */
  const stored = async (bytes: Uint8Array, key?: string) => {
    const p = await server.request("POST", "/api/v1/media/upload", {
      body: { filename: "stored.png", content_type: "image/png", file_size: bytes.length },
      ...(key === undefined ? {} : { key })
    })
    expect(p.status, p.text).toBe(201)
    const data = (p.json as { data: Record<string, string> }).data
    const put = await fetch(data["upload_url"]!, {
      method: "PUT",
      body: bytes,
      headers: { "Content-Type": "image/png" }
    })
    expect(put.status).toBe(200)
    const done = await server.request("POST", `/api/v1/media/${data["id"]}/complete`, key === undefined ? {} : { key })
    expect(done.status, done.text).toBe(200)
    return data["id"]!
  }

  it.skipIf(skip)("storage: the bytes of the media stored, kept current by uploads and deletes", async () => {
    const org = await server.createOrg({ name: `Storage ${Date.now()}`, plan: "starter" })
    const key = await server.createKey({ org })
    expect((await usage(key)).storage).toEqual({ used_bytes: 0, limit_bytes: null })
    const small = MediaFixtures.png(32, 32)
    const large = MediaFixtures.png(200, 120)
    const first = await stored(small, key)
    expect((await usage(key)).storage).toEqual({ used_bytes: small.length, limit_bytes: null })
    await stored(large, key)
    expect((await usage(key)).storage["used_bytes"]).toBe(small.length + large.length)
    // An upload never completed is not stored media.
    const pending = await server.request("POST", "/api/v1/media/upload", {
      key,
      body: { filename: "later.png", content_type: "image/png", file_size: small.length }
    })
    expect(pending.status).toBe(201)
    expect((await usage(key)).storage["used_bytes"]).toBe(small.length + large.length)
    expect((await server.request("DELETE", `/api/v1/media/${first}`, { key })).status).toBe(200)
    expect((await usage(key)).storage["used_bytes"]).toBe(large.length)
    // Another organization's media are not counted.
    expect((await usage()).storage["used_bytes"]).toBe(0)
  })

  it.skipIf(skip)("seats: a user past the plan's team seats is refused, naming the plan's seat count", async () => {
    const org = await server.createOrg({ name: `Seats ${Date.now()}`, plan: "lite" })
    const key = await server.createKey({ org })
    // What `herald users create` runs, in-process (a process per user is slow on a loaded machine).
    const addUser = (email: string) =>
      server.withStore(Effect.either(Admin.createUser({ email, role: "member", org, name: undefined })))
    expect((await addUser(`one-${Date.now()}@example.com`))._tag).toBe("Right")
    expect((await usage(key)).seats).toEqual({ used: 1, limit: 1 })
    // The command itself: refused with a non-zero exit and the plan's seat count.
    const second = await server.cli(["users", "create", `two-${Date.now()}@example.com`, "--org", org])
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain("The lite plan has 1 team seat")
    expect((await usage(key)).seats).toEqual({ used: 1, limit: 1 })
    await server.withStore(Admin.setPlan(org, "starter"))
    expect((await addUser(`three-${Date.now()}@example.com`))._tag).toBe("Right")
    // Another connection changed the plan: on Postgres the server may serve its cached organization
    // for up to 250 ms (ReadCache), so the new seat count is awaited, not read once.
    await expect.poll(async () => (await usage(key)).seats, { timeout: 10_000, interval: 100 })
      .toEqual({ used: 2, limit: 2 })
    const fourth = await addUser(`four-${Date.now()}@example.com`)
    expect(fourth._tag === "Left" ? fourth.left.message : "created").toContain("The starter plan has 2 team seats")
  }, 120_000)
})
