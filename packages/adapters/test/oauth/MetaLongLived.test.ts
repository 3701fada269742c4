/**
 * Instagram (Instagram Login) and Threads providers against loopback fakes: code exchange, long-lived
 * exchange, identity, refused codes, and renewal of the long-lived token.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as Instagram from "../../src/oauth/Instagram.js"
import * as Threads from "../../src/oauth/Threads.js"
import * as InstagramFake from "./fakes/InstagramOAuthFake.js"
import { longLivedSeconds } from "./fakes/LongLivedFake.js"
import * as ThreadsFake from "./fakes/ThreadsOAuthFake.js"

const day = 86_400_000
const redirectUri = (platform: string) => `https://herald.example.com/oauth/callback/${platform}`

const instagramFake = Effect.acquireRelease(
  Effect.promise(() => InstagramFake.start()),
  (f) => Effect.promise(() => f.close())
)
const threadsFake = Effect.acquireRelease(
  Effect.promise(() => ThreadsFake.start()),
  (f) => Effect.promise(() => f.close())
)

const instagram = (f: InstagramFake.InstagramFake) =>
  Instagram.make({
    clientId: f.clientId,
    clientSecret: Redacted.make(f.clientSecret),
    authorizeUrl: `${f.server.url}/oauth/authorize`,
    oauthUrl: f.server.url,
    apiUrl: f.server.url
  })

const threads = (f: ThreadsFake.ThreadsFake) =>
  Threads.make({
    clientId: f.clientId,
    clientSecret: Redacted.make(f.clientSecret),
    authorizeUrl: `${f.server.url}/oauth/authorize`,
    apiUrl: f.server.url
  })

describe("Instagram OAuth provider (Instagram Login)", () => {
  it.effect("authorize URL: www.instagram.com, the instagram_business scopes comma-separated, no PKCE", () =>
    Effect.gen(function*() {
      const ig = yield* Instagram.make({ clientId: "ig-app", clientSecret: Redacted.make("secret-1") })
      const url = new URL(ig.authorizeUrl({ state: "s.t", redirectUri: redirectUri("instagram"), codeChallenge: "ch" }))
      expect(url.origin + url.pathname).toBe("https://www.instagram.com/oauth/authorize")
      expect(Object.fromEntries(url.searchParams)).toEqual({
        client_id: "ig-app",
        redirect_uri: redirectUri("instagram"),
        response_type: "code",
        scope: "instagram_business_basic,instagram_business_content_publish,instagram_business_manage_comments," +
          "instagram_business_manage_insights",
        state: "s.t"
      })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("code exchange, long-lived token, identity from /me (the id kept exact as a string); flat or data[] answers", () =>
    Effect.gen(function*() {
      const f = yield* instagramFake
      const ig = yield* instagram(f)
      for (const nested of [false, true]) {
        f.nested = nested
        const back = new URL(
          f.authorize(ig.authorizeUrl({ state: "st", redirectUri: redirectUri("instagram"), codeChallenge: "c" }))
        )
        const [identity, ...more] = yield* ig.exchangeCode({
          code: back.searchParams.get("code")!,
          redirectUri: redirectUri("instagram"),
          codeVerifier: "v"
        })
        expect(more).toEqual([])
        expect(identity).toMatchObject({
          platformAccountId: "17841400000000001",
          accountName: "@herald.gallery",
          avatarUrl: "https://scontent.cdninstagram.example/herald.jpg"
        })
        // The long-lived token is stored; the connection lasts as long as it does (TestClock starts at 0).
        expect(f.tokens.get(identity.credentials.access_token!)).toEqual({
          userId: "17841400000000001",
          longLived: true
        })
        expect(Option.map(identity.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(
          Option.some(longLivedSeconds * 1000)
        )
        expect(identity.credentials).toMatchObject({
          user_id: "17841400000000001",
          username: "herald.gallery",
          account_type: "BUSINESS",
          expires_at: String(longLivedSeconds * 1000),
          refresh_at: String(longLivedSeconds * 1000 - 10 * day)
        })
        expect(identity.credentials.refresh_token).toBeUndefined()
      }
      const form = f.server.requests.find((r) => r.method === "POST" && r.path === "/oauth/access_token")!.form!
      expect(form.get("grant_type")).toBe("authorization_code")
      expect(form.get("redirect_uri")).toBe(redirectUri("instagram"))
      expect(form.get("client_secret")).toBe(f.clientSecret)
      const exchange = f.server.requests.find((r) => r.path === "/access_token")!
      expect(exchange.query.get("grant_type")).toBe("ig_exchange_token")
      expect(f.server.requests.find((r) => r.path === "/v26.0/me")!.query.get("fields"))
        .toBe("user_id,username,name,account_type,profile_picture_url")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a bad code is auth with Instagram's reason, the code and the client secret scrubbed", () =>
    Effect.gen(function*() {
      const f = yield* instagramFake
      f.quoteRequest = true
      const ig = yield* instagram(f)
      const code = "AQBad-code-9876543210"
      const refused = yield* Effect.flip(
        ig.exchangeCode({ code, redirectUri: redirectUri("instagram"), codeVerifier: "v" })
      )
      expect(refused.kind).toBe("auth")
      expect(refused.message).toContain("Instagram: Invalid authorization code")
      expect(refused.message).toContain("[redacted]")
      expect(refused.message).not.toContain(code)
      expect(refused.message).not.toContain(f.clientSecret)
      expect(f.counts.longLivedExchanges).toBe(0)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("refresh renews the long-lived token and extends the connection; a dead token is auth", () =>
    Effect.gen(function*() {
      const f = yield* instagramFake
      const ig = yield* instagram(f)
      const back = new URL(
        f.authorize(ig.authorizeUrl({ state: "st", redirectUri: redirectUri("instagram"), codeChallenge: "c" }))
      )
      const [first] = yield* ig.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri: redirectUri("instagram"),
        codeVerifier: "v"
      })
      yield* TestClock.adjust("50 days")
      const renewed = yield* ig.refresh!(Redacted.make(first.credentials))
      expect(renewed.credentials.access_token).not.toBe(first.credentials.access_token)
      expect(f.tokens.get(renewed.credentials.access_token!)?.longLived).toBe(true)
      expect(renewed.credentials).toMatchObject({
        user_id: "17841400000000001",
        username: "herald.gallery",
        account_type: "BUSINESS",
        expires_at: String(50 * day + longLivedSeconds * 1000),
        refresh_at: String(50 * day + longLivedSeconds * 1000 - 10 * day)
      })
      expect(Option.map(renewed.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(
        Option.some(50 * day + longLivedSeconds * 1000)
      )
      const call = f.server.requests.find((r) => r.path === "/refresh_access_token")!
      expect(call.query.get("grant_type")).toBe("ig_refresh_token")
      f.revoke("17841400000000001")
      const dead = yield* Effect.flip(ig.refresh!(Redacted.make(renewed.credentials)))
      expect(dead.kind).toBe("auth")
      expect(dead.message).toBe("Instagram: Invalid OAuth access token - Cannot parse access token (code 190)")
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})

describe("Threads OAuth provider", () => {
  it.effect("authorize URL: threads.net, the threads scopes comma-separated, no PKCE", () =>
    Effect.gen(function*() {
      const th = yield* Threads.make({ clientId: "th-app", clientSecret: Redacted.make("secret-1") })
      const url = new URL(th.authorizeUrl({ state: "s.t", redirectUri: redirectUri("threads"), codeChallenge: "ch" }))
      expect(url.origin + url.pathname).toBe("https://threads.net/oauth/authorize")
      expect(Object.fromEntries(url.searchParams)).toEqual({
        client_id: "th-app",
        redirect_uri: redirectUri("threads"),
        response_type: "code",
        scope: "threads_basic,threads_content_publish,threads_manage_replies,threads_manage_insights",
        state: "s.t"
      })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("code exchange, th_exchange_token, identity from /v1.0/me; the long-lived token is what is stored", () =>
    Effect.gen(function*() {
      const f = yield* threadsFake
      const th = yield* threads(f)
      const back = new URL(
        f.authorize(th.authorizeUrl({ state: "st", redirectUri: redirectUri("threads"), codeChallenge: "c" }))
      )
      const identities = yield* th.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri: redirectUri("threads"),
        codeVerifier: "v"
      })
      expect(identities).toHaveLength(1)
      const [identity] = identities
      expect(identity).toMatchObject({
        platformAccountId: "25990011",
        accountName: "@herald.threads",
        avatarUrl: "https://scontent.threads.example/h.jpg"
      })
      expect(f.tokens.get(identity.credentials.access_token!)).toEqual({ userId: "25990011", longLived: true })
      expect(identity.credentials).toMatchObject({
        user_id: "25990011",
        username: "herald.threads",
        expires_at: String(longLivedSeconds * 1000),
        refresh_at: String(longLivedSeconds * 1000 - 10 * day)
      })
      expect(Option.map(identity.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(Option.some(longLivedSeconds * 1000))
      expect(f.server.requests.find((r) => r.path === "/access_token")!.query.get("grant_type")).toBe(
        "th_exchange_token"
      )
      expect(f.server.requests.find((r) => r.path === "/v1.0/me")!.query.get("fields"))
        .toBe("id,username,name,threads_profile_picture_url")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a bad code is auth with Meta's reason and code, scrubbed", () =>
    Effect.gen(function*() {
      const f = yield* threadsFake
      f.quoteRequest = true
      const th = yield* threads(f)
      const code = "AQThreads-bad-code-12345"
      const refused = yield* Effect.flip(
        th.exchangeCode({ code, redirectUri: redirectUri("threads"), codeVerifier: "v" })
      )
      expect(refused.kind).toBe("auth")
      expect(refused.message).toContain("Threads: Invalid verification code format.")
      expect(refused.message).toContain("(code 100, subcode 36007)")
      expect(refused.message).not.toContain(code)
      expect(refused.message).not.toContain(f.clientSecret)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("refresh with th_refresh_token extends the connection; the identity is kept", () =>
    Effect.gen(function*() {
      const f = yield* threadsFake
      const th = yield* threads(f)
      const back = new URL(
        f.authorize(th.authorizeUrl({ state: "st", redirectUri: redirectUri("threads"), codeChallenge: "c" }))
      )
      const [first] = yield* th.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri: redirectUri("threads"),
        codeVerifier: "v"
      })
      yield* TestClock.adjust("50 days")
      const renewed = yield* th.refresh!(Redacted.make(first.credentials))
      expect(renewed.platformAccountId).toBe("25990011")
      expect(renewed.credentials.access_token).not.toBe(first.credentials.access_token)
      expect(renewed.credentials).toMatchObject({ user_id: "25990011", username: "herald.threads" })
      expect(Option.map(renewed.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(
        Option.some(50 * day + longLivedSeconds * 1000)
      )
      expect(f.server.requests.find((r) => r.path === "/refresh_access_token")!.query.get("grant_type")).toBe(
        "th_refresh_token"
      )
      // Nothing stored to renew with: auth, without calling Threads.
      const before = f.counts.refreshes
      expect((yield* Effect.flip(th.refresh!(Redacted.make({ user_id: "25990011" })))).kind).toBe("auth")
      expect(f.counts.refreshes).toBe(before)
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
