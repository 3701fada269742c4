/**
 * The in-process API (`createHerald`, the Promise flavour over the `Herald` service): posts through the
 * sandbox, typed errors with the catalogue's codes, events from the outbox, graceful close.
 */
import { createHerald, HeraldError } from "@herald/http/HeraldClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-inprocess-"))
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

describe("createHerald", () => {
  it("publishes through the sandbox, hears post.published in-process, and errors carry the API's codes", async () => {
    const herald = await createHerald({ dataDir, platforms: "sandbox", secret: "in-process-test-secret", worker: { pollMillis: 100 } })
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
    } finally {
      await herald.close()
    }
    // Closed: the store is released, and a second instance on the same data dir starts and sees the post.
    const again = await createHerald({ dataDir, platforms: "sandbox", secret: "in-process-test-secret", worker: false })
    try {
      expect((await again.posts.list()).pagination.total).toBe(1)
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
  }, 90_000)
})
