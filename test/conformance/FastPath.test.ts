/**
 * The fast path (`packages/http/src/FastPath.ts`) answers byte for byte like the HttpApi endpoints it
 * stands in front of (GET /accounts, POST /posts): the same requests (success, query string, every
 * auth failure, scopes, a restricted key, the session cookie, a NUL in the URL, invalid JSON, 413,
 * a form body, schema failures, an unknown account, 429) go to a server with the fast path and
 * to one with `HERALD_FAST_PATH=off`, on the same fixtures, and their status, headers and bodies are
 * compared with the request id, dates and timestamps masked.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const limit = 4
const env = { HERALD_RATE_LIMIT_PER_MINUTE: String(limit) }

interface Fixture {
  readonly server: HeraldServer.HeraldServer
  readonly accountId: number
  readonly lapsedOrg: string
  readonly browser: { readonly cookie: string; readonly csrf: string }
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
  return { server, accountId: accounts[0]!.id, lapsedOrg: lapsedOrg.stdout.trim(), browser: await signIn(server) }
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

const get = (path: string, keyOf: KeyOf, headers: Record<string, string> = {}, method = "GET") => async (f: Fixture) =>
  f.server.request(method, path, { key: await keyOf(f), headers })

const ownerPassword = "correct horse battery staple"

/** Signs the bootstrap owner in (password set from the printed link): the session cookie and CSRF token. */
const signIn = async (server: HeraldServer.HeraldServer): Promise<Fixture["browser"]> => {
  let token: string | undefined
  for (let i = 0; i < 100 && token === undefined; i++) {
    token = /HERALD_OWNER_LINK=\S+\/set-password\?token=([0-9a-f]{64})/.exec(server.output())?.[1]
    if (token === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const set = await server.request("POST", "/dashboard/api/password", {
    key: null,
    body: { token, password: ownerPassword }
  })
  if (set.status !== 204) throw new Error(`password: ${set.text}`)
  const res = await server.request("POST", "/dashboard/api/session", {
    key: null,
    body: { email: "owner@localhost", password: ownerPassword }
  })
  if (res.status !== 200) throw new Error(`sign-in: ${res.text}`)
  const cookie = /herald_session=[0-9a-f]{64}/.exec(res.headers.get("set-cookie") ?? "")![0]
  return { cookie, csrf: (res.json as { csrf_token: string }).csrf_token }
}

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
  [
    "GET /accounts 200 for a restricted key",
    async (f) =>
      f.server.request("GET", "/api/v1/accounts", { key: await f.server.createKey({ accounts: [f.accountId] }) })
  ],
  ["GET /accounts 401 without credentials", get("/api/v1/accounts", none)],
  ["GET /accounts 401 for a malformed key", get("/api/v1/accounts", fixed("pe_live_nothex"))],
  ["GET /accounts 401 for an unknown key", get("/api/v1/accounts", fixed(unknownKey))],
  ["GET /accounts 401 for another scheme", get("/api/v1/accounts", none, { authorization: "Basic dXNlcjpwYXNz" })],
  ["GET /accounts 401 for a cookie that is no session", get("/api/v1/accounts", none, { cookie: "herald_session=no" })],
  [
    "GET /accounts 402 for a lapsed organization",
    async (f) => f.server.request("GET", "/api/v1/accounts", { key: await f.server.createKey({ org: f.lapsedOrg }) })
  ],
  ["GET /accounts 403 without the read scope", get("/api/v1/accounts", fresh({ scopes: ["write"] }))],
  ["GET /accounts 400 for a NUL in the query", get("/api/v1/accounts?x=%00", fresh())],
  ["GET /accounts 429 past the limit", overTheLimit((f, key) => f.server.request("GET", "/api/v1/accounts", { key }))],
  ["POST /posts 201 draft", post("/api/v1/posts", fresh(), draft)],
  ["POST /posts 201 with a query string", post("/api/v1/posts?x=1", fresh(), draft)],
  ["POST /posts 401 without credentials", post("/api/v1/posts", none, draft)],
  ["POST /posts 401 for an unknown key", post("/api/v1/posts", fixed(unknownKey), draft)],
  [
    "POST /posts 402 for a lapsed organization",
    async (f) =>
      f.server.request("POST", "/api/v1/posts", { key: await f.server.createKey({ org: f.lapsedOrg }), ...draft(f) })
  ],
  ["POST /posts 403 without the write scope", post("/api/v1/posts", fresh({ scopes: ["read"] }), draft)],
  ["POST /posts 400 for invalid JSON", post("/api/v1/posts", fresh(), () => ({ rawBody: "{\"content\": " }))],
  [
    "POST /posts 413 for a body over the limit",
    post("/api/v1/posts", fresh(), (f) => ({
      body: { content: "x".repeat(1_100_000), account_ids: [f.accountId], draft: true }
    }))
  ],
  [
    "POST /posts 422 for a form body",
    post("/api/v1/posts", fresh(), () => ({
      rawBody: "content=Hello",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    }))
  ],
  [
    "POST /posts 422 for a body that does not match",
    post("/api/v1/posts", fresh(), () => ({
      body: { content: 5, account_ids: "all" }
    }))
  ],
  [
    "POST /posts for an account that is not there",
    post("/api/v1/posts", fresh(), () => ({
      body: { content: "Hello", account_ids: [987654], draft: true }
    }))
  ],
  [
    "POST /posts 429 past the limit",
    overTheLimit((f, key) => f.server.request("POST", "/api/v1/posts", { key, ...draft(f) }))
  ],
  ["GET /accounts 200 for a signed-in session cookie", (f) => {
    const { cookie, csrf } = f.browser
    return f.server.request("GET", "/api/v1/accounts", { key: null, headers: { cookie, "x-csrf-token": csrf } })
  }],
  ["POST /posts 201 for a signed-in session cookie with its CSRF token", (f) => {
    const { cookie, csrf } = f.browser
    return f.server.request("POST", "/api/v1/posts", {
      key: null,
      headers: { cookie, "x-csrf-token": csrf },
      ...draft(f)
    })
  }],
  ["POST /posts 403 for a signed-in session cookie without its CSRF token", (f) => {
    const { cookie } = f.browser
    return f.server.request("POST", "/api/v1/posts", { key: null, headers: { cookie }, ...draft(f) })
  }],
  // Below the platform only these two routes are answered: the rest falls through to HttpApi.
  ["HEAD /accounts falls through", get("/api/v1/accounts", fresh(), {}, "HEAD")],
  ["PUT /accounts falls through", get("/api/v1/accounts", fresh(), {}, "PUT")],
  ["DELETE /posts falls through", get("/api/v1/posts", fresh(), {}, "DELETE")],
  ["GET /accounts/ (trailing slash) falls through", get("/api/v1/accounts/", fresh())],
  ["GET /accountsx falls through", get("/api/v1/accountsx", fresh())],
  ["GET /posts falls through", get("/api/v1/posts", fresh())],
  ["POST /posts/ (trailing slash) falls through", post("/api/v1/posts/", fresh(), draft)]
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

  it("logs the same line for each request (its own ids, times and durations masked)", async () => {
    const sends = [
      get("/api/v1/accounts", fresh()),
      post("/api/v1/posts", fresh(), draft),
      post("/api/v1/posts", none, draft),
      post("/api/v1/posts", fresh(), () => ({ rawBody: "{" }))
    ]
    const lineOf = async (f: Fixture, res: HeraldServer.Response) => {
      const id = res.headers.get("x-request-id")!
      for (let i = 0; i < 100; i++) {
        const line = f.server.output().split("\n").find((l) => l.includes(id) && l.includes("duration_ms="))
        if (line !== undefined) {
          return line.replace(iso, "<time>").replace(uuid, "<uuid>").replace(/duration_ms=\d+/, "duration_ms=<n>")
            .replace(/fiber=#\d+/, "fiber=<n>")
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      throw new Error(`no log line for ${id}`)
    }
    for (const send of sends) {
      const [a, b] = await Promise.all([send(fast), send(api)])
      expect(await lineOf(fast, a)).toBe(await lineOf(api, b))
    }
  })

  it("keeps the connection alive across requests, as the platform does", async () => {
    const onOneSocket = async (f: Fixture) => {
      const key = await f.server.createKey()
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      const url = new URL(f.server.baseUrl)
      const answers: Array<[number | undefined, boolean, string | undefined]> = []
      for (
        const [method, path] of [["GET", "/api/v1/accounts"], ["POST", "/api/v1/posts"], ["GET", "/api/v1/me"], [
          "GET",
          "/api/v1/accounts"
        ]] as const
      ) {
        answers.push(
          await new Promise((resolve, reject) => {
            const body = method === "POST"
              ? JSON.stringify({ content: "Hello", account_ids: [f.accountId], draft: true })
              : undefined
            const req = http.request({
              host: url.hostname,
              port: url.port,
              path,
              method,
              agent,
              headers: {
                authorization: `Bearer ${key}`,
                ...(body === undefined ? {} : { "content-type": "application/json" })
              }
            }, (res) => {
              res.resume()
              res.on("end", () => resolve([res.statusCode, req.reusedSocket, res.headers.connection]))
            })
            req.on("error", reject)
            req.end(body)
          })
        )
      }
      agent.destroy()
      return answers
    }
    const [a, b] = await Promise.all([onOneSocket(fast), onOneSocket(api)])
    expect(a).toEqual([[200, false, "keep-alive"], [201, true, "keep-alive"], [200, true, "keep-alive"], [
      200,
      true,
      "keep-alive"
    ]])
    expect(a).toEqual(b)
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
    const { cookie, csrf } = fast.browser
    const session = { key: null, headers: { cookie, "x-csrf-token": csrf } }
    expect((await fast.server.request("GET", "/api/v1/accounts", session)).status).toBe(200)
    expect((await fast.server.request("POST", "/api/v1/posts", { ...session, ...draft(fast) })).status).toBe(201)
    expect(
      (await fast.server.request("POST", "/api/v1/posts", { key: null, headers: { cookie }, ...draft(fast) })).status
    ).toBe(403)
  })
})
