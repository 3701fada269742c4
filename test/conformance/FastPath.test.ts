/**
 * The fast path (`packages/http/src/FastPath.ts`) answers byte for byte like the HttpApi endpoints it
 * stands in front of (GET /accounts, POST /posts): the same requests (success, query string, every
 * auth failure, scopes, a restricted key, the session cookie, a NUL in the URL, invalid JSON, 413,
 * a form body, schema failures, an unknown account, 429) go to a server with the fast path and
 * to one with `HERALD_FAST_PATH=off`, on the same fixtures, and their status, headers and bodies are
 * compared with the request id, dates and timestamps masked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const limit = 4
const env = { HERALD_RATE_LIMIT_PER_MINUTE: String(limit) }

interface Fixture {
  readonly server: HeraldServer.HeraldServer
  readonly accountId: number
  readonly lapsedOrg: string
}

const setUp = async (fastPath: boolean): Promise<Fixture> => {
  const server = await HeraldServer.start({ env: fastPath ? env : { ...env, HERALD_FAST_PATH: "off" } })
  const accounts = await server.withStore(insertAccounts(server.orgId, [
    { platform: "x", name: "herald_x" },
    { platform: "instagram", name: "brand", platformAccountId: "ig-fb-1", connectionFlow: "facebook" },
    { platform: "instagram", name: "brand", platformAccountId: "ig-1", connectionFlow: "direct" },
    { platform: "linkedin", name: "inactive", isActive: false }
  ]))
  const lapsedOrg = await server.cli(["orgs", "create", "Lapsed", "--plan", "lite", "--status", "canceled"])
  return { server, accountId: accounts[0]!.id, lapsedOrg: lapsedOrg.stdout.trim() }
}

const iso = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const masked = new Set(["date", "x-request-id", "retry-after", "x-ratelimit-reset"])

/** What must be equal: status, headers (masked values kept as their presence) and the body. */
const shape = (res: HeraldServer.Response) => ({
  status: res.status,
  headers: [...res.headers].map(([name, value]) => [name, masked.has(name) ? "<masked>" : value]),
  body: res.text.replace(iso, "<time>").replace(uuid, "<uuid>")
})

type Case = readonly [name: string, send: (f: Fixture) => Promise<HeraldServer.Response>]

/** Each case has keys of its own: the server's limit is low (for the 429 case). */
type KeyOf = (f: Fixture) => Promise<string | null>
const fresh = (options: HeraldServer.KeyOptions = {}): KeyOf => (f) => f.server.createKey(options)
const none: KeyOf = () => Promise.resolve(null)
const fixed = (key: string): KeyOf => () => Promise.resolve(key)

const get = (path: string, keyOf: KeyOf, headers: Record<string, string> = {}) => async (f: Fixture) =>
  f.server.request("GET", path, { key: await keyOf(f), headers })

const post = (
  path: string,
  keyOf: KeyOf,
  body: (f: Fixture) => Pick<HeraldServer.RequestOptions, "body" | "rawBody" | "headers">
) =>
async (f: Fixture) => f.server.request("POST", path, { key: await keyOf(f), ...body(f) })

const draft = (f: Fixture) => ({ body: { content: "Hello", account_ids: [f.accountId], draft: true } })
const unknownKey = "pe_live_0123456789abcdef0123456789abcdef"

const overTheLimit = (send: (f: Fixture, key: string) => Promise<HeraldServer.Response>) => async (f: Fixture) => {
  const key = await f.server.createKey()
  for (let i = 0; i < limit; i++) await send(f, key)
  return send(f, key)
}

