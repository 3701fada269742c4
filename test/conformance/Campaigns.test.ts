/**
 * `/campaigns` over real HTTP (a `herald serve` child process), on SQLite and (where one answers)
 * Postgres: the record, validation, pagination and the status filter, integer ids (400 invalid_id,
 * 404 across organizations), scopes, `campaign_id` on posts (create and PATCH must name a campaign of
 * the organization), and DELETE unlinking posts. Every answer is checked against the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Campaigns conformance on Postgres skipped: ${pg.reason}`)

type Data = Readonly<Record<string, unknown>> & {
  readonly id: number
  readonly campaigns: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly pagination: Readonly<Record<string, unknown>>
}
interface Json {
  readonly data: Data
  readonly error: {
    readonly code: string
    readonly message: string
    readonly details: Readonly<Record<string, unknown>> & {
      readonly validation_errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
    }
  }
}
type Doc = {
  readonly paths: Record<
    string,
    Record<string, {
      readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
    }>
  >
}

const json = (r: HeraldServer.Response) => r.json as Json
const paths = (r: HeraldServer.Response) => (json(r).error.details.validation_errors ?? []).map((e) => e.path)

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("campaigns on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let doc: Doc
  let otherKey: string

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }
    })
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
    const org = await server.cli(["orgs", "create", "Elsewhere"])
    const orgId = /[0-9a-f-]{36}/.exec(org.stdout)?.[0]
    if (orgId === undefined) throw new Error(`orgs create: ${org.stdout}${org.stderr}`)
    otherKey = await server.createKey({ org: orgId })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const conforms = (path: string, method: string, res: HeraldServer.Response) => {
    const response = doc.paths[path]?.[method]?.responses[String(res.status)]
    expect(response, `${method} ${path} documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }
  const create = (body: unknown, key?: string) =>
    server.request("POST", "/api/v1/campaigns", { body, ...(key === undefined ? {} : { key }) })
  const total = async (key?: string) =>
    json(await server.request("GET", "/api/v1/campaigns", key === undefined ? {} : { key })).data.pagination["total"]

  it.skipIf(skip)(
    "POST creates a campaign: 201 with every field, active by default, color lowercased; GET returns it",
    async () => {
      const res = await create({ name: "  Spring launch ", description: "Q2 push", color: "#1DA1F2", extra: "ignored" })
      expect(res.status, res.text).toBe(201)
      const data = json(res).data
      expect(data).toEqual({
        id: expect.any(Number),
        name: "Spring launch",
        description: "Q2 push",
        color: "#1da1f2",
        status: "active",
        post_count: 0,
        created_at: expect.stringMatching(/Z$/),
        updated_at: data["created_at"]
      })
      expect(Number.isInteger(data.id)).toBe(true)
      conforms("/api/v1/campaigns", "post", res)
      const got = await server.request("GET", `/api/v1/campaigns/${data.id}`)
      expect(got.status).toBe(200)
      expect(json(got).data).toEqual(data)
      conforms("/api/v1/campaigns/{id}", "get", got)

      const minimal = await create({ name: "x", description: null, color: null, status: "archived" })
      expect(json(minimal).data).toMatchObject({ name: "x", description: null, color: null, status: "archived" })
    }
  )

  it.skipIf(skip)(
    "POST validation: every problem listed as 400 validation_error; invalid JSON; nothing stored",
    async () => {
      const before = await total()
      const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string>]> = [
        [{}, ["name"]],
        [{ name: "" }, ["name"]],
        [{ name: "   " }, ["name"]],
        [{ name: "n".repeat(101) }, ["name"]],
        [{ name: 7 }, ["name"]],
        [{ name: "ok", description: "d".repeat(501) }, ["description"]],
        [{ name: "ok", color: "blue" }, ["color"]],
        [{ name: "ok", color: "#12345" }, ["color"]],
        [{ name: "ok", status: "paused" }, ["status"]],
        [{ name: "", color: "red", status: "done" }, ["name", "color", "status"]],
        [[{ name: "array" }], [""]]
      ]
      for (const [body, expected] of cases) {
        const res = await create(body)
        expect([JSON.stringify(body), res.status, json(res).error.code]).toEqual([
          JSON.stringify(body),
          400,
          "validation_error"
        ])
        expect([...new Set(paths(res))].sort()).toEqual([...expected].sort())
        conforms("/api/v1/campaigns", "post", res)
      }
      expect((await create({ name: "n".repeat(100), description: "d".repeat(500) })).status).toBe(201)
      const bad = await server.request("POST", "/api/v1/campaigns", { rawBody: "{\"name\": " })
      expect([bad.status, json(bad).error.code]).toEqual([400, "invalid_json"])
      expect(await total()).toBe((before as number) + 1)
    }
  )

  it.skipIf(skip)(
    "ids: 400 invalid_id when not numeric, 404 unknown or of another organization, on every route",
    async () => {
      const mine = json(await create({ name: "mine" })).data.id
      for (const method of ["GET", "PATCH", "DELETE"] as const) {
        const opts = method === "PATCH" ? { body: { name: "z" } } : {}
        for (const id of ["abc", "1.5", "-1", "1e3"]) {
          const res = await server.request(method, `/api/v1/campaigns/${id}`, opts)
          expect([method, id, res.status, json(res).error.code]).toEqual([method, id, 400, "invalid_id"])
          conforms("/api/v1/campaigns/{id}", method.toLowerCase(), res)
        }
        for (const id of ["0", "999999", "99999999999999999999"]) {
          const res = await server.request(method, `/api/v1/campaigns/${id}`, opts)
          expect([method, id, res.status, json(res).error.code]).toEqual([method, id, 404, "not_found"])
        }
        const foreign = await server.request(method, `/api/v1/campaigns/${mine}`, { ...opts, key: otherKey })
        expect([method, foreign.status, json(foreign).error.code]).toEqual([method, 404, "not_found"])
        conforms("/api/v1/campaigns/{id}", method.toLowerCase(), foreign)
      }
      // The other organization's list does not show it, and it is unchanged.
      const theirs = json(await server.request("GET", "/api/v1/campaigns", { key: otherKey })).data
      expect(theirs.campaigns.map((c) => c["id"])).not.toContain(mine)
      expect(json(await server.request("GET", `/api/v1/campaigns/${mine}`)).data["name"]).toBe("mine")
    }
  )

  it.skipIf(skip)(
    "GET /campaigns: newest first, limit/offset/total/has_more, status filter, lenient parameters",
    async () => {
      const org = await server.cli(["orgs", "create", "Lister"])
      const key = await server.createKey({ org: /[0-9a-f-]{36}/.exec(org.stdout)![0] })
      const ids: Array<number> = []
      for (let i = 0; i < 5; i++) {
        const res = await create({ name: `c${i}`, status: i % 2 === 0 ? "active" : "archived" }, key)
        ids.push(json(res).data.id)
      }
      const list = (query: string) => server.request("GET", `/api/v1/campaigns${query}`, { key })
      const all = await list("")
      expect(all.status).toBe(200)
      conforms("/api/v1/campaigns", "get", all)
      expect(json(all).data.campaigns.map((c) => c["id"])).toEqual([...ids].reverse())
      expect(json(all).data.pagination).toEqual({ limit: 20, offset: 0, total: 5, has_more: false })
      const page = json(await list("?limit=2&offset=1")).data
      expect(page.campaigns.map((c) => c["name"])).toEqual(["c3", "c2"])
      expect(page.pagination).toEqual({ limit: 2, offset: 1, total: 5, has_more: true })
      const last = json(await list("?limit=2&offset=4")).data
      expect([last.campaigns.map((c) => c["name"]), last.pagination["has_more"]]).toEqual([["c0"], false])
      const archived = json(await list("?status=archived")).data
      expect([archived.campaigns.map((c) => c["name"]), archived.pagination["total"]]).toEqual([["c3", "c1"], 2])
      const active = json(await list("?status=ACTIVE&limit=1")).data
      expect([active.campaigns.map((c) => c["name"]), active.pagination]).toEqual([
        ["c4"],
        { limit: 1, offset: 0, total: 3, has_more: true }
      ])
      const lenient = json(await list("?status=paused&limit=500&offset=-3")).data
      expect(lenient.pagination).toEqual({ limit: 100, offset: 0, total: 5, has_more: false })
      const empty = json(await server.request("GET", "/api/v1/campaigns", { key: otherKey })).data
      expect(empty.pagination["total"]).toBe(0)
    }
  )

  it.skipIf(skip)(
    "PATCH changes the fields sent; null clears description and color; invalid values change nothing",
    async () => {
      const created = json(await create({ name: "Before", description: "d", color: "#abcdef" })).data
      const url = `/api/v1/campaigns/${created.id}`
      await new Promise((r) => setTimeout(r, 5))
      const same = await server.request("PATCH", url, { body: {} })
      expect(json(same).data).toEqual(created)
      const patched = await server.request("PATCH", url, {
        body: { name: "After", description: null, color: "#FFFFFF", status: "archived" }
      })
      expect(patched.status, patched.text).toBe(200)
      conforms("/api/v1/campaigns/{id}", "patch", patched)
      expect(json(patched).data).toMatchObject({
        id: created.id,
        name: "After",
        description: null,
        color: "#ffffff",
        status: "archived"
      })
      expect(json(patched).data["updated_at"]).not.toBe(created["updated_at"])
      expect(json(patched).data["created_at"]).toBe(created["created_at"])
      for (
        const body of [{ name: null }, { name: "" }, { status: "paused" }, { status: null }, { color: "#ggg000" }, {
          description: "x".repeat(501)
        }]
      ) {
        const res = await server.request("PATCH", url, { body })
        expect([JSON.stringify(body), res.status, json(res).error.code]).toEqual([
          JSON.stringify(body),
          400,
          "validation_error"
        ])
      }
      const bad = await server.request("PATCH", url, { rawBody: "{" })
      expect([bad.status, json(bad).error.code]).toEqual([400, "invalid_json"])
      expect(json(await server.request("GET", url)).data).toEqual(json(patched).data)
      const reopened = await server.request("PATCH", url, { body: { status: "active", color: null } })
      expect(json(reopened).data).toMatchObject({ status: "active", color: null, name: "After" })
    }
  )

  it.skipIf(skip)("campaign_id on posts must name a campaign of the organization; post_count counts them", async () => {
    const campaign = json(await create({ name: "Tagged" })).data.id
    const foreign = json(await create({ name: "Theirs" }, otherKey)).data.id
    const posts = async () => json(await server.request("GET", "/api/v1/posts?limit=100")).data.pagination["total"]
    const before = await posts()
    for (const id of [999999, foreign]) {
      const res = await server.request("POST", "/api/v1/posts", {
        body: { content: "x", draft: true, campaign_id: id }
      })
      expect([id, res.status, json(res).error.code, paths(res)]).toEqual([id, 400, "validation_error", ["campaign_id"]])
      expect(json(res).error.message).toContain("campaign_id")
    }
    const notInt = await server.request("POST", "/api/v1/posts", {
      body: { content: "x", draft: true, campaign_id: "abc" }
    })
    expect([notInt.status, json(notInt).error.code]).toEqual([400, "validation_error"])
    expect(await posts()).toBe(before)

    const made = await server.request("POST", "/api/v1/posts", {
      body: { content: "in campaign", draft: true, campaign_id: campaign }
    })
    expect(made.status, made.text).toBe(201)
    expect(json(made).data["campaign_id"]).toBe(campaign)
    const other = await server.request("POST", "/api/v1/posts", { body: { content: "moved later", draft: true } })
    const otherId = String(json(other).data["id"])
    for (const id of [999999, foreign]) {
      const res = await server.request("PATCH", `/api/v1/posts/${otherId}`, { body: { campaign_id: id } })
      expect([id, res.status, json(res).error.code, paths(res)]).toEqual([id, 400, "validation_error", ["campaign_id"]])
    }
    expect(json(await server.request("GET", `/api/v1/posts/${otherId}`)).data["campaign_id"]).toBeNull()
    const moved = await server.request("PATCH", `/api/v1/posts/${otherId}`, { body: { campaign_id: campaign } })
    expect([moved.status, json(moved).data["campaign_id"]]).toEqual([200, campaign])
    // Sending the post back unchanged (the round trip) passes the check.
    const roundTrip = await server.request("PATCH", `/api/v1/posts/${otherId}`, { body: json(moved).data })
    expect(roundTrip.status, roundTrip.text).toBe(200)

    expect(json(await server.request("GET", `/api/v1/campaigns/${campaign}`)).data["post_count"]).toBe(2)
    const filtered = json(await server.request("GET", `/api/v1/posts?campaign_id=${campaign}`)).data
    expect(filtered.pagination["total"]).toBe(2)
    const cleared = await server.request("PATCH", `/api/v1/posts/${otherId}`, { body: { campaign_id: null } })
    expect([cleared.status, json(cleared).data["campaign_id"]]).toEqual([200, null])
    expect(json(await server.request("GET", `/api/v1/campaigns/${campaign}`)).data["post_count"]).toBe(1)
  })

  it.skipIf(skip)("DELETE removes the campaign and sets its posts' campaign_id to null", async () => {
    const campaign = json(await create({ name: "Doomed" })).data.id
    const ids: Array<string> = []
    for (let i = 0; i < 2; i++) {
      const res = await server.request("POST", "/api/v1/posts", {
        body: { content: `doomed ${i}`, draft: true, campaign_id: campaign }
      })
      ids.push(String(json(res).data["id"]))
    }
    const deleted = await server.request("DELETE", `/api/v1/campaigns/${campaign}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(json(deleted).data).toEqual({ id: campaign, deleted: true, posts_unlinked: 2 })
    conforms("/api/v1/campaigns/{id}", "delete", deleted)
    for (const id of ids) {
      expect(json(await server.request("GET", `/api/v1/posts/${id}`)).data["campaign_id"]).toBeNull()
    }
    expect(json(await server.request("GET", `/api/v1/posts?campaign_id=${campaign}`)).data.pagination["total"]).toBe(0)
    const again = await server.request("GET", `/api/v1/campaigns/${campaign}`)
    expect([again.status, json(again).error.code]).toEqual([404, "not_found"])
    const twice = await server.request("DELETE", `/api/v1/campaigns/${campaign}`)
    expect([twice.status, json(twice).error.code]).toEqual([404, "not_found"])
    const dangling = await server.request("PATCH", `/api/v1/posts/${ids[0]}`, { body: { campaign_id: campaign } })
    expect([dangling.status, json(dangling).error.code]).toEqual([400, "validation_error"])
  })

  it.skipIf(skip)("scopes: read lists and gets; create, update and delete need write", async () => {
    const reader = await server.createKey({ scopes: ["read"] })
    const id = json(await create({ name: "Scoped" })).data.id
    expect((await server.request("GET", "/api/v1/campaigns", { key: reader })).status).toBe(200)
    expect((await server.request("GET", `/api/v1/campaigns/${id}`, { key: reader })).status).toBe(200)
    for (
      const [method, p] of [
        ["POST", "/api/v1/campaigns"],
        ["PATCH", `/api/v1/campaigns/${id}`],
        ["DELETE", `/api/v1/campaigns/${id}`]
      ] as const
    ) {
      const res = await server.request(method, p, {
        key: reader,
        ...(method === "DELETE" ? {} : { body: { name: "no" } })
      })
      expect([method, res.status, json(res).error.code]).toEqual([method, 403, "insufficient_scope"])
    }
    expect(json(await server.request("GET", `/api/v1/campaigns/${id}`)).data["name"]).toBe("Scoped")
    const anonymous = await server.request("GET", "/api/v1/campaigns", { key: null })
    expect(anonymous.status).toBe(401)
  })
})
