/**
 * Two audit fixes over real HTTP, on SQLite and Postgres: an immediate publish (POST /posts without
 * scheduled_for, or POST /posts/{id}/schedule with publish_now) answers `publishing`, not
 * `scheduled`, and GET agrees; the posting allowances are per user, so two keys of one user share them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Posting deviations on Postgres skipped: ${pg.reason}`)

interface Json {
  readonly data: Record<string, unknown> & { posts: ReadonlyArray<{ id: string }> }
  readonly error: { code: string; details: Record<string, unknown> }
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("posting fixes on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let linkedin: number

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
    })
    const accounts = await server.withStore(insertAccounts(server.orgId, [{ platform: "linkedin", name: "dev_li" }]))
    linkedin = accounts[0]!.id
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const post = (body: unknown, key?: string) =>
    server.request("POST", "/api/v1/posts", { body, ...(key ? { key } : {}) })
  const freshMinute = async () => {
    const ms = Date.now() % 60_000
    if (ms > 35_000) await new Promise((r) => setTimeout(r, 60_500 - ms))
  }

  it.skipIf(skip)(
    "an immediate POST /posts and a publish_now schedule answer publishing, and GET never says scheduled",
    async () => {
      const now = await post({ content: `now ${Date.now()}`, account_ids: [linkedin] })
      expect(now.status, now.text).toBe(201)
      expect((now.json as Json).data["status"]).toBe("publishing")
      const id = String((now.json as Json).data["id"])
      const got = await server.request("GET", `/api/v1/posts/${id}`)
      expect((got.json as Json).data["status"]).not.toBe("scheduled")
      const listed = await server.request("GET", "/api/v1/posts?status=scheduled&limit=100")
      expect((listed.json as Json).data.posts.map((p) => p.id)).not.toContain(id)

      const draft = await post({ content: `draft ${Date.now()}`, draft: true, account_ids: [linkedin] })
      const draftId = String((draft.json as Json).data["id"])
      const scheduled = await server.request("POST", `/api/v1/posts/${draftId}/schedule`, {
        body: { publish_now: true }
      })
      expect(scheduled.status, scheduled.text).toBe(200)
      expect((scheduled.json as Json).data["status"]).toBe("publishing")
      const later = await post({
        content: `later ${Date.now()}`,
        account_ids: [linkedin],
        scheduled_for: new Date(Date.now() + 3_600_000).toISOString()
      })
      expect((later.json as Json).data["status"]).toBe("scheduled")
    }
  )

  it.skipIf(skip)("two keys of one user share the immediate allowance (20 per minute)", async () => {
    // `herald keys create` records the organization's owner, the bootstrap key's user, as creator.
    const second = await server.createKey({ name: "second key of the owner" })
    await freshMinute()
    let used = 0
    let refused: HeraldServer.Response | undefined
    for (let i = 0; i < 21 && refused === undefined; i++) {
      const res = await post({ content: `shared ${i} ${Date.now()}`, account_ids: [linkedin] }, second)
      if (res.status === 201) used++
      else refused = res
    }
    // The first test's two immediate publishes (same minute, bootstrap key) may share this window.
    expect(refused?.status, refused?.text).toBe(429)
    expect(used).toBeLessThanOrEqual(20)
    const other = await post({ content: `bootstrap ${Date.now()}`, account_ids: [linkedin] })
    expect([other.status, (other.json as Json).error.code]).toEqual([429, "post_limit_reached"])
    expect((other.json as Json).error.details).toMatchObject({ limit: 20, publish_mode: "immediate" })
  }, 90_000)
})
