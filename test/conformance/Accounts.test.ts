/**
 * GET /accounts, /accounts/{id} and /accounts/{id}/health over real HTTP, on SQLite and (where it
 * answers) Postgres: shapes, the Facebook-flow Instagram sibling rule, health, invalid_id, 404 for
 * absent, other-organization and restricted-away accounts.
 */
import type { SocialAccount } from "@herald/core/domain/Account"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Accounts conformance on Postgres skipped: ${pg.reason}`)

interface AccountBody {
  readonly id: number
  readonly platform: string
  readonly account_name: string
  readonly avatar_url: string
  readonly is_active: boolean
  readonly created_at: string
  readonly health: { readonly status: string; readonly can_post: boolean; readonly needs_reconnection: boolean }
}

const day = 24 * 3_600_000

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("accounts on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let byName: Map<string, SocialAccount>
  let otherOrgAccount: SocialAccount

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({ postgres })
    const mine = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "herald_x", tokenExpiresIn: 90 * day, lastSuccessAt: "2026-01-02T03:04:05.000Z" },
      { platform: "instagram", name: "brand", platformAccountId: "ig-1", connectionFlow: "direct" },
      { platform: "instagram", name: "brand", platformAccountId: "ig-fb-1", connectionFlow: "facebook" },
      { platform: "instagram", name: "@Studio", platformAccountId: "ig-fb-2", connectionFlow: "facebook" },
      { platform: "instagram", name: "studio", platformAccountId: "ig-direct-2", connectionFlow: "direct" },
      { platform: "instagram", name: "lonely", platformAccountId: "ig-3", connectionFlow: "facebook" },
      { platform: "linkedin", name: "expired", tokenExpiresIn: -day },
      { platform: "threads", name: "expiring", tokenExpiresIn: day },
      { platform: "bluesky", name: "failing", connectionFlow: "credential", recentFailures: 5 },
      { platform: "facebook", name: "off", isActive: false },
      { platform: "youtube", name: "reconnect", needsReconnection: true }
    ]))
    byName = new Map(mine.map((a) => [`${a.accountName}/${a.connectionFlow}`, a]))
    const created = await server.cli(["orgs", "create", "Other"])
    const [other] = await server.withStore(insertAccounts(created.stdout.trim(), [{ platform: "x", name: "theirs" }]))
    otherOrgAccount = other
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const account = (key: string) => {
    const found = byName.get(key)
    if (found === undefined) throw new Error(`no seeded account ${key}`)
    return found
  }

  it.skipIf(skip)("lists the organization's accounts in the spec's shape, not paginated", async () => {
    const res = await server.request("GET", "/api/v1/accounts")
    expect(res.status).toBe(200)
    const body = res.json as { data: { accounts: Array<AccountBody> }; error: null }
    expect(body.error).toBeNull()
    expect(Object.keys(body.data)).toEqual(["accounts"])
    const x = body.data.accounts.find((a) => a.account_name === "herald_x")
    expect(x).toEqual({
      id: account("herald_x/direct").id,
      platform: "x",
      account_name: "herald_x",
      avatar_url: "https://example.test/avatars/herald_x.png",
      is_active: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      health: { status: "healthy", can_post: true, needs_reconnection: false }
    })
    expect(body.data.accounts.some((a) => a.account_name === "theirs")).toBe(false)
  })

  it.skipIf(skip)("hides Facebook-flow Instagram rows that have an Instagram-direct sibling", async () => {
    const res = await server.request("GET", "/api/v1/accounts")
    const ids = (res.json as { data: { accounts: Array<AccountBody> } }).data.accounts.map((a) => a.id)
    expect(ids).toContain(account("brand/direct").id)
    expect(ids).not.toContain(account("brand/facebook").id) // same name
    expect(ids).toContain(account("studio/direct").id)
    expect(ids).not.toContain(account("@Studio/facebook").id) // same name, case and @ ignored
    expect(ids).toContain(account("lonely/facebook").id) // no sibling
    expect(ids).toHaveLength(9)
    // A hidden row is still an account of the organization.
    const hidden = await server.request("GET", `/api/v1/accounts/${account("brand/facebook").id}`)
    expect(hidden.status).toBe(200)
  })

  it.skipIf(skip)("reports health per account", async () => {
    const res = await server.request("GET", "/api/v1/accounts")
    const health = new Map(
      (res.json as { data: { accounts: Array<AccountBody> } }).data.accounts.map((a) => [a.account_name, a.health])
    )
    expect(health.get("expired")).toEqual({ status: "broken", can_post: false, needs_reconnection: true })
    expect(health.get("off")).toMatchObject({ status: "broken", can_post: false })
    expect(health.get("reconnect")).toEqual({ status: "broken", can_post: false, needs_reconnection: true })
    expect(health.get("expiring")).toEqual({ status: "warning", can_post: true, needs_reconnection: false })
    expect(health.get("failing")).toEqual({ status: "warning", can_post: true, needs_reconnection: false })
  })

  it.skipIf(skip)("returns one account by id", async () => {
    const id = account("herald_x/direct").id
    const res = await server.request("GET", `/api/v1/accounts/${id}`)
    expect(res.status).toBe(200)
    expect((res.json as { data: AccountBody }).data).toMatchObject({ id, platform: "x", account_name: "herald_x" })
  })

  it.skipIf(skip)("returns the health report", async () => {
    const ok = await server.request("GET", `/api/v1/accounts/${account("herald_x/direct").id}/health`)
    expect(ok.status).toBe(200)
    const report = (ok.json as { data: Record<string, unknown> }).data
    expect(Object.keys(report).sort()).toEqual([
      "account_id",
      "can_post",
      "last_success_at",
      "needs_reconnection",
      "reasons",
      "recent_failures",
      "status",
      "token_expires_at"
    ])
    expect(report).toMatchObject({
      account_id: account("herald_x/direct").id,
      status: "healthy",
      can_post: true,
      needs_reconnection: false,
      reasons: [],
      last_success_at: "2026-01-02T03:04:05.000Z",
      recent_failures: 0
    })
    expect(typeof report.token_expires_at).toBe("string")

    const expired = await server.request("GET", `/api/v1/accounts/${account("expired/direct").id}/health`)
    expect((expired.json as { data: Record<string, unknown> }).data).toMatchObject({
      status: "broken",
      can_post: false,
      reasons: ["token_expired"]
    })
    const failing = await server.request("GET", `/api/v1/accounts/${account("failing/credential").id}/health`)
    expect((failing.json as { data: Record<string, unknown> }).data).toMatchObject({
      status: "warning",
      reasons: ["recent_permanent_failures"],
      recent_failures: 5,
      token_expires_at: null,
      last_success_at: null
    })
  })

  it.skipIf(skip)("answers non-numeric ids with 400 invalid_id", async () => {
    for (const path of ["/api/v1/accounts/abc", "/api/v1/accounts/1.5/health", "/api/v1/accounts/-3"]) {
      const res = await server.request("GET", path)
      expect(res.status).toBe(400)
      expect((res.json as { error: { code: string; retryable: boolean } }).error).toMatchObject({
        code: "invalid_id",
        retryable: false
      })
    }
  })

  it.skipIf(skip)("answers absent and other-organization accounts with 404 not_found", async () => {
    for (
      const path of [
        "/api/v1/accounts/999999",
        `/api/v1/accounts/${otherOrgAccount.id}`,
        `/api/v1/accounts/${otherOrgAccount.id}/health`
      ]
    ) {
      const res = await server.request("GET", path)
      expect(res.status).toBe(404)
      expect((res.json as { error: { code: string } }).error.code).toBe("not_found")
    }
  })

  it.skipIf(skip)("limits a restricted key to its accounts", async () => {
    const mineId = account("herald_x/direct").id
    const awayId = account("brand/direct").id
    const key = await server.createKey({ scopes: ["read"], accounts: [mineId] })
    const list = await server.request("GET", "/api/v1/accounts", { key })
    expect((list.json as { data: { accounts: Array<AccountBody> } }).data.accounts.map((a) => a.id)).toEqual([mineId])
    expect((await server.request("GET", `/api/v1/accounts/${mineId}`, { key })).status).toBe(200)
    expect((await server.request("GET", `/api/v1/accounts/${awayId}`, { key })).status).toBe(404)
    expect((await server.request("GET", `/api/v1/accounts/${awayId}/health`, { key })).status).toBe(404)
  })
})
