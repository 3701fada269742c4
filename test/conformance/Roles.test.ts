/**
 * The role matrix on /api/v1 through the browser session cookie, over real HTTP against `herald
 * serve` (SQLite and, where it answers, Postgres): a member is refused (403 `insufficient_scope`,
 * nothing changed) for webhooks, connecting and disconnecting accounts, key management and changing
 * another person's post, and may create posts and change their own; an admin and the owner may do
 * all of it. API keys are not bounded by roles.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Admin from "@herald/http/Admin"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Roles conformance on Postgres skipped: ${pg.reason}`)

interface Body {
  readonly data: Record<string, unknown> & { readonly id: string }
  readonly error: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
}
const body = (r: HeraldServer.Response) => r.json as Body
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Browser {
  readonly cookie: string
  readonly csrf: string
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("roles on /api/v1 on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let owner: Browser
  let admin: Browser
  let member: Browser

  const as = (browser: Browser, method: string, path: string, payload?: unknown) =>
    server.request(method, path, {
      key: null,
      ...(payload === undefined ? {} : { body: payload }),
      headers: { cookie: browser.cookie, "x-csrf-token": browser.csrf }
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

  const person = async (email: string, role: "admin" | "member") => {
    const created = await server.cli(["users", "create", email, "--role", role])
    if (created.code !== 0) throw new Error(created.stderr)
    await setPassword(created.stdout.trim().split("token=")[1]!, `${role} password 123`)
    return signIn(email, `${role} password 123`)
  }

  const count = (table: "webhook_subscriptions" | "api_keys" | "social_accounts" | "posts") =>
    server.withStore(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql(table)}`)
    ).then((rows) => Number(rows[0]!.n))

  const refused = (r: HeraldServer.Response, what: string) => {
    expect([what, r.status, body(r).error?.code]).toEqual([what, 403, "insufficient_scope"])
    expect(body(r).error.details?.["role"]).toBe("member")
  }

  beforeAll(async () => {
    if (skip) return
    server = await HeraldServer.start({
      postgres,
      env: { HERALD_PUBLIC_URL: "", HERALD_SIGN_IN_LIMIT_PER_MINUTE: "1000", HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" }
    })
    let token: string | undefined
    for (let i = 0; i < 100 && token === undefined; i++) {
      token = /HERALD_OWNER_LINK=\S+\/set-password\?token=([0-9a-f]{64})/.exec(server.output())?.[1]
      if (token === undefined) await sleep(50)
    }
    await setPassword(token!, "owner password 123")
    owner = await signIn("owner@localhost", "owner password 123")
    // Owner, admin and member: three team seats, which the Growth plan has (a trial has two).
    await server.withStore(Admin.setPlan(server.orgId, "growth"))
    admin = await person("admin@example.com", "admin")
    member = await person("member@example.com", "member")
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
  })

  it.skipIf(skip)(
    "webhooks are for owners and admins: a member may neither create, list, change nor delete one",
    async () => {
      const hook = { url: "https://hooks.example.com/roles", events: ["post.published"] }
      const before = await count("webhook_subscriptions")
      refused(await as(member, "POST", "/api/v1/webhooks", hook), "member creates")
      expect(await count("webhook_subscriptions")).toBe(before)

      const byOwner = await as(owner, "POST", "/api/v1/webhooks", hook)
      expect(byOwner.status, byOwner.text).toBe(201)
      const byAdmin = await as(admin, "POST", "/api/v1/webhooks", hook)
      expect(byAdmin.status, byAdmin.text).toBe(201)
      const id = body(byOwner).data.id

      refused(await as(member, "GET", "/api/v1/webhooks"), "member lists")
      refused(await as(member, "GET", `/api/v1/webhooks/${id}`), "member reads")
      refused(
        await as(member, "PATCH", `/api/v1/webhooks/${id}`, { url: "https://evil.example/h" }),
        "member re-points"
      )
      refused(await as(member, "POST", `/api/v1/webhooks/${id}/test`), "member tests")
      refused(await as(member, "DELETE", `/api/v1/webhooks/${id}`), "member deletes")
      const kept = body(await as(admin, "GET", `/api/v1/webhooks/${id}`)).data
      expect(kept["url"]).toBe(hook.url)

      expect((await as(admin, "PATCH", `/api/v1/webhooks/${id}`, { name: "by admin" })).status).toBe(200)
      expect((await as(admin, "DELETE", `/api/v1/webhooks/${body(byAdmin).data.id}`)).status).toBe(200)
      expect((await as(owner, "DELETE", `/api/v1/webhooks/${id}`)).status).toBe(200)
      expect(await count("webhook_subscriptions")).toBe(before)
    }
  )

  it.skipIf(skip)("connecting and disconnecting accounts is for owners and admins", async () => {
    const [a, b] = await server.withStore(insertAccounts(server.orgId, [
      { platform: "x", name: "roles_a" },
      { platform: "x", name: "roles_b" }
    ]))
    const before = await count("social_accounts")
    refused(await as(member, "POST", "/api/v1/accounts/connect-link", { platform: "x" }), "member connect-link")
    refused(
      await as(member, "POST", "/api/v1/accounts/connect-credential", {
        platform: "discord",
        webhook_url: "https://discord.com/api/webhooks/1/abc"
      }),
      "member connect-credential"
    )
    refused(await as(member, "POST", `/api/v1/accounts/${a!.id}/reconnect`), "member reconnect")
    refused(await as(member, "DELETE", `/api/v1/accounts/${a!.id}`), "member disconnect")
    expect(await count("social_accounts")).toBe(before)
    const still = await as(member, "GET", `/api/v1/accounts/${a!.id}`)
    expect([still.status, body(still).data["is_active"] ?? true]).toEqual([200, true])

    expect((await as(admin, "DELETE", `/api/v1/accounts/${a!.id}`)).status).toBe(200)
    expect((await as(owner, "DELETE", `/api/v1/accounts/${b!.id}`)).status).toBe(200)
    const link = await as(admin, "POST", "/api/v1/accounts/connect-link", { platform: "x" })
    expect(link.status).not.toBe(403)
  })

  it.skipIf(skip)("API keys are managed by owners and admins only", async () => {
    const before = await count("api_keys")
    const byMember = await as(member, "POST", "/dashboard/api/keys", { name: "member's", scopes: ["read"] })
    expect([byMember.status, body(byMember).error.code]).toEqual([403, "forbidden"])
    expect(await count("api_keys")).toBe(before)
    const byAdmin = await as(admin, "POST", "/dashboard/api/keys", { name: "admin's", scopes: ["read"] })
    expect(byAdmin.status, byAdmin.text).toBe(201)
    const keyId = (byAdmin.json as { key: { id: string } }).key.id
    const revokedByMember = await as(member, "DELETE", `/dashboard/api/keys/${keyId}`)
    expect(revokedByMember.status).toBe(403)
    expect((await as(owner, "DELETE", `/dashboard/api/keys/${keyId}`)).status).toBe(204)
  })

  it.skipIf(skip)(
    "a member creates posts and changes their own; only owners and admins change another person's",
    async () => {
      const [account] = await server.withStore(insertAccounts(server.orgId, [{ platform: "x", name: "roles_posts" }]))
      const draft = async (who: Browser, content: string) => {
        const r = await as(who, "POST", "/api/v1/posts", { content, draft: true, account_ids: [account!.id] })
        expect(r.status, r.text).toBe(201)
        return body(r).data.id
      }
      const mine = await draft(member, "the member's")
      const admins = await draft(admin, "the admin's")
      const viaKey = body(
        await server.request("POST", "/api/v1/posts", {
          body: { content: "by the bootstrap key", draft: true, account_ids: [account!.id] }
        })
      ).data.id

      expect((await as(member, "PATCH", `/api/v1/posts/${mine}`, { content: "the member's, edited" })).status).toBe(200)
      for (const id of [admins, viaKey]) {
        refused(await as(member, "PATCH", `/api/v1/posts/${id}`, { content: "taken over" }), `member edits ${id}`)
        refused(
          await as(member, "POST", `/api/v1/posts/${id}/schedule`, { publish_now: true }),
          `member schedules ${id}`
        )
        refused(await as(member, "POST", `/api/v1/posts/${id}/retry`), `member retries ${id}`)
        refused(await as(member, "DELETE", `/api/v1/posts/${id}`), `member deletes ${id}`)
      }
      refused(
        await as(member, "POST", "/api/v1/posts/retry-failed", { account_id: account!.id }),
        "member retry-failed"
      )
      const adminsPost = body(await as(member, "GET", `/api/v1/posts/${admins}`)).data
      expect(adminsPost["content"]).toBe("the admin's")
      // An unknown post is the handler's 404, not a refusal.
      const unknown = await as(member, "DELETE", "/api/v1/posts/00000000-0000-4000-8000-000000000000")
      expect(unknown.status).toBe(404)

      expect((await as(admin, "PATCH", `/api/v1/posts/${mine}`, { content: "edited by the admin" })).status).toBe(200)
      expect((await as(owner, "PATCH", `/api/v1/posts/${admins}`, { content: "edited by the owner" })).status).toBe(200)
      const before = await count("posts")
      expect((await as(member, "DELETE", `/api/v1/posts/${mine}`)).status).toBe(200)
      expect((await as(owner, "DELETE", `/api/v1/posts/${admins}`)).status).toBe(200)
      expect((await as(admin, "DELETE", `/api/v1/posts/${viaKey}`)).status).toBe(200)
      expect(await count("posts")).toBe(before - 3)
    }
  )

  it.skipIf(skip)("keys are organization credentials: a member's role does not bound a key", async () => {
    const key = await server.createKey({ name: "integration" })
    const hook = await server.request("POST", "/api/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/key", events: ["post.failed"] }
    })
    expect(hook.status, hook.text).toBe(201)
    expect((await server.request("DELETE", `/api/v1/webhooks/${body(hook).data.id}`, { key })).status).toBe(200)
  })
})
