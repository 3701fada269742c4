/**
 * The in-process API (`createHerald`, the Promise flavour over the `Herald` service): posts through the
 * sandbox, typed errors with the catalogue's codes, events from the outbox, graceful close.
 */
import { createHerald, HeraldError } from "@herald/http/HeraldClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { createFreshPgDatabase, probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-inprocess-"))
const drops: Array<Effect.Effect<void>> = []
afterAll(async () => {
  for (const drop of drops) await Effect.runPromise(drop)
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] in-process API on Postgres: ${pg.reason}`)

const stores = [
  { label: "sqlite", database: async () => undefined as string | undefined },
  {
    label: "postgres",
    skip: !pg.available,
    database: async () => {
      const db = await Effect.runPromise(createFreshPgDatabase())
      drops.push(db.drop)
      return db.url
    }
  }
]

describe.each(stores)("createHerald on $label", ({ label, skip, database }) => {
  it.skipIf(skip === true)(
    "publishes through the sandbox, hears post.published in-process, and errors carry the API's codes",
    async () => {
      const url = await database()
      const base = {
        dataDir: path.join(dataDir, label),
        platforms: "sandbox" as const,
        secret: "in-process-test-secret",
        ...(url === undefined ? {} : { database: url })
      }
      const herald = await createHerald({ ...base, worker: { pollMillis: 100 } })
      try {
        const { accounts } = await herald.accounts.list()
        expect(accounts.length).toBeGreaterThan(0)
        const published: Array<{ event: string; event_id: string; data: Record<string, unknown> }> = []
        const subscription = await herald.events.subscribe(["post.published"], (e) => {
          published.push(e as never)
        }, { pollMillis: 50 })

        const post = await herald.posts.create({ content: "Hello from the host", account_ids: [accounts[0]!.id] })
        expect(post.id).toMatch(/^[0-9a-f-]{36}$/)
        expect(post.account_ids).toEqual([accounts[0]!.id])

        const deadline = Date.now() + 20_000
        while (!published.some((e) => e.data["post_id"] === post.id) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100))
        }
        const event = published.find((e) => e.data["post_id"] === post.id)
        expect(event?.event).toBe("post.published")
        expect(Object.keys(event ?? {}).sort()).toEqual(["created_at", "data", "event", "event_id", "organization_id"])
        expect((await herald.posts.get(post.id)).status).toBe("published")
        await subscription.unsubscribe()

        const invalid = await herald.posts.create({ content: "", account_ids: [] }).catch((e: unknown) => e)
        expect(invalid).toBeInstanceOf(HeraldError)
        expect((invalid as HeraldError).code).toBe("invalid_accounts")
        const missing = await herald.posts.get("00000000-0000-4000-8000-000000000000").catch((e: unknown) => e)
        expect((missing as HeraldError).code).toBe("not_found")

        const listed = await herald.posts.list({ limit: "5" })
        expect(listed.posts.map((p) => p.id)).toContain(post.id)

        // The posting queue in-process: set it, and use_queue lands a post on its first forecast opening.
        await herald.queue.set({ timezone: "Europe/Berlin", openings: "mon-sun 09:00" })
        const forecast = await herald.queue.show(1)
        const queued = await herald.posts.create({
          content: "Queued from the host",
          account_ids: [accounts[0]!.id],
          use_queue: true
        })
        expect(queued.scheduled_for).toBe(forecast.forecast[0]!.scheduled_for)
      } finally {
        await herald.close()
      }
      // Closed: the store is released, and a second instance on the same data dir starts and sees the post.
      const again = await createHerald({ ...base, worker: false })
      try {
        expect((await again.posts.list()).pagination.total).toBe(2)
        // From the beginning, a subscriber hears the events already kept, in append order.
        const types: Array<string> = []
        const sub = await again.events.subscribe("*", (e) => {
          types.push(e.event)
        }, { from: "beginning", pollMillis: 20 })
        const until = Date.now() + 10_000
        while (!types.includes("post.published") && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
        await sub.unsubscribe()
        expect(types.indexOf("post.published")).toBeGreaterThan(-1)
        expect(types.filter((t) => t === "post.published")).toHaveLength(1)
      } finally {
        await again.close()
      }
    },
    90_000
  )
})

describe("createHerald's configuration", () => {
  it("is checked before anything starts: validation_error naming every wrong field, nothing created", async () => {
    const dir = path.join(dataDir, "bad-config")
    const failed = await createHerald({
      dataDir: dir,
      platforms: "staging" as never,
      organizationId: "not-a-uuid",
      worker: { pollMillis: -1 }
    }).catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(HeraldError)
    expect((failed as HeraldError).code).toBe("validation_error")
    const paths = ((failed as HeraldError).details?.["validation_errors"] as Array<{ path: string }>).map((e) => e.path)
    expect(paths).toEqual(expect.arrayContaining(["platforms", "organizationId", "worker"]))
    expect(fs.existsSync(dir)).toBe(false)
  })
})

describe("the in-process use cases", () => {
  it(
    "approvals, AI, campaigns, webhooks, media and analytics answer in the API's shapes; a failing event handler gets the events again",
    async () => {
      const herald = await createHerald({
        dataDir: path.join(dataDir, "use-cases"),
        secret: "in-process-test-secret",
        worker: false
      })
      try {
        const campaign = await herald.campaigns.create({ name: "Launch", color: "#AA0000" })
        expect(campaign).toMatchObject({ name: "Launch", color: "#aa0000", status: "active" })
        const { accounts } = await herald.accounts.list()
        const draft = await herald.posts.create({
          content: "Draft",
          account_ids: [accounts[0]!.id],
          draft: true,
          campaign_id: campaign.id
        })
        expect(draft).toMatchObject({ status: "draft", campaign_id: campaign.id, draft: true })
        const scheduled = await herald.posts.schedule(draft.id, {
          scheduled_for: new Date(Date.now() + 3_600_000).toISOString()
        })
        expect(scheduled.status).toBe("scheduled")
        expect((await herald.campaigns.list()).campaigns.map((c) => c.id)).toEqual([campaign.id])

        // Approvals: a draft awaiting review, changes requested, then approved.
        const review = await herald.posts.create({
          content: "Needs review",
          account_ids: [accounts[0]!.id],
          draft: true,
          request_approval: true
        })
        expect(review.approval_status).toBe("pending")
        const changes = await herald.approvals.requestChanges(review.id, { note: "Shorter please" })
        expect(changes).toMatchObject({ approval_status: "changes_requested", approval_note: "Shorter please" })
        const noNote = await herald.approvals.requestChanges(review.id, {}).catch((e: unknown) => e)
        expect((noNote as HeraldError).code).toBe("validation_error")

        // AI through the sandbox provider (platforms: sandbox), charged to the organization's credits.
        const captions = await herald.ai.generateCaption({ topic: "A product launch", count: 2 })
        expect(captions).toMatchObject({ sandbox: true, count: 2 })
        expect(captions.captions).toHaveLength(2)

        const hook = await herald.webhooks.create({ url: "https://example.com/hooks", events: ["post.published"] })
        expect(hook.secret).toMatch(/^whsec_/)
        expect((await herald.webhooks.list()).webhooks.map((w) => w.id)).toEqual([hook.id])
        await herald.webhooks.delete(hook.id)
        expect((await herald.webhooks.list()).webhooks).toEqual([])

        expect((await herald.media.list()).media).toEqual([])
        const summary = await herald.analytics.summary({ period: "week" })
        expect(summary).toBeTypeOf("object")
        const badPeriod = await herald.analytics.summary({ period: "fortnight" }).catch((e: unknown) => e)
        expect((badPeriod as HeraldError).code).toBe("invalid_period")

        // At least once: the handler fails on its first call; the same events come again, in order.
        const seen: Array<string> = []
        const ids: Array<string> = []
        let failures = 0
        const sub = await herald.events.subscribe("*", (e) => {
          if (failures++ === 0) throw new Error("host handler failed")
          seen.push(`${e.event}:${String(e.data["post_id"])}`)
          ids.push(e.event_id)
        }, { from: "beginning", pollMillis: 20, onError: () => undefined })
        const until = Date.now() + 10_000
        while (!seen.includes(`post.scheduled:${draft.id}`) && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 20))
        }
        await sub.unsubscribe()
        expect(failures).toBeGreaterThan(1)
        expect(seen).toContain(`post.scheduled:${draft.id}`)
        // Once the handler succeeds each event comes once, in append order (created before scheduled).
        expect(new Set(ids).size).toBe(ids.length)
        expect(seen.indexOf(`post.scheduled:${draft.id}`)).toBeGreaterThan(-1)
      } finally {
        await herald.close()
      }
    },
    60_000
  )
})
