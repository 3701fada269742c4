/**
 * Metrics on GET /posts/{id} over real HTTP: `herald serve --sandbox` with the metrics schedule
 * shortened by `HERALD_METRICS_SCHEDULE` (for tests and demos), on SQLite and (where one answers)
 * Postgres. The sweep fetches the sandbox's growing numbers; each destination shows them inline with
 * `metrics_fetched_at`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Metrics conformance on Postgres skipped: ${pg.reason}`)

interface Destination {
  readonly platform: string
  readonly status: string
  readonly views: number
  readonly impressions: number
  readonly likes: number
  readonly metrics_fetched_at: string | null
}
interface Account {
  readonly id: number
  readonly platform: string
}

/** The envelope's data, read loosely: the test asserts on its parts. */
interface Body {
  readonly data: {
    readonly id: string
    readonly accounts: ReadonlyArray<Account>
    readonly destinations: ReadonlyArray<Destination>
  }
}
const data = (res: HeraldServer.Response) => (res.json as Body).data

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("metrics on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      args: ["--sandbox"],
      env: { HERALD_METRICS_SCHEDULE: "1s,2s", HERALD_METRICS_SWEEP_SECONDS: "0.3" }
    })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it.skipIf(skip)("a published sandbox post's destinations show metrics and when they were fetched", async () => {
    const accounts = data(await server.request("GET", "/api/v1/accounts")).accounts
    const ids = ["x", "telegram"].map((p) => accounts.find((a) => a.platform === p)!.id)
    const created = await server.request("POST", "/api/v1/posts", {
      body: { content: "metrics, please", account_ids: ids }
    })
    expect(created.status, created.text).toBe(201)
    const postId = data(created).id
    for (const d of data(created).destinations) {
      expect(d).toMatchObject({ views: 0, likes: 0, metrics_fetched_at: null })
    }
    const deadline = Date.now() + 20_000
    let destinations: ReadonlyArray<Destination> = []
    while (Date.now() < deadline) {
      const res = await server.request("GET", `/api/v1/posts/${postId}`)
      expect(res.status, res.text).toBe(200)
      destinations = data(res).destinations
      if (destinations.length === 2 && destinations.every((d) => d.metrics_fetched_at !== null)) break
      await sleep(200)
    }
    expect(destinations.map((d) => d.platform).sort()).toEqual(["telegram", "x"])
    for (const d of destinations) {
      expect(d.status).toBe("published")
      expect(d.views).toBeGreaterThan(0)
      expect(d.impressions).toBeGreaterThanOrEqual(d.views)
      expect(Number.isNaN(Date.parse(d.metrics_fetched_at!))).toBe(false)
      expect(Date.parse(d.metrics_fetched_at!)).toBeLessThanOrEqual(Date.now())
    }

    // GET /analytics/summary sums the synced figures. The sweep may fetch again between reads and the
    // sandbox's numbers only grow, so the total lies between two readings of the post taken around it.
    const sum = (ds: ReadonlyArray<Destination>) => ds.reduce((n, d) => n + d.views, 0)
    const before = sum(data(await server.request("GET", `/api/v1/posts/${postId}`)).destinations)
    const summary = await server.request("GET", "/api/v1/analytics/summary?period=all")
    expect(summary.status, summary.text).toBe(200)
    const totals = (summary.json as { data: { totals: { views: number } } }).data.totals
    const after = sum(data(await server.request("GET", `/api/v1/posts/${postId}`)).destinations)
    expect(totals.views).toBeGreaterThanOrEqual(before)
    expect(totals.views).toBeLessThanOrEqual(after)
    expect(totals.views).toBeGreaterThan(0)
  }, 60_000)
})
