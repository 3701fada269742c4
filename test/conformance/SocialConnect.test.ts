/**
 * The connect bridge over real HTTP against `herald serve` (SQLite and, where it answers, Postgres),
 * with the platforms' loopback fakes: POST /auth/social-connect/start and GET
 * /auth/social-connect/poll/{session_id} around X's consent and the OAuth callback (completed,
 * cancelled, expired, reconnect), the credential bridges for telegram, discord and bluesky, and
 * 401 api_key_required without a key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { AccountId, OrganizationId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as XFake from "../../packages/adapters/test/oauth/fakes/XOAuthFake.js"
import * as BlueskyFake from "../../packages/adapters/test/platforms/fakes/BlueskyFake.js"
import * as DiscordFake from "../../packages/adapters/test/platforms/fakes/DiscordFake.js"
import * as TelegramFake from "../../packages/adapters/test/platforms/fakes/TelegramFake.js"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] SocialConnect conformance on Postgres skipped: ${pg.reason}`)

const publicUrl = "https://herald.test"

interface Envelope<A> {
  readonly data: A | null
  readonly error: {
    readonly code: string
    readonly message: string
    readonly retryable?: boolean
    readonly details?: Record<string, unknown>
  } | null
  readonly meta: { readonly request_id?: string; readonly timestamp: string }
}

interface AccountBody {
  readonly id: number
  readonly platform: string
  readonly account_name: string
  readonly health: { readonly status: string; readonly can_post: boolean; readonly needs_reconnection: boolean }
}

interface Session {
  readonly session_id: string
  readonly platform: string
  readonly mode: string
  readonly account_id: number | null
  readonly authorize_url: string
  readonly interval: number
  readonly expires_in: number
  readonly expires_at: string
  readonly instructions: string
}

interface Polled {
  readonly session_id: string
  readonly platform: string
  readonly status: string
  readonly account: AccountBody | null
  readonly message: string | null
}

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>>
}

const body = <A>(response: HeraldServer.Response) => response.json as Envelope<A>

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("connect bridge on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let telegram: TelegramFake.TelegramFake
  let discord: DiscordFake.DiscordFake
  let bluesky: BlueskyFake.BlueskyFake
  let x: XFake.XOAuthFake
  let doc: Doc

  beforeAll(async () => {
    if (skip) return
    telegram = await TelegramFake.start()
    discord = await DiscordFake.start()
    bluesky = await BlueskyFake.start()
    x = await XFake.start()
    server = await HeraldServer.start({
      postgres,
      env: {
        HERALD_SECRET: "",
        HERALD_PUBLIC_URL: publicUrl,
        HERALD_X_CLIENT_ID: x.clientId,
        HERALD_X_CLIENT_SECRET: x.clientSecret,
        HERALD_X_AUTHORIZE_URL: `${x.server.url}/i/oauth2/authorize`,
        HERALD_X_API_URL: x.server.url,
        HERALD_TELEGRAM_API_URL: telegram.server.url,
        HERALD_DISCORD_API_URL: discord.server.url,
        HERALD_BLUESKY_SERVICE_URL: bluesky.entryway.url,
        // The fake's PDS is another loopback port, which only the operator switch lets through.
        HERALD_BLUESKY_ALLOW_PRIVATE: "true"
      }
    })
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await Promise.all([telegram?.server.close(), discord?.server.close(), bluesky?.close(), x?.close()])
  })

  const conforms = (path: string, method: string, res: HeraldServer.Response) => {
    const response = doc.paths[path]?.[method]?.responses[String(res.status)]
    expect(response, `${method} ${path} documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }

  const start = async (payload: Record<string, unknown>) => {
    const res = await server.request("POST", "/api/v1/auth/social-connect/start", { body: payload })
    expect(res.status, res.text).toBe(200)
    conforms("/api/v1/auth/social-connect/start", "post", res)
    return body<Session>(res).data!
  }

  const poll = async (sessionId: string) => {
    const res = await server.request("GET", `/api/v1/auth/social-connect/poll/${sessionId}`)
    expect(res.status, res.text).toBe(200)
    conforms("/api/v1/auth/social-connect/poll/{session_id}", "get", res)
    return body<Polled>(res).data!
  }

  /** X's consent as the browser sees it, then the redirect to this server's callback. */
  const consent = async (authorizeUrl: string) => {
    const back = new URL(x.authorize(authorizeUrl))
    expect(back.origin).toBe(publicUrl)
    return server.request("GET", back.pathname + back.search, { key: null })
  }

  it.skipIf(skip)(
    "401 api_key_required without a key, in the auth-layer shape; a presented bad key is invalid_api_key",
    async () => {
      const cases: ReadonlyArray<[string, string, unknown]> = [
        ["POST", "/api/v1/auth/social-connect/start", { platform: "x" }],
        ["GET", "/api/v1/auth/social-connect/poll/00000000-0000-4000-8000-000000000000", undefined],
        ["POST", "/api/v1/auth/social-connect/telegram", { bot_token: "t", channel: "c" }],
        ["POST", "/api/v1/auth/social-connect/discord", { webhook_url: "https://discord.com/api/webhooks/1/x" }],
        ["POST", "/api/v1/auth/social-connect/bluesky", { handle: "h", app_password: "p" }]
      ]
      for (const [method, path, payload] of cases) {
        for (const headers of [{}, { authorization: "" }, { authorization: "Basic dXNlcjpwYXNz" }]) {
          const res = await server.request(method, path, {
            key: null,
            headers,
            ...(payload === undefined ? {} : { body: payload })
          })
          expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401)
          expect(res.headers.get("content-type")).toContain("application/json")
          const json = res.json as Record<string, unknown>
          expect(json).toEqual({
            data: null,
            error: { code: "api_key_required", message: expect.any(String) },
            meta: { timestamp: expect.any(String) }
          })
          conforms(
            path.includes("/poll/") ? "/api/v1/auth/social-connect/poll/{session_id}" : path,
            method.toLowerCase(),
            res
          )
        }
      }
      const bad = await server.request("POST", "/api/v1/auth/social-connect/start", {
        key: "pe_live_00000000000000000000000000000000",
        body: { platform: "x" }
      })
      expect(bad.status).toBe(401)
      expect(body(bad).error!.code).toBe("invalid_api_key")
      // Elsewhere a missing header is still the plain-text 401.
      const plain = await server.request("POST", "/api/v1/accounts/connect-link", {
        key: null,
        body: { platform: "x" }
      })
      expect(plain.status).toBe(401)
      expect(plain.text).toBe("Unauthorized")
      // The accounts are untouched by refused calls.
      expect(
        body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!.accounts
      )
        .toEqual([])
    }
  )

  it.skipIf(skip)("start, poll pending, X's consent and the callback, poll completed with the account", async () => {
    const session = await start({ platform: "x" })
    expect(session).toMatchObject({ platform: "x", mode: "connect", account_id: null, interval: 2, expires_in: 600 })
    const url = new URL(session.authorize_url)
    expect(url.origin).toBe(x.server.url)
    expect(url.searchParams.get("redirect_uri")).toBe(`${publicUrl}/oauth/callback/x`)
    expect(await poll(session.session_id)).toMatchObject({ status: "pending", account: null, message: null })

    const page = await consent(session.authorize_url)
    expect(page.status).toBe(200)
    expect(page.text).toContain("@herald_app on x is now connected")
    const done = await poll(session.session_id)
    expect(done).toMatchObject({
      session_id: session.session_id,
      platform: "x",
      status: "completed",
      account: { platform: "x", account_name: "@herald_app", health: { status: "healthy" } },
      message: null
    })
    const list = body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
    expect(list.accounts.find((a) => a.platform === "x")!.id).toBe(done.account!.id)
  })

  it.skipIf(skip)("a declined consent cancels the session; an unvisited one expires with its link", async () => {
    const declined = await start({ platform: "x" })
    const state = new URL(declined.authorize_url).searchParams.get("state")!
    const page = await server.request(
      "GET",
      `/oauth/callback/x?error=access_denied&error_description=The+user+denied&state=${encodeURIComponent(state)}`,
      { key: null }
    )
    expect(page.status).toBe(400)
    const cancelled = await poll(declined.session_id)
    expect(cancelled.status).toBe("cancelled")
    expect(cancelled.message).toContain("access_denied")
    // A later success through the same link does not reopen it.
    await consent(declined.authorize_url)
    expect((await poll(declined.session_id)).status).toBe("cancelled")

    const idle = await start({ platform: "x" })
    await server.withStore(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE connect_sessions SET expires_at = ${Date.now() - 1000} WHERE id = ${idle.session_id}`
      )
    )
    expect((await poll(idle.session_id)).status).toBe("expired")
  })

  it.skipIf(skip)("mode reconnect repairs a broken account in place; bad reconnect requests are refused", async () => {
    const accounts = body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts"))
      .data!
    const xAccount = accounts.accounts.find((a) => a.platform === "x")!
    const healthy = await server.request("POST", "/api/v1/auth/social-connect/start", {
      body: { platform: "x", mode: "reconnect", account_id: xAccount.id }
    })
    expect(healthy.status).toBe(400)
    expect(body(healthy).error).toMatchObject({
      code: "validation_error",
      details: { reason: "reconnection_not_needed" }
    })
    const noAccount = await server.request("POST", "/api/v1/auth/social-connect/start", {
      body: { platform: "x", mode: "reconnect" }
    })
    expect(noAccount.status).toBe(400)
    expect(body(noAccount).error!.details!.validation_errors).toEqual([expect.objectContaining({ path: "account_id" })])
    const unknown = await server.request("POST", "/api/v1/auth/social-connect/start", {
      body: { platform: "x", mode: "reconnect", account_id: 999999 }
    })
    expect(unknown.status).toBe(404)

    await server.withStore(Effect.gen(function*() {
      const store = yield* AccountStore
      const found = Option.getOrThrow(
        yield* store.findById(OrganizationId.make(server.orgId), AccountId.make(xAccount.id))
      )
      yield* store.update(new SocialAccount({ ...found, needsReconnection: true }))
    }))
    const otherPlatform = await server.request("POST", "/api/v1/auth/social-connect/start", {
      body: { platform: "youtube", mode: "reconnect", account_id: xAccount.id }
    })
    expect(otherPlatform.status).toBe(400)
    expect(body(otherPlatform).error!.code).toBe("validation_error")

    const session = await start({ platform: "x", mode: "reconnect", account_id: xAccount.id })
    expect(session).toMatchObject({ mode: "reconnect", account_id: xAccount.id })
    expect((await consent(session.authorize_url)).text).toContain("is reconnected")
    expect(await poll(session.session_id)).toMatchObject({
      status: "completed",
      account: { id: xAccount.id, health: { status: "healthy", needs_reconnection: false } }
    })
  })

  it.skipIf(skip)(
    "poll: unknown sessions and other organizations' sessions are 404; a read-only key is 403",
    async () => {
      const session = await start({ platform: "x" })
      expect((await server.request("GET", "/api/v1/auth/social-connect/poll/not-a-session")).status).toBe(404)
      const unknown = await server.request(
        "GET",
        "/api/v1/auth/social-connect/poll/00000000-0000-4000-8000-000000000000"
      )
      expect(unknown.status).toBe(404)
      conforms("/api/v1/auth/social-connect/poll/{session_id}", "get", unknown)
      const other = await server.cli(["orgs", "create", "Elsewhere"])
      const otherKey = await server.createKey({ org: other.stdout.trim() })
      const foreign = await server.request("GET", `/api/v1/auth/social-connect/poll/${session.session_id}`, {
        key: otherKey
      })
      expect(foreign.status).toBe(404)
      const readOnly = await server.createKey({ scopes: ["read"] })
      const forbidden = await server.request("POST", "/api/v1/auth/social-connect/start", {
        key: readOnly,
        body: { platform: "x" }
      })
      expect(forbidden.status).toBe(403)
      expect(body(forbidden).error!.code).toBe("insufficient_scope")
      const misconfigured = await server.request("POST", "/api/v1/auth/social-connect/start", {
        body: { platform: "linkedin" }
      })
      expect(misconfigured.status).toBe(400)
      expect(body(misconfigured).error!.code).toBe("misconfig")
      const credentialPlatform = await server.request("POST", "/api/v1/auth/social-connect/start", {
        body: { platform: "telegram" }
      })
      expect(credentialPlatform.status).toBe(400)
      expect(body(credentialPlatform).error!.code).toBe("validation_error")
    },
    180_000
  )

  it.skipIf(skip)(
    "credential bridges: telegram, discord and bluesky connect with the connect-credential bodies",
    async () => {
      const tg = await server.request("POST", "/api/v1/auth/social-connect/telegram", {
        body: { bot_token: TelegramFake.botToken, channel: "@herald_news" }
      })
      expect(tg.status, tg.text).toBe(200)
      conforms("/api/v1/auth/social-connect/telegram", "post", tg)
      expect(body(tg).data).toMatchObject({
        platform: "telegram",
        connected: true,
        account: { platform: "telegram", account_name: "Herald News", health: { status: "healthy" } }
      })
      const hook = await server.request("POST", "/api/v1/auth/social-connect/discord", {
        body: { platform: "discord", webhook_url: DiscordFake.webhookUrl }
      })
      expect(hook.status, hook.text).toBe(200)
      expect(body<{ account: AccountBody }>(hook).data!.account.account_name).toBe("Herald Announcements")
      const sky = await server.request("POST", "/api/v1/auth/social-connect/bluesky", {
        body: { handle: "herald.bsky.social", app_password: BlueskyFake.appPassword }
      })
      expect(sky.status, sky.text).toBe(200)
      expect(body<{ account: AccountBody }>(sky).data!.account.account_name).toBe("herald.bsky.social")

      const wrong = await server.request("POST", "/api/v1/auth/social-connect/telegram", {
        body: { platform: "discord", webhook_url: DiscordFake.webhookUrl }
      })
      expect(wrong.status).toBe(400)
      expect(body(wrong).error!.code).toBe("validation_error")
      for (
        const [platform, sent] of [
          ["telegram", { bot_token: { token: "7012345678:SECRET_VALUE" }, channel: "@herald_news" }],
          ["bluesky", { handle: "h", app_password: { password: "SECRET_VALUE" } }],
          ["discord", { webhook_url: ["https://discord.com/api/webhooks/1/SECRET_VALUE"] }]
        ] as const
      ) {
        const mistyped = await server.request("POST", `/api/v1/auth/social-connect/${platform}`, { body: sent })
        expect([platform, mistyped.status]).toEqual([platform, 400])
        expect(body(mistyped).error!.code).toBe("validation_error")
        expect(mistyped.text).not.toContain("SECRET_VALUE")
      }
      const missing = await server.request("POST", "/api/v1/auth/social-connect/bluesky", { body: { handle: "h" } })
      expect(missing.status).toBe(400)
      expect(body(missing).error).toMatchObject({
        code: "validation_error",
        details: { validation_errors: [{ path: "app_password" }] }
      })
      const refused = await server.request("POST", "/api/v1/auth/social-connect/telegram", {
        body: { bot_token: "7012345678:AAH3kq-Zx8vJ_9LmN0pQrStUvWxYz000000", channel: "@herald_news" }
      })
      expect(refused.status).toBe(400)
      expect(body(refused).error).toMatchObject({ code: "auth_failed", retryable: false })
      expect(refused.text).not.toContain("AAH3kq-Zx8vJ_9LmN0pQrStUvWxYz000000")
      const list = body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
      expect(list.accounts.filter((a) => ["telegram", "discord", "bluesky"].includes(a.platform))).toHaveLength(3)
    }
  )
})
