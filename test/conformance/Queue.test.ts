/**
 * The posting queue over real HTTP, on SQLite and Postgres: GET /queue (no queue, empty, openings and
 * the forecast in the queue's zone and in UTC), `herald queue set/show`, use_queue on POST /posts
 * (missing, empty and full queues each with their own 400 message), use_queue on POST
 * /posts/{id}/schedule (a draft takes the next free opening), and 20 concurrent use_queue creates
 * taking 20 distinct openings.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Queue conformance on Postgres skipped: ${pg.reason}`)

interface Forecast {
  readonly position: number
  readonly scheduled_for: string
  readonly local_date: string
  readonly local_time: string
  readonly local: string
  readonly weekday: string
  readonly opening_time: string
  readonly dst: string
}
interface QueueData {
  readonly configured: boolean
  readonly timezone: string | null
  readonly openings: ReadonlyArray<{ weekday: string; weekday_number: number; time: string }>
  readonly horizon_days: number
  readonly forecast: ReadonlyArray<Forecast>
  readonly message?: string
}
interface Json {
  readonly data: Record<string, unknown>
  readonly error: { code: string; message: string; details: Record<string, unknown> }
}
type Doc = {
  readonly paths: Record<
    string,
    Record<string, {
      readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
    }>
  >
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("queue on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc
  let x: number

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
    })
    const accounts = await server.withStore(insertAccounts(server.orgId, [{ platform: "x", name: "queue_x" }]))
    x = accounts[0]!.id
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const getQueue = async (query = "") => {
    const res = await server.request("GET", `/api/v1/queue${query}`)
    expect(res.status, res.text).toBe(200)
    const response = doc.paths["/api/v1/queue"]?.["get"]?.responses["200"]
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
    return (res.json as { data: QueueData }).data
  }
  const queued = (content = "from the queue") =>
    server.request("POST", "/api/v1/posts", { body: { content, account_ids: [x], use_queue: true } })
  const setQueue = (timezone: string, slots: string) =>
    server.cli(["queue", "set", "--org", server.orgId, "--timezone", timezone, "--slots", slots])

  const messages: Record<string, string> = {}

  it.skipIf(skip)("no queue: GET /queue says so, and use_queue answers 400 naming the missing queue", async () => {
    const data = await getQueue()
    expect(data).toMatchObject({ configured: false, timezone: null, openings: [], forecast: [], horizon_days: 90 })
    const res = await queued()
    expect(res.status).toBe(400)
    const error = (res.json as Json).error
    expect(error.code).toBe("validation_error")
    expect(error.details["queue"]).toBe("missing")
    messages["missing"] = error.message
  })

  it.skipIf(skip)(
    "herald queue set refuses a zone that is not IANA and slots that do not parse; nothing is stored",
    async () => {
      const zone = await setQueue("+02:00", "mon 09:00")
      expect(zone.code).toBe(1)
      expect(zone.stderr).toContain("IANA")
      const slots = await setQueue("Europe/Paris", "funday 09:00")
      expect(slots.code).toBe(1)
      expect(slots.stderr).toContain("funday")
      expect((await getQueue()).configured).toBe(false)
    }
  )

  it.skipIf(skip)("an empty queue: configured, no openings, and use_queue answers its own 400", async () => {
    const set = await setQueue("Europe/London", "")
    expect(set.code, set.stderr).toBe(0)
    const data = await getQueue()
    expect(data).toMatchObject({ configured: true, timezone: "Europe/London", openings: [], forecast: [] })
    const res = await queued()
    expect(res.status).toBe(400)
    expect((res.json as Json).error.details["queue"]).toBe("empty")
    messages["empty"] = (res.json as Json).error.message
  })

  it.skipIf(skip)(
    "openings and a forecast in the queue's zone and in UTC; count defaults to 10, clamps at 50",
    async () => {
      const set = await setQueue("America/New_York", "mon-fri 09:00,12:30;sat 10:00")
      expect(set.code, set.stderr).toBe(0)
      const show = await server.cli(["queue", "show", "--org", server.orgId])
      expect(show.code, show.stderr).toBe(0)
      expect(show.stdout).toContain("timezone\tAmerica/New_York")
      expect(show.stdout).toContain("mon 09:00,12:30;tue 09:00,12:30")
      expect(show.stdout).toContain("sat 10:00")

      const data = await getQueue()
      expect(data.openings).toHaveLength(11)
      expect(data.openings[0]).toEqual({ weekday: "monday", weekday_number: 1, time: "09:00" })
      expect(data.forecast).toHaveLength(10)
      expect((await getQueue("?count=3")).forecast).toHaveLength(3)
      expect((await getQueue("?count=500")).forecast).toHaveLength(50)
      expect((await getQueue("?count=junk")).forecast).toHaveLength(10)
      let previous = Date.now()
      for (const f of data.forecast) {
        const at = Date.parse(f.scheduled_for)
        expect(at).toBeGreaterThan(previous)
        previous = at
        expect(f.scheduled_for.endsWith("Z")).toBe(true)
        expect(["09:00", "12:30", "10:00"]).toContain(f.local_time)
        expect(f.weekday).not.toBe("sunday")
        // The wall-clock and the UTC instant name the same moment.
        expect(Date.parse(f.local)).toBe(at)
        expect(f.local.startsWith(`${f.local_date}T${f.local_time}`)).toBe(true)
        const local = new Intl.DateTimeFormat("en-GB", {
          timeZone: "America/New_York",
          hour: "2-digit",
          minute: "2-digit",
          hourCycle: "h23"
        }).format(new Date(at))
        expect(local).toBe(f.local_time)
      }
    }
  )

  it.skipIf(skip)("use_queue takes the first forecast opening; the forecast moves on", async () => {
    const before = await getQueue("?count=2")
    const res = await queued()
    expect(res.status, res.text).toBe(201)
    const post = (res.json as Json).data
    expect(post["scheduled_for"]).toBe(before.forecast[0]!.scheduled_for)
    expect(post["status"]).toBe("scheduled")
    expect(post["use_queue"]).toBe(true)
    const after = await getQueue("?count=1")
    expect(after.forecast[0]!.scheduled_for).toBe(before.forecast[1]!.scheduled_for)
    // Deleting the post frees its opening again.
    const removed = await server.request("DELETE", `/api/v1/posts/${String(post["id"])}`)
    expect(removed.status, removed.text).toBe(200)
    expect((await getQueue("?count=1")).forecast[0]!.scheduled_for).toBe(before.forecast[0]!.scheduled_for)
  })

  it.skipIf(skip)(
    "a draft scheduled with use_queue takes the next free opening, which a later use_queue create skips",
    async () => {
      const before = await getQueue("?count=2")
      const draft = await server.request("POST", "/api/v1/posts", {
        body: { content: "a draft for the queue", account_ids: [x], draft: true }
      })
      expect(draft.status, draft.text).toBe(201)
      const id = String((draft.json as Json).data["id"])
      const exclusive = await server.request("POST", `/api/v1/posts/${id}/schedule`, {
        body: { use_queue: true, publish_now: true }
      })
      expect([exclusive.status, (exclusive.json as Json).error.code]).toEqual([400, "validation_error"])
      expect((exclusive.json as Json).error.details["validation_errors"]).toEqual([
        expect.objectContaining({ path: "use_queue" })
      ])
      expect((await server.request("GET", `/api/v1/posts/${id}`)).json).toMatchObject({ data: { status: "draft" } })

      const res = await server.request("POST", `/api/v1/posts/${id}/schedule`, { body: { use_queue: true } })
      expect(res.status, res.text).toBe(200)
      expect((res.json as Json).data).toMatchObject({
        status: "scheduled",
        scheduled_for: before.forecast[0]!.scheduled_for
      })
      const next = await queued("after the draft")
      expect(next.status, next.text).toBe(201)
      expect((next.json as Json).data["scheduled_for"]).toBe(before.forecast[1]!.scheduled_for)
      for (const post of [id, String((next.json as Json).data["id"])]) {
        expect((await server.request("DELETE", `/api/v1/posts/${post}`)).status).toBe(200)
      }
    }
  )

  it.skipIf(skip)("20 concurrent use_queue creates take 20 distinct openings, the earliest free ones", async () => {
    const forecast = (await getQueue("?count=20")).forecast.map((f) => f.scheduled_for)
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => queued(`concurrent ${i}`)))
    for (const r of results) expect(r.status, r.text).toBe(201)
    const slots = results.map((r) => (r.json as Json).data["scheduled_for"] as string)
    expect(new Set(slots).size).toBe(20)
    expect([...slots].sort()).toEqual([...forecast].sort())
  }, 60_000)

  it.skipIf(skip)(
    "a full queue (no free opening within 90 days) answers its own 400; messages are distinct",
    async () => {
      const set = await setQueue("Asia/Kolkata", "sun 23:59")
      expect(set.code, set.stderr).toBe(0)
      let full: Json | undefined
      for (let i = 0; i < 15 && full === undefined; i++) {
        const res = await queued(`weekly ${i}`)
        if (res.status === 400) full = res.json as Json
        else expect(res.status, res.text).toBe(201)
      }
      expect(full?.error.details["queue"]).toBe("full")
      messages["full"] = full!.error.message
      expect(new Set(Object.values(messages)).size).toBe(3)
      const data = await getQueue()
      expect(data.forecast).toEqual([])
      expect(data.message).toContain("full")
    },
    60_000
  )

  it.skipIf(skip)("GET /queue needs the read scope", async () => {
    const writeOnly = await server.createKey({ scopes: ["write"] })
    const res = await server.request("GET", "/api/v1/queue", { key: writeOnly })
    expect([res.status, (res.json as Json).error.code]).toEqual([403, "insufficient_scope"])
  })
})
