/**
 * The fast path (`packages/http/src/FastPath.ts`) answers byte for byte like the HttpApi endpoint it
 * stands in front of: the same requests (success, query string, every auth failure, scopes,
 * restricted keys, the session cookie, a NUL in the URL, 429) go to a server with the fast path and
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
  readonly keys: Record<"reader" | "writer" | "lapsed" | "restricted" | "limited", string>
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
  return {
    server,
    keys: {
      reader: await server.createKey(),
      writer: await server.createKey({ scopes: ["write"] }),
      lapsed: await server.createKey({ org: lapsedOrg.stdout.trim() }),
      restricted: await server.createKey({ accounts: [accounts[0]!.id] }),
      limited: await server.createKey()
    }
  }
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

const get = (path: string, key: (f: Fixture) => string | null, headers: Record<string, string> = {}) =>
(f: Fixture) => f.server.request("GET", path, { key: key(f), headers })

const cases: ReadonlyArray<Case> = [
  ["200", get("/api/v1/accounts", (f) => f.keys.reader)],
  ["200 with a query string", get("/api/v1/accounts?page=2", (f) => f.keys.reader)],
  ["200 for a restricted key", get("/api/v1/accounts", (f) => f.keys.restricted)],
  ["401 without credentials", get("/api/v1/accounts", () => null)],
  ["401 for a malformed key", get("/api/v1/accounts", () => "pe_live_nothex")],
  ["401 for an unknown key", get("/api/v1/accounts", () => "pe_live_0123456789abcdef0123456789abcdef")],
  ["401 for another scheme", get("/api/v1/accounts", () => null, { authorization: "Basic dXNlcjpwYXNz" })],
  ["401 for a session cookie that is not a session", get("/api/v1/accounts", () => null, { cookie: "herald_session=nope" })],
  ["402 for a lapsed organization", get("/api/v1/accounts", (f) => f.keys.lapsed)],
  ["403 for a key without the read scope", get("/api/v1/accounts", (f) => f.keys.writer)],
  ["400 for a NUL in the query", get("/api/v1/accounts?x=%00", (f) => f.keys.reader)],
  ["429 past the limit", async (f) => {
    for (let i = 0; i < limit; i++) await f.server.request("GET", "/api/v1/accounts", { key: f.keys.limited })
    return f.server.request("GET", "/api/v1/accounts", { key: f.keys.limited })
  }]
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

  it.each(cases)("GET /api/v1/accounts: %s", async (_name, send) => {
    const [a, b] = await Promise.all([send(fast), send(api)])
    expect(shape(a)).toEqual(shape(b))
  })

  it("answers the list itself (the cases above are not all errors)", async () => {
    const res = await fast.server.request("GET", "/api/v1/accounts", { key: fast.keys.reader })
    expect(res.status).toBe(200)
    const names = (res.json as { data: { accounts: Array<{ account_name: string }> } }).data.accounts
      .map((a) => a.account_name)
    expect(names).toContain("herald_x")
  })
})