const cases: ReadonlyArray<Case> = [
  ["GET /accounts 200", get("/api/v1/accounts", fresh())],
  ["GET /accounts 200 with a query string", get("/api/v1/accounts?page=2", fresh())],
  ["GET /accounts 200 for a restricted key", async (f) =>
    f.server.request("GET", "/api/v1/accounts", { key: await f.server.createKey({ accounts: [f.accountId] }) })],
  ["GET /accounts 401 without credentials", get("/api/v1/accounts", none)],
  ["GET /accounts 401 for a malformed key", get("/api/v1/accounts", fixed("pe_live_nothex"))],
  ["GET /accounts 401 for an unknown key", get("/api/v1/accounts", fixed(unknownKey))],
  ["GET /accounts 401 for another scheme", get("/api/v1/accounts", none, { authorization: "Basic dXNlcjpwYXNz" })],
  ["GET /accounts 401 for a cookie that is no session", get("/api/v1/accounts", none, { cookie: "herald_session=no" })],
  ["GET /accounts 402 for a lapsed organization", async (f) =>
    f.server.request("GET", "/api/v1/accounts", { key: await f.server.createKey({ org: f.lapsedOrg }) })],
  ["GET /accounts 403 without the read scope", get("/api/v1/accounts", fresh({ scopes: ["write"] }))],
  ["GET /accounts 400 for a NUL in the query", get("/api/v1/accounts?x=%00", fresh())],
  ["GET /accounts 429 past the limit", overTheLimit((f, key) => f.server.request("GET", "/api/v1/accounts", { key }))],
  ["POST /posts 201 draft", post("/api/v1/posts", fresh(), draft)],
  ["POST /posts 201 with a query string", post("/api/v1/posts?x=1", fresh(), draft)],
  ["POST /posts 401 without credentials", post("/api/v1/posts", none, draft)],
  ["POST /posts 401 for an unknown key", post("/api/v1/posts", fixed(unknownKey), draft)],
  ["POST /posts 402 for a lapsed organization", async (f) =>
    f.server.request("POST", "/api/v1/posts", { key: await f.server.createKey({ org: f.lapsedOrg }), ...draft(f) })],
  ["POST /posts 403 without the write scope", post("/api/v1/posts", fresh({ scopes: ["read"] }), draft)],
  ["POST /posts 400 for invalid JSON", post("/api/v1/posts", fresh(), () => ({ rawBody: "{\"content\": " }))],
  ["POST /posts 413 for a body over the limit", post("/api/v1/posts", fresh(), (f) => ({
    body: { content: "x".repeat(1_100_000), account_ids: [f.accountId], draft: true }
  }))],
  ["POST /posts 422 for a form body", post("/api/v1/posts", fresh(), () => ({
    rawBody: "content=Hello",
    headers: { "content-type": "application/x-www-form-urlencoded" }
  }))],
  ["POST /posts 422 for a body that does not match", post("/api/v1/posts", fresh(), () => ({
    body: { content: 5, account_ids: "all" }
  }))],
  ["POST /posts for an account that is not there", post("/api/v1/posts", fresh(), () => ({
    body: { content: "Hello", account_ids: [987654], draft: true }
  }))],
  ["POST /posts 429 past the limit", overTheLimit((f, key) => f.server.request("POST", "/api/v1/posts", { key, ...draft(f) }))]
]

describe("the fast path answers like the HttpApi endpoint", () => {
  let fast: Fixture
  let api: Fixture

  beforeAll(async () => {
    ;[fast, api] = await Promise.all([setUp(true), setUp(false)])
  }, 120_000)
  afterAll(async () => {
    await Promise.all([fast?.server.stop(), api?.server.stop()])
  })

  it.each(cases)("%s", async (_name, send) => {
    const [a, b] = await Promise.all([send(fast), send(api)])
    expect(shape(a)).toEqual(shape(b))
  })

  it("answers the list and creates the post itself (the cases above are not all errors)", async () => {
    const key = await fast.server.createKey()
    const res = await fast.server.request("GET", "/api/v1/accounts", { key })
    expect(res.status).toBe(200)
    const names = (res.json as { data: { accounts: Array<{ account_name: string }> } }).data.accounts
      .map((a) => a.account_name)
    expect(names).toContain("herald_x")
    const created = await fast.server.request("POST", "/api/v1/posts", { key, ...draft(fast) })
    expect(created.status).toBe(201)
    const id = (created.json as { data: { id: string } }).data.id
    expect((await fast.server.request("GET", `/api/v1/posts/${id}`, { key })).status).toBe(200)
  })
})
