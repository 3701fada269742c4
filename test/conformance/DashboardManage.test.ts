/**
 * The dashboard's keys, device-login and users endpoints over real HTTP against `herald serve` (SQLite
 * and, where it answers, Postgres): owners and admins create and revoke keys and approve devices, a
 * member gets 403 `forbidden` and nothing changes, a created key's secret is shown once and works,
 * last use is shown, bad input stores nothing, and a device login started by POST /auth/device is
 * approved (or denied) in the browser. Owners and admins set the posting queue's zone and openings.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] DashboardManage conformance on Postgres skipped: ${pg.reason}`)

interface KeyView {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly account_ids: ReadonlyArray<number> | null
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

const errorOf = (res: HeraldServer.Response) => (res.json as { error: { code: string; message: string } }).error
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const ownerToken = async (server: HeraldServer.HeraldServer): Promise<string> => {
  for (let i = 0; i < 100; i++) {
    const token = /HERALD_OWNER_LINK=\S+\/set-password\?token=([0-9a-f]{64})/.exec(server.output())?.[1]
    if (token !== undefined) return token
    await sleep(50)
  }
  throw new Error(`no owner link printed:\n${server.output()}`)
}

interface Browser {
  readonly cookie: string
  readonly csrf: string
}

interface QueueView {
  readonly configured: boolean
  readonly timezone: string | null
  readonly openings: ReadonlyArray<{ readonly weekday_number: number; readonly time: string }>
  readonly forecast: ReadonlyArray<{ readonly local_time: string }>
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("dashboard keys, devices and users on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let owner: Browser
  let member: Browser

  const call = (
    browser: Browser | null,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ) =>
    server.request(method, path, {
      key: null,
      ...(body === undefined ? {} : { body }),
      headers: {
        ...(browser === null ? {} : { cookie: browser.cookie, "x-csrf-token": browser.csrf }),
        ...headers
      }
    })

  const signIn = async (email: string, password: string): Promise<Browser> => {
    const res = await server.request("POST", "/dashboard/api/session", { key: null, body: { email, password } })
    if (res.status !== 200) throw new Error(`sign-in: ${res.text}`)
    const cookie = /herald_session=[0-9a-f]{64}/.exec(res.headers.get("set-cookie") ?? "")![0]
    return { cookie, csrf: (res.json as { csrf_token: string }).csrf_token }
  }

  const setPassword = async (token: string, password: string) => {
    const res = await server.request("POST", "/dashboard/api/password", { key: null, body: { token, password } })
    if (res.status !== 204) throw new Error(`password: ${res.text}`)
  }

  const keyCount = () =>
    server.withStore(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM api_keys`)
    )
      .then((rows) => Number(rows[0]!.n))

  const listKeys = async (browser: Browser) => {
    const res = await call(browser, "GET", "/dashboard/api/keys")
    expect(res.status, res.text).toBe(200)
    return (res.json as { data: ReadonlyArray<KeyView> }).data
  }

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_PUBLIC_URL: "", HERALD_DEVICE_POLL_INTERVAL_SECONDS: "1", HERALD_SIGN_IN_LIMIT_PER_MINUTE: "1000" }
    })
    await setPassword(await ownerToken(server), "owner password 123")
    owner = await signIn("owner@localhost", "owner password 123")
    const created = await server.cli(["users", "create", "member@example.com", "--role", "member"])
    if (created.code !== 0) throw new Error(created.stderr)
    await setPassword(created.stdout.trim().split("token=")[1]!, "member password 123")
    member = await signIn("member@example.com", "member password 123")
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
  })

  it.skipIf(skip)("every signed-in user lists the keys, with prefix and last use, never the secret", async () => {
    // HeraldServer.start used the bootstrap key on GET /me; its use is recorded off the request path.
    let keys: ReadonlyArray<KeyView> = []
    for (let i = 0; i < 50; i++) {
      keys = await listKeys(member)
      if (keys.some((k) => k.last_used_at !== null)) break
      await sleep(100)
    }
    const bootstrap = keys.find((k) => k.name === "bootstrap")!
    expect(bootstrap).toMatchObject({
      prefix: server.key.slice(0, 12),
      scopes: ["read", "write", "ai"],
      account_ids: null,
      revoked_at: null
    })
    expect(Date.parse(bootstrap.last_used_at!)).toBeGreaterThan(Date.parse(bootstrap.created_at) - 1)
    expect(JSON.stringify(keys)).not.toContain(server.key)
    expect((await call(null, "GET", "/dashboard/api/keys")).status).toBe(401)
  })

  it.skipIf(skip)(
    "an owner creates a key (secret once, it works) and revokes it; a member can do neither",
    async () => {
      const [account] = await server.withStore(insertAccounts(server.orgId, [{ platform: "x", name: "keys_x" }]))
      const before = await keyCount()
      const refused = await call(member, "POST", "/dashboard/api/keys", { name: "member's", scopes: ["read"] })
      expect(refused.status).toBe(403)
      expect(errorOf(refused).code).toBe("forbidden")
      const noCsrf = await call(owner, "POST", "/dashboard/api/keys", { name: "x", scopes: ["read"] }, {
        "x-csrf-token": ""
      })
      expect(noCsrf.status).toBe(403)
      expect(errorOf(noCsrf).code).toBe("csrf_failed")
      const badScope = await call(owner, "POST", "/dashboard/api/keys", { name: "x", scopes: ["admin"] })
      expect(badScope.status).toBe(400)
      expect(errorOf(badScope).code).toBe("validation_error")
      const noScopes = await call(owner, "POST", "/dashboard/api/keys", { name: "x", scopes: [] })
      expect(errorOf(noScopes).code).toBe("validation_error")
      const blankName = await call(owner, "POST", "/dashboard/api/keys", { name: "  ", scopes: ["read"] })
      expect(errorOf(blankName).code).toBe("validation_error")
      const foreignAccount = await call(owner, "POST", "/dashboard/api/keys", {
        name: "x",
        scopes: ["read"],
        account_ids: [999999]
      })
      expect(foreignAccount.status).toBe(400)
      expect(errorOf(foreignAccount).code).toBe("invalid_accounts")
      expect(await keyCount()).toBe(before)

      const created = await call(owner, "POST", "/dashboard/api/keys", {
        name: " CI deploys ",
        scopes: ["read", "write"],
        account_ids: [account!.id]
      })
      expect(created.status, created.text).toBe(201)
      const { key, secret } = created.json as { key: KeyView; secret: string }
      expect(secret).toMatch(/^pe_live_[0-9a-f]{32}$/)
      expect(key).toMatchObject({
        name: "CI deploys",
        prefix: secret.slice(0, 12),
        scopes: ["read", "write"],
        account_ids: [account!.id],
        last_used_at: null,
        revoked_at: null
      })
      const me = await server.request("GET", "/api/v1/me", { key: secret })
      expect(me.status).toBe(200)
      expect((me.json as { data: { key: { id: string; scopes: Array<string> } } }).data.key).toMatchObject({
        id: key.id,
        scopes: ["read", "write"]
      })
      expect(JSON.stringify(await listKeys(owner))).not.toContain(secret)

      const memberRevoke = await call(member, "DELETE", `/dashboard/api/keys/${key.id}`)
      expect(memberRevoke.status).toBe(403)
      expect((await server.request("GET", "/api/v1/me", { key: secret })).status).toBe(200)
      const revoked = await call(owner, "DELETE", `/dashboard/api/keys/${key.id}`)
      expect(revoked.status).toBe(204)
      const after = await server.request("GET", "/api/v1/me", { key: secret })
      expect(after.status).toBe(401)
      expect(errorOf(after).code).toBe("api_key_revoked")
      expect((await listKeys(owner)).find((k) => k.id === key.id)!.revoked_at).not.toBeNull()
      expect((await call(owner, "DELETE", "/dashboard/api/keys/00000000-0000-4000-8000-000000000000")).status).toBe(404)
      expect((await call(owner, "DELETE", "/dashboard/api/keys/not-a-uuid")).status).toBe(404)
    }
  )

  it.skipIf(skip)("another organization's key looks absent", async () => {
    const other = await server.cli(["orgs", "create", "Elsewhere"])
    const orgId = other.stdout.trim()
    const foreignKey = await server.createKey({ org: orgId, name: "theirs" })
    const theirs = await server.request("GET", "/api/v1/me", { key: foreignKey })
    const id = (theirs.json as { data: { key: { id: string } } }).data.key.id
    expect((await listKeys(owner)).some((k) => k.id === id)).toBe(false)
    expect((await call(owner, "DELETE", `/dashboard/api/keys/${id}`)).status).toBe(404)
    expect((await server.request("GET", "/api/v1/me", { key: foreignKey })).status).toBe(200)
  }, 90_000)

  it.skipIf(skip)(
    "a device login started by POST /auth/device is looked up, then approved in the browser",
    async () => {
      const start = await server.request("POST", "/api/v1/auth/device", {
        key: null,
        body: { client_name: "herald-cli" }
      })
      expect(start.status).toBe(200)
      const { device_code, user_code } = (start.json as { data: { device_code: string; user_code: string } }).data
      const looked = await call(member, "GET", `/dashboard/api/device/${user_code.toLowerCase()}`)
      expect(looked.status, looked.text).toBe(200)
      expect(looked.json).toMatchObject({
        user_code,
        client_name: "herald-cli",
        scopes: ["read", "write", "ai"],
        status: "pending"
      })
      expect(Date.parse((looked.json as { expires_at: string }).expires_at)).toBeGreaterThan(Date.now())

      const byMember = await call(member, "POST", `/dashboard/api/device/${user_code}/approve`)
      expect(byMember.status).toBe(403)
      expect(errorOf(byMember).code).toBe("forbidden")
      const noCsrf = await call(owner, "POST", `/dashboard/api/device/${user_code}/approve`, undefined, {
        "x-csrf-token": "nope"
      })
      expect(noCsrf.status).toBe(403)
      expect(errorOf(noCsrf).code).toBe("csrf_failed")
      expect((await call(owner, "GET", `/dashboard/api/device/${user_code}`)).json).toMatchObject({ status: "pending" })

      const approved = await call(owner, "POST", `/dashboard/api/device/${user_code}/approve`)
      expect(approved.status, approved.text).toBe(204)
      const again = await call(owner, "POST", `/dashboard/api/device/${user_code}/approve`)
      expect(again.status).toBe(400)
      await sleep(1100)
      const token = await server.request("POST", "/api/v1/auth/device/token", { key: null, body: { device_code } })
      const data = (token.json as { data: { status: string; api_key: string; organization_id: string } }).data
      expect(data.status).toBe("authorized")
      expect(data.organization_id).toBe(server.orgId)
      expect((await server.request("GET", "/api/v1/me", { key: data.api_key })).status).toBe(200)
      expect((await call(owner, "GET", "/dashboard/api/device/BCDF-GHJK")).status).toBe(404)
      expect((await call(owner, "GET", "/dashboard/api/device/nonsense")).status).toBe(404)
    }
  )

  it.skipIf(skip)("a device login denied in the browser is denied to the device", async () => {
    const start = await server.request("POST", "/api/v1/auth/device", { key: null, body: {} })
    const { device_code, user_code } = (start.json as { data: { device_code: string; user_code: string } }).data
    expect((await call(member, "POST", `/dashboard/api/device/${user_code}/deny`)).status).toBe(403)
    expect((await call(owner, "POST", `/dashboard/api/device/${user_code}/deny`)).status).toBe(204)
    await sleep(1100)
    const token = await server.request("POST", "/api/v1/auth/device/token", { key: null, body: { device_code } })
    expect((token.json as { data: { status: string } }).data.status).toBe("denied")
  })

  it.skipIf(skip)("owners and admins list the organization's users; a member may not", async () => {
    const res = await call(owner, "GET", "/dashboard/api/users")
    expect(res.status).toBe(200)
    const users = (res.json as { data: ReadonlyArray<{ email: string; role: string; id: string }> }).data
    expect(users.map((u) => [u.email, u.role])).toEqual([["owner@localhost", "owner"], [
      "member@example.com",
      "member"
    ]])
    const refused = await call(member, "GET", "/dashboard/api/users")
    expect(refused.status).toBe(403)
    expect(errorOf(refused).code).toBe("forbidden")
  })
  it.skipIf(skip)(
    "owners and admins set the queue's zone and openings; a member may not; bad input stores nothing",
    async () => {
      const queue = async () => ((await call(owner, "GET", "/api/v1/queue")).json as { data: QueueView }).data
      const body = {
        timezone: "America/New_York",
        openings: [{ weekday_number: 3, time: "14:30" }, { weekday_number: 1, time: "09:00" }, {
          weekday_number: 1,
          time: "09:00"
        }]
      }
      const refused = await call(member, "PUT", "/dashboard/api/queue", body)
      expect(refused.status).toBe(403)
      expect(errorOf(refused).code).toBe("forbidden")
      expect((await queue()).configured).toBe(false)

      const set = await call(owner, "PUT", "/dashboard/api/queue", body)
      expect(set.status, set.text).toBe(200)
      const answered = (set.json as { data: QueueView }).data
      // Week order, each opening once; the answer is the queue as GET /queue shows it.
      expect(answered.openings.map((o) => [o.weekday_number, o.time])).toEqual([[1, "09:00"], [3, "14:30"]])
      expect(answered.timezone).toBe("America/New_York")
      expect(answered.forecast.length).toBeGreaterThan(0)
      expect(await queue()).toEqual(answered)

      for (
        const [bad, code] of [
          [{ ...body, timezone: "Mars/Base" }, "invalid_timezone"],
          [{ ...body, openings: [{ weekday_number: 8, time: "09:00" }] }, "validation_error"],
          [{ ...body, openings: [{ weekday_number: 1, time: "9:00" }] }, "validation_error"],
          [{ timezone: "Europe/Berlin" }, "validation_error"]
        ] as const
      ) {
        const res = await call(owner, "PUT", "/dashboard/api/queue", bad)
        expect(res.status, JSON.stringify(bad)).toBe(400)
        expect(errorOf(res).code).toBe(code)
      }
      expect(await queue()).toEqual(answered)
      // Without the session's CSRF token the write is refused.
      const noCsrf = await call(owner, "PUT", "/dashboard/api/queue", body, { "x-csrf-token": "" })
      expect(noCsrf.status).toBe(403)
    }
  )
})
