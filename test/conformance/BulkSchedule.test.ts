/**
 * POST /posts/bulk-schedule over real HTTP, on SQLite and Postgres: the spec's response fields, dry
 * runs, platforms by name or account id (mixed) and accountMapping, media by library filename, row
 * errors (past, DST gap, unknown platform or medium, ambiguous account) beside scheduled rows, a DST
 * ambiguity as a batch warning, the X daily limit per plan as a 422 batch error, and the 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"
import * as MediaFixtures from "../support/MediaFixtures.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Bulk schedule conformance on Postgres skipped: ${pg.reason}`)

interface RowResult {
  readonly row: number
  readonly status: string
  readonly postId: string | null
  readonly error: string | null
  readonly code: string | null
  readonly scheduledFor: string | null
}
interface Result {
  readonly dryRun: boolean
  readonly scheduled: number
  readonly failed: number
  readonly results: ReadonlyArray<RowResult>
  readonly batchErrors: ReadonlyArray<Record<string, unknown>>
  readonly batchWarnings: ReadonlyArray<Record<string, unknown>>
  readonly summary: {
    totalRows: number
    validRows: number
    errorRows: number
    totalDestinations: number
    platformBreakdown: Record<string, number>
  }
}
interface Json {
  readonly data: Result
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
])("bulk schedule on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc
  let liA: number
  let liB: number

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
    })
    const accounts = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "bs_x" },
      { platform: "linkedin", name: "bs_li_a" },
      { platform: "linkedin", name: "bs_li_b" },
      { platform: "bluesky", name: "bs_bsky" }
    ]))
    ;[, liA, liB] = accounts.map((a) => a.id)
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
    // A medium in the library, by filename.
    const bytes = MediaFixtures.png(64, 64)
    const p = await server.request("POST", "/api/v1/media/upload", {
      body: { filename: "launch.png", content_type: "image/png", file_size: bytes.length }
    })
    expect(p.status, p.text).toBe(201)
    const data = (p.json as { data: { id: string; upload_url: string } }).data
    const put = await fetch(data.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body: bytes })
    expect(put.status).toBe(200)
    const done = await server.request("POST", `/api/v1/media/${data.id}/complete`)
    expect(done.status, done.text).toBe(200)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const schedule = (body: unknown) => server.request("POST", "/api/v1/posts/bulk-schedule", { body })
  const conforms = (res: HeraldServer.Response) => {
    const response = doc.paths["/api/v1/posts/bulk-schedule"]?.["post"]?.responses[String(res.status)]
    expect(response, `documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }
  const total = async () =>
    ((await server.request("GET", "/api/v1/posts?limit=1")).json as { data: { pagination: { total: number } } }).data
      .pagination.total

  it.skipIf(skip)(
    "a dry run checks every row and creates nothing; names and ids mix; accountMapping picks the account",
    async () => {
      const before = await total()
      const res = await schedule({
        timezone: "Europe/Paris",
        dryRun: true,
        accountMapping: { linkedin: liA },
        posts: [
          { date: "2027-02-01", time: "09:30", content: "hello", platforms: "x+linkedin" },
          { date: "2027-02-01", time: "10:00", content: "both", platforms: `twitter+${liB}` }
        ]
      })
      expect(res.status, res.text).toBe(200)
      conforms(res)
      const data = (res.json as Json).data
      expect(data).toMatchObject({ dryRun: true, scheduled: 0, failed: 0, batchErrors: [], batchWarnings: [] })
      expect(data.results.map((r) => [r.row, r.status, r.postId, r.error])).toEqual([
        [0, "valid", null, null],
        [1, "valid", null, null]
      ])
      expect(data.results[0]!.scheduledFor).toBe("2027-02-01T08:30:00.000Z")
      expect(data.summary).toEqual({
        totalRows: 2,
        validRows: 2,
        errorRows: 0,
        totalDestinations: 4,
        platformBreakdown: { x: 2, linkedin: 2 }
      })
      // Round trip: every request field comes back under its name, as sent.
      expect(data).toMatchObject({
        timezone: "Europe/Paris",
        accountMapping: { linkedin: liA },
        posts: [
          { date: "2027-02-01", time: "09:30", content: "hello", platforms: "x+linkedin" },
          { date: "2027-02-01", time: "10:00", content: "both", platforms: `twitter+${liB}` }
        ]
      })
      expect(await total()).toBe(before)
    }
  )

  it.skipIf(skip)(
    "row errors beside scheduled rows: past, DST gap (named), unknown platform or medium, ambiguous account",
    async () => {
      const res = await schedule({
        timezone: "America/New_York",
        posts: [
          { date: "2027-01-04", time: "09:00", content: "with media", platforms: "bluesky", media: "launch.png" },
          { date: "2020-01-01", time: "09:00", content: "past", platforms: "x" },
          { date: "2027-03-14", time: "02:30", content: "gap", platforms: "x" },
          { date: "2027-11-07", time: "01:30", content: "twice", platforms: `x+${liA}` },
          { date: "2027-01-04", time: "10:00", content: "where", platforms: "myspace" },
          { date: "2027-01-04", time: "11:00", content: "which one", platforms: "linkedin" },
          { date: "2027-01-04", time: "12:00", content: "no file", platforms: "x", media: "missing.png" },
          { date: "2027-02-30", time: "12:00", content: "bad date", platforms: "x" },
          { date: "2027-01-04", time: "25:00", content: "bad time", platforms: "x" }
        ]
      })
      expect(res.status, res.text).toBe(200)
      conforms(res)
      const data = (res.json as Json).data
      expect(data.dryRun).toBe(false)
      expect(data.results.map((r) => r.status)).toEqual([
        "scheduled",
        "error",
        "error",
        "scheduled",
        "error",
        "error",
        "error",
        "error",
        "error"
      ])
      expect(data.scheduled).toBe(2)
      expect(data.failed).toBe(7)
      expect(data.results[1]!.code).toBe("past_schedule_time")
      expect(data.results[2]!.error).toMatch(/daylight-saving gap/)
      expect(data.results[2]!.error).toContain("2027-03-14 02:30")
      expect(data.results[4]!.error).toContain("myspace")
      expect(data.results[5]!.error).toContain("accountMapping.linkedin")
      expect(data.results[6]!.error).toContain("missing.png")
      // The fall-back hour happens twice: the earlier instant, with a warning.
      expect(data.results[3]!.scheduledFor).toBe("2027-11-07T05:30:00.000Z")
      expect(data.batchWarnings).toHaveLength(1)
      expect(data.batchWarnings[0]).toMatchObject({ code: "ambiguous_time", row: 3 })
      expect(data.summary).toEqual({
        totalRows: 9,
        validRows: 2,
        errorRows: 7,
        totalDestinations: 3,
        platformBreakdown: { bluesky: 1, x: 1, linkedin: 1 }
      })
      const withMedia = await server.request("GET", `/api/v1/posts/${data.results[0]!.postId}`)
      expect(withMedia.status).toBe(200)
      const post = (withMedia.json as { data: Record<string, unknown> }).data
      expect(post).toMatchObject({
        status: "scheduled",
        scheduled_for: "2027-01-04T14:00:00.000Z",
        timezone: "America/New_York",
        content: "with media"
      })
      expect(post["media_ids"]).toHaveLength(1)
    }
  )

  it.skipIf(skip)(
    "the X daily limit of the plan is a batch error: 422, nothing scheduled; a bigger plan lets it through",
    async () => {
      const before = await total()
      const rows = Array.from({ length: 11 }, (_, i) => ({
        date: "2027-05-05",
        time: `${String(8 + i).padStart(2, "0")}:00`,
        content: `x post ${i}`,
        platforms: "x"
      }))
      const res = await schedule({ timezone: "UTC", posts: rows })
      expect(res.status, res.text).toBe(422)
      conforms(res)
      const error = (res.json as Json).error
      expect(error.code).toBe("validation_error")
      const batchErrors = error.details["batchErrors"] as ReadonlyArray<Record<string, unknown>>
      expect(batchErrors[0]).toMatchObject({
        code: "x_daily_limit_exceeded",
        date: "2027-05-05",
        limit: 10,
        requested: 11,
        plan: "trial"
      })
      expect(error.details["scheduled"]).toBe(0)
      expect(await total()).toBe(before)
      // Ten fit on the trial.
      const ten = await schedule({ timezone: "UTC", dryRun: true, posts: rows.slice(0, 10) })
      expect(ten.status, ten.text).toBe(200)
      // X posts already scheduled that day count: 4 scheduled, then 7 more would be 11.
      const day = (n: number, from: number) => rows.slice(from, from + n).map((r) => ({ ...r, date: "2027-05-06" }))
      const first = await schedule({ timezone: "UTC", posts: day(4, 0) })
      expect((first.json as Json).data.scheduled, first.text).toBe(4)
      const more = await schedule({ timezone: "UTC", dryRun: true, posts: day(7, 4) })
      expect(more.status, more.text).toBe(422)
      expect(((more.json as Json).error.details["batchErrors"] as ReadonlyArray<unknown>)[0]).toMatchObject({
        existing: 4,
        requested: 7
      })
      expect((await schedule({ timezone: "UTC", dryRun: true, posts: day(6, 4) })).status).toBe(200)
      // Starter allows 50 a day.
      const upgraded = await server.cli(["orgs", "set-plan", server.orgId, "starter"])
      expect(upgraded.code, upgraded.stderr).toBe(0)
      const starter = await schedule({ timezone: "UTC", dryRun: true, posts: rows })
      expect(starter.status, starter.text).toBe(200)
      expect((starter.json as Json).data.summary.validRows).toBe(11)
    }
  )

  it.skipIf(skip)(
    "400s: timezone required and IANA, at most 100 rows, at least one, every row field typed",
    async () => {
      const row = { date: "2027-01-04", time: "09:00", content: "a", platforms: "x" }
      const cases: ReadonlyArray<[unknown, string]> = [
        [{ posts: [row] }, "validation_error"],
        [{ posts: [row], timezone: "+02:00" }, "invalid_timezone"],
        [{ posts: Array.from({ length: 101 }, () => row), timezone: "UTC" }, "bulk_limit_exceeded"],
        [{ posts: [], timezone: "UTC" }, "validation_error"],
        [{ posts: [{ date: "2027-01-04", content: "a", platforms: "x" }], timezone: "UTC" }, "validation_error"],
        [{ posts: [row], timezone: "UTC", accountMapping: { x: 999999 } }, "validation_error"],
        [[row], "validation_error"]
      ]
      const before = await total()
      for (const [body, code] of cases) {
        const res = await schedule(body)
        expect([res.status, (res.json as Json).error?.code], JSON.stringify(body).slice(0, 80)).toEqual([400, code])
      }
      conforms(await schedule(cases[0]![0]))
      expect(await total()).toBe(before)
    }
  )
})
