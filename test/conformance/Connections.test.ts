/**
 * Connecting accounts over real HTTP against `herald serve` (SQLite and, where it answers, Postgres),
 * with the platforms' loopback fakes behind the server's configurable base URLs:
 * POST /accounts/connect-credential, POST /accounts/connect-link and the OAuth callback page (X, and a
 * Facebook login granting several Pages), POST /accounts/{id}/reconnect, DELETE /accounts/{id};
 * credentials encrypted in the store.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { AccountId, OrganizationId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FacebookFake from "../../packages/adapters/test/oauth/fakes/FacebookOAuthFake.js"
import * as XFake from "../../packages/adapters/test/oauth/fakes/XOAuthFake.js"
import * as BlueskyFake from "../../packages/adapters/test/platforms/fakes/BlueskyFake.js"
import * as DiscordFake from "../../packages/adapters/test/platforms/fakes/DiscordFake.js"
import * as TelegramFake from "../../packages/adapters/test/platforms/fakes/TelegramFake.js"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Connections conformance on Postgres skipped: ${pg.reason}`)

const publicUrl = "https://herald.test"

interface Envelope<A> {
  readonly data: A | null
  readonly error: {
    readonly code: string
    readonly message: string
    readonly retryable: boolean
    readonly details?: Record<string, unknown>
  } | null
  readonly meta: { readonly request_id: string; readonly timestamp: string }
}

interface AccountBody {
  readonly id: number
  readonly platform: string
  readonly account_name: string
  readonly health: { readonly status: string; readonly can_post: boolean; readonly needs_reconnection: boolean }
}

const body = <A>(response: HeraldServer.Response) => response.json as Envelope<A>

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("account connections on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let telegram: TelegramFake.TelegramFake
  let discord: DiscordFake.DiscordFake
  let bluesky: BlueskyFake.BlueskyFake
  let x: XFake.XOAuthFake
  let facebook: FacebookFake.FacebookFake

  beforeAll(async () => {
    if (skip) return
    telegram = await TelegramFake.start()
    discord = await DiscordFake.start()
    bluesky = await BlueskyFake.start()
    x = await XFake.start()
    facebook = await FacebookFake.start()
    server = await HeraldServer.start({
      postgres,
      env: {
        HERALD_SECRET: "",
        HERALD_PUBLIC_URL: publicUrl,
        HERALD_X_CLIENT_ID: x.clientId,
        HERALD_X_CLIENT_SECRET: x.clientSecret,
        HERALD_X_AUTHORIZE_URL: `${x.server.url}/i/oauth2/authorize`,
        HERALD_X_API_URL: x.server.url,
        HERALD_FACEBOOK_CLIENT_ID: facebook.clientId,
        HERALD_FACEBOOK_CLIENT_SECRET: facebook.clientSecret,
        HERALD_FACEBOOK_AUTHORIZE_URL: `${facebook.server.url}/v26.0/dialog/oauth`,
        HERALD_FACEBOOK_API_URL: facebook.server.url,
        HERALD_TELEGRAM_API_URL: telegram.server.url,
        HERALD_DISCORD_API_URL: discord.server.url,
        HERALD_BLUESKY_SERVICE_URL: bluesky.entryway.url,
        // The fake's PDS is another loopback port, which only the operator switch lets through.
        HERALD_BLUESKY_ALLOW_PRIVATE: "true"
      }
    })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await Promise.all([
      telegram?.server.close(),
      discord?.server.close(),
      bluesky?.close(),
      x?.close(),
      facebook?.close()
    ])
  })

  /** Follows the link as the browser would: X's consent, then the redirect to this server's callback. */
  const followLink = async (url: string) => {
    const back = new URL(x.authorize(url))
    expect(back.origin).toBe(publicUrl)
    return server.request("GET", back.pathname + back.search, { key: null })
  }

  it.skipIf(skip)(
    "connect-credential: telegram, discord and bluesky validated live; resubmitting updates in place",
    async () => {
      const first = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "telegram", bot_token: TelegramFake.botToken, channel: "@herald_news" }
      })
      expect(first.status).toBe(200)
      const data = body<{ platform: string; connected: boolean; account: AccountBody; instructions: string }>(first)
        .data!
      expect(data).toMatchObject({
        platform: "telegram",
        connected: true,
        account: {
          platform: "telegram",
          account_name: "Herald News",
          is_active: true,
          health: { status: "healthy", can_post: true, needs_reconnection: false }
        }
      })
      expect(typeof data.instructions).toBe("string")
      const again = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "telegram", bot_token: TelegramFake.botToken, channel: "herald_news" }
      })
      expect(body<{ account: AccountBody }>(again).data!.account.id).toBe(data.account.id)

      const hook = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "discord", webhook_url: DiscordFake.webhookUrl }
      })
      expect(hook.status).toBe(200)
      expect(body<{ account: AccountBody }>(hook).data!.account.account_name).toBe("Herald Announcements")
      const sky = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "bluesky", handle: "herald.bsky.social", app_password: BlueskyFake.appPassword }
      })
      expect(sky.status).toBe(200)
      expect(body<{ account: AccountBody }>(sky).data!.account.account_name).toBe("herald.bsky.social")

      const list = body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
      expect(list.accounts.filter((a) => a.platform === "telegram")).toHaveLength(1)

      // At rest the store holds no plaintext secret: the raw rows, and on SQLite the file itself.
      const raw = await server.withStore(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ platform: string; credentials: string }>`SELECT platform, credentials FROM social_accounts`
        )
      )
      expect(raw.length).toBeGreaterThanOrEqual(3)
      for (const row of raw) {
        expect(row.credentials.startsWith("hc1.")).toBe(true)
        for (const secret of [TelegramFake.botToken, DiscordFake.hookToken, BlueskyFake.appPassword]) {
          expect(row.credentials).not.toContain(secret)
        }
      }
      if (server.label === "sqlite") {
        const dataDir = server.storeArgs[server.storeArgs.indexOf("--data-dir") + 1]!
        const keyFile = path.join(dataDir, "secret.key")
        expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600)
        for (const file of ["herald.db", "herald.db-wal"]) {
          const full = path.join(dataDir, file)
          if (!fs.existsSync(full)) {
            continue
          }
          const bytes = fs.readFileSync(full)
          expect(bytes.includes(Buffer.from(TelegramFake.botToken))).toBe(false)
          expect(bytes.includes(Buffer.from(DiscordFake.hookToken))).toBe(false)
          expect(bytes.includes(Buffer.from(BlueskyFake.appPassword))).toBe(false)
        }
      }
    }
  )

  it.skipIf(skip)(
    "connect-credential: a Telegram chat id as a JSON number or a string; every field sent comes back by name, secrets redacted",
    async () => {
      const asNumber = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "telegram", bot_token: TelegramFake.botToken, channel: -1009876543210 }
      })
      expect(asNumber.status, asNumber.text).toBe(200)
      const numbered = body<{ account: AccountBody } & Record<string, unknown>>(asNumber).data!
      expect(numbered).toMatchObject({
        platform: "telegram",
        connected: true,
        account: { platform: "telegram", account_name: "Private Desk" },
        bot_token: "[redacted]",
        channel: -1009876543210
      })
      const asString = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "telegram", bot_token: TelegramFake.botToken, channel: "-1009876543210" }
      })
      expect(asString.status, asString.text).toBe(200)
      const stringed = body<{ account: AccountBody } & Record<string, unknown>>(asString).data!
      expect([stringed.account.id, stringed["channel"]]).toEqual([numbered.account.id, "-1009876543210"])
      for (const channel of [1.5, true, null]) {
        const bad = await server.request("POST", "/api/v1/accounts/connect-credential", {
          body: { platform: "telegram", bot_token: TelegramFake.botToken, channel }
        })
        expect([String(channel), bad.status, body(bad).error!.code]).toEqual([String(channel), 400, "validation_error"])
      }

      const hook = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "discord", webhook_url: DiscordFake.webhookUrl }
      })
      expect(body<Record<string, unknown>>(hook).data).toMatchObject({ platform: "discord", webhook_url: "[redacted]" })
      const sky = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "bluesky", handle: "herald.bsky.social", app_password: BlueskyFake.appPassword }
      })
      expect(body<Record<string, unknown>>(sky).data).toMatchObject({
        platform: "bluesky",
        handle: "herald.bsky.social",
        app_password: "[redacted]"
      })
      for (
        const [res, secret] of [
          [asNumber, TelegramFake.botToken],
          [asString, TelegramFake.botToken],
          [hook, DiscordFake.hookToken],
          [sky, BlueskyFake.appPassword]
        ] as const
      ) {
        expect(res.text).not.toContain(secret)
      }
      expect(server.output()).not.toContain(TelegramFake.botToken)
    }
  )

  it.skipIf(skip)(
    "connect-credential refusals: 400 auth_failed with the platform's reason, validation_error for bad input",
    async () => {
      const refused = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: {
          platform: "telegram",
          bot_token: "7012345678:AAH3kq-Zx8vJ_9LmN0pQrStUvWxYz000000",
          channel: "@herald_news"
        }
      })
      expect(refused.status).toBe(400)
      expect(body(refused).error).toEqual({ code: "auth_failed", message: "Telegram: Unauthorized", retryable: false })
      expect(refused.text).not.toContain("AAH3kq-Zx8vJ_9LmN0pQrStUvWxYz000000")
      const wrongPlatform = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "x", bot_token: "t" }
      })
      expect(wrongPlatform.status).toBe(400)
      expect(body(wrongPlatform).error!.code).toBe("validation_error")
      const missing = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "discord" }
      })
      expect(missing.status).toBe(400)
      expect(body(missing).error).toMatchObject({
        code: "validation_error",
        details: { validation_errors: [{ path: "webhook_url" }] }
      })
    }
  )

  it.skipIf(skip)(
    "a credential of the wrong type is never quoted back: object, array, number or too long",
    async () => {
      const secret = "7012345678:AAH3kq-Zx8vJ_SECRET_VALUE_0000000"
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ["bot_token", { platform: "telegram", bot_token: { token: secret }, channel: "@herald_news" }],
        ["bot_token", { platform: "telegram", bot_token: [secret], channel: "@herald_news" }],
        ["bot_token", { platform: "telegram", bot_token: secret.repeat(100), channel: "@herald_news" }],
        ["app_password", { platform: "bluesky", handle: "herald.bsky.social", app_password: { value: secret } }],
        ["app_password", { platform: "bluesky", handle: "herald.bsky.social", app_password: [secret, 1] }],
        ["webhook_url", { platform: "discord", webhook_url: { url: `https://discord.com/api/webhooks/1/${secret}` } }]
      ]
      for (const [field, sent] of cases) {
        const res = await server.request("POST", "/api/v1/accounts/connect-credential", { body: sent })
        expect([field, res.status], res.text).toEqual([field, 400])
        const error = body(res).error!
        expect(error.code).toBe("validation_error")
        const issues = error.details?.["validation_errors"] as ReadonlyArray<{ path: string; message: string }>
        expect(issues.length).toBeGreaterThan(0)
        expect(issues.map((i) => i.path)).toEqual(issues.map(() => field))
        expect(res.text).not.toContain("SECRET_VALUE")
      }
      // A body that is not an object at all (it could be anything) is not quoted either.
      const whole = await server.request("POST", "/api/v1/accounts/connect-credential", { body: [secret] })
      expect(whole.status).toBe(400)
      expect(whole.text).not.toContain("SECRET_VALUE")
      // Other fields still say what they got, so a caller can see the mistake.
      const platform = await server.request("POST", "/api/v1/accounts/connect-credential", {
        body: { platform: "myspace" }
      })
      expect(platform.text).toContain("myspace")
      expect(server.output()).not.toContain("SECRET_VALUE")
    }
  )

  it.skipIf(skip)(
    "connect-link for X, followed through X's consent to the callback page: the account appears",
    async () => {
      const response = await server.request("POST", "/api/v1/accounts/connect-link", { body: { platform: "x" } })
      expect(response.status).toBe(200)
      const link = body<{ platform: string; url: string; expires_in_seconds: number; instructions: string }>(response)
        .data!
      expect(link.platform).toBe("x")
      expect(link.expires_in_seconds).toBe(600)
      expect(link.instructions).toContain("GET /accounts")
      const url = new URL(link.url)
      expect(url.origin).toBe(x.server.url)
      expect(url.searchParams.get("redirect_uri")).toBe(`${publicUrl}/oauth/callback/x`)
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")

      const page = await followLink(link.url)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.text).toContain("@herald_app on x is now connected")
      const list = body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
      expect(list.accounts.find((a) => a.platform === "x")).toMatchObject({
        account_name: "@herald_app",
        health: { status: "healthy" }
      })
    }
  )

  it.skipIf(skip)(
    "connect-link for facebook: one login granting three Pages connects three accounts, each with account.connected",
    async () => {
      // Room for three more accounts beside those connected so far (a grant past the allowance connects none).
      expect((await server.cli(["orgs", "set-plan", server.orgId, "scale"])).code).toBe(0)
      const response = await server.request("POST", "/api/v1/accounts/connect-link", { body: { platform: "facebook" } })
      expect(response.status).toBe(200)
      const link = body<{ platform: string; url: string; expires_in_seconds: number; instructions: string }>(response)
        .data!
      expect(link).toMatchObject({ platform: "facebook", expires_in_seconds: 600 })
      expect(link.instructions).toContain("Each Page becomes its own account")
      const url = new URL(link.url)
      expect(url.origin + url.pathname).toBe(`${facebook.server.url}/v26.0/dialog/oauth`)
      expect(url.searchParams.get("scope")).toBe(
        "pages_show_list,pages_manage_posts,pages_read_engagement,pages_manage_engagement"
      )
      expect(url.searchParams.get("redirect_uri")).toBe(`${publicUrl}/oauth/callback/facebook`)
      expect(url.searchParams.has("code_challenge")).toBe(false)

      facebook.pageSize = 2
      const back = new URL(facebook.authorize(link.url))
      expect(back.origin + back.pathname).toBe(`${publicUrl}/oauth/callback/facebook`)
      const page = await server.request("GET", back.pathname + back.search, { key: null })
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.text).toContain("Accounts connected")
      for (const name of ["Herald News", "Herald Sports", "Herald Weather"]) {
        expect(page.text).toContain(`${name} on facebook is now connected.`)
      }
      expect(page.text).not.toContain("Herald Archive")

      const list = body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
      const pages = list.accounts.filter((a) => a.platform === "facebook")
      expect(pages.map((a) => a.account_name).sort()).toEqual(["Herald News", "Herald Sports", "Herald Weather"])
      for (const account of pages) {
        expect(account.health).toEqual({ status: "healthy", can_post: true, needs_reconnection: false })
      }
      const events = await server.withStore(
        Effect.flatMap(EventStore, (store) => store.list(OrganizationId.make(server.orgId)))
      )
      const connected = events.filter((e) => e.type === "account.connected" && e.data["platform"] === "facebook")
      expect(connected.map((e) => e.data["account_id"]).sort()).toEqual(pages.map((a) => a.id).sort())
      expect(connected.every((e) => e.data["reconnected"] === false)).toBe(true)
      // Page tokens are sealed at rest.
      const raw = await server.withStore(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ credentials: string }>`SELECT credentials FROM social_accounts WHERE platform = 'facebook'`
        )
      )
      for (const token of facebook.pageTokens.keys()) {
        for (const row of raw) expect(row.credentials).not.toContain(token)
      }

      // A login that grants no Page: the callback page says so.
      facebook.selectPages = []
      const again = body<{ url: string }>(
        await server.request("POST", "/api/v1/accounts/connect-link", { body: { platform: "facebook" } })
      ).data!
      const none = new URL(facebook.authorize(again.url))
      const refused = await server.request("GET", none.pathname + none.search, { key: null })
      expect(refused.status).toBe(400)
      expect(refused.text).toContain("The account could not be connected")
      expect(refused.text).toContain("granted no Facebook Page")
      facebook.selectPages = undefined
    }
  )

  it.skipIf(skip)("the callback refuses an altered or incomplete state with an HTML error page (400)", async () => {
    const link = body<{ url: string }>(
      await server.request("POST", "/api/v1/accounts/connect-link", { body: { platform: "x" } })
    ).data!
    const back = new URL(x.authorize(link.url))
    const state = back.searchParams.get("state")!
    const [payload, mac] = state.split(".") as [string, string]
    const decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
    const forged = `${
      Buffer.from(JSON.stringify({ ...decoded, e: (decoded.e as number) + 86_400 })).toString("base64url")
    }.${mac}`
    back.searchParams.set("state", forged)
    const tampered = await server.request("GET", back.pathname + back.search, { key: null })
    expect(tampered.status).toBe(400)
    expect(tampered.headers.get("content-type")).toContain("text/html")
    expect(tampered.text).toContain("This link is not valid")
    const exchangesBefore = x.counts.exchanges
    const incomplete = await server.request("GET", "/oauth/callback/x?code=abc", { key: null })
    expect(incomplete.status).toBe(400)
    expect(incomplete.text).toContain("This link is incomplete")
    const unknown = await server.request("GET", "/oauth/callback/myspace?code=abc&state=s.t", { key: null })
    expect(unknown.status).toBe(400)
    expect(unknown.text).toContain("Unknown platform")
    expect(x.counts.exchanges).toBe(exchangesBefore)
  })

  it.skipIf(skip)("connect-link: an unconfigured platform is 400 misconfig; a read-only key is 403", async () => {
    const linkedin = await server.request("POST", "/api/v1/accounts/connect-link", { body: { platform: "linkedin" } })
    expect(linkedin.status).toBe(400)
    expect(body(linkedin).error!.code).toBe("misconfig")
    expect(body(linkedin).error!.message).toContain("HERALD_LINKEDIN_CLIENT_ID")
    const instagram = await server.request("POST", "/api/v1/accounts/connect-link", { body: { platform: "instagram" } })
    expect(instagram.status).toBe(400)
    expect(body(instagram).error!.code).toBe("misconfig")
    expect(body(instagram).error!.message).toContain("HERALD_INSTAGRAM_CLIENT_ID and HERALD_INSTAGRAM_CLIENT_SECRET")
    expect(body(instagram).error!.message).not.toContain("not available")
    const credentialPlatform = await server.request("POST", "/api/v1/accounts/connect-link", {
      body: { platform: "telegram" }
    })
    expect(body(credentialPlatform).error!.code).toBe("validation_error")
    const readOnly = await server.createKey({ scopes: ["read"] })
    const forbidden = await server.request("POST", "/api/v1/accounts/connect-link", {
      key: readOnly,
      body: { platform: "x" }
    })
    expect(forbidden.status).toBe(403)
    expect(body(forbidden).error!.code).toBe("insufficient_scope")
  })

  it.skipIf(skip)(
    "reconnect: 400 for a healthy account and bad ids, 404 for unknown; a broken X account gets a link that repairs it in place",
    async () => {
      const accounts =
        body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
          .accounts
      const xAccount = accounts.find((a) => a.platform === "x")!
      const healthy = await server.request("POST", `/api/v1/accounts/${xAccount.id}/reconnect`)
      expect(healthy.status).toBe(400)
      expect(body(healthy).error!.code).toBe("validation_error")
      expect((await server.request("POST", "/api/v1/accounts/abc/reconnect")).status).toBe(400)
      expect(body(await server.request("POST", "/api/v1/accounts/abc/reconnect")).error!.code).toBe("invalid_id")
      expect((await server.request("POST", "/api/v1/accounts/999999/reconnect")).status).toBe(404)

      await server.withStore(Effect.gen(function*() {
        const store = yield* AccountStore
        const found = Option.getOrThrow(
          yield* store.findById(OrganizationId.make(server.orgId), AccountId.make(xAccount.id))
        )
        yield* store.update(new SocialAccount({ ...found, needsReconnection: true }))
      }))
      const broken = body<AccountBody>(await server.request("GET", `/api/v1/accounts/${xAccount.id}`)).data!
      expect(broken.health).toEqual({ status: "broken", can_post: false, needs_reconnection: true })
      const response = await server.request("POST", `/api/v1/accounts/${xAccount.id}/reconnect`)
      expect(response.status).toBe(200)
      const link = body<
        { account_id: number; platform: string; account_name: string; url: string; expires_in_seconds: number }
      >(
        response
      ).data!
      expect(link).toMatchObject({
        account_id: xAccount.id,
        platform: "x",
        account_name: "@herald_app",
        expires_in_seconds: 600
      })
      const page = await followLink(link.url)
      expect(page.status).toBe(200)
      expect(page.text).toContain("is reconnected")
      const repaired = body<AccountBody>(await server.request("GET", `/api/v1/accounts/${xAccount.id}`)).data!
      expect(repaired.health).toEqual({ status: "healthy", can_post: true, needs_reconnection: false })
    }
  )

  it.skipIf(skip)("DELETE /accounts/{id} disconnects; afterwards the account is 404", async () => {
    const accounts =
      body<{ accounts: ReadonlyArray<AccountBody> }>(await server.request("GET", "/api/v1/accounts")).data!
        .accounts
    const target = accounts.find((a) => a.platform === "discord")!
    const response = await server.request("DELETE", `/api/v1/accounts/${target.id}`)
    expect(response.status).toBe(200)
    expect(body(response).data).toEqual({
      account_id: target.id,
      platform: "discord",
      account_name: "Herald Announcements",
      disconnected: true
    })
    expect((await server.request("GET", `/api/v1/accounts/${target.id}`)).status).toBe(404)
    expect((await server.request("DELETE", `/api/v1/accounts/${target.id}`)).status).toBe(404)
    expect(body(await server.request("DELETE", "/api/v1/accounts/x1")).error!.code).toBe("invalid_id")
  })
})
