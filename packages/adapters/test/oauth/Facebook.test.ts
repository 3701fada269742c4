/** The Facebook Pages provider against a loopback fake of Facebook Login and the Graph API. */
import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Facebook from "../../src/oauth/Facebook.js"
import * as FacebookFake from "./fakes/FacebookOAuthFake.js"

const fake = Effect.acquireRelease(Effect.promise(() => FacebookFake.start()), (f) => Effect.promise(() => f.close()))

const provider = (f: FacebookFake.FacebookFake, secret = f.clientSecret) =>
  Facebook.make({
    clientId: f.clientId,
    clientSecret: Redacted.make(secret),
    authorizeUrl: `${f.server.url}/v26.0/dialog/oauth`,
    apiUrl: f.server.url
  })

const redirectUri = "https://herald.example.com/oauth/callback/facebook"

/** Runs the dialog and returns the code Facebook sends back. */
const consent = (f: FacebookFake.FacebookFake, url: string) => new URL(f.authorize(url)).searchParams.get("code")!

describe("Facebook OAuth provider", () => {
  it.effect("authorize URL: the versioned dialog, comma-separated Page scopes, state and redirect URI, no PKCE", () =>
    Effect.gen(function*() {
      const fb = yield* Facebook.make({ clientId: "app-1", clientSecret: Redacted.make("s3cret-value") })
      const url = new URL(fb.authorizeUrl({ state: "s.t", redirectUri, codeChallenge: "challenge" }))
      expect(url.origin + url.pathname).toBe("https://www.facebook.com/v26.0/dialog/oauth")
      expect(Object.fromEntries(url.searchParams)).toEqual({
        client_id: "app-1",
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "pages_show_list,pages_manage_posts,pages_read_engagement,pages_manage_engagement",
        state: "s.t"
      })
      expect(fb.refresh).toBeUndefined()
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("one login grants several Pages: code, long-lived user token, /me/accounts across cursors; each Page with its never-expiring token", () =>
    Effect.gen(function*() {
      const f = yield* fake
      f.pageSize = 2
      const fb = yield* provider(f)
      const code = consent(f, fb.authorizeUrl({ state: "st", redirectUri, codeChallenge: "c" }))
      const identities = yield* fb.exchangeCode({ code, redirectUri, codeVerifier: "v" })
      // Page 504 is listed without a token (the person's role does not allow posting): left out.
      expect(identities.map((i) => [i.platformAccountId, i.accountName, i.avatarUrl])).toEqual([
        ["501", "Herald News", "https://scontent.example/501.jpg"],
        ["502", "Herald Sports", "https://scontent.example/502.jpg"],
        ["503", "Herald Weather", "https://scontent.example/503.jpg"]
      ])
      for (const identity of identities) {
        expect(identity.tokenExpiresAt).toEqual(Option.none())
        expect(identity.credentials.page_id).toBe(identity.platformAccountId)
        expect(f.pageTokens.get(identity.credentials.access_token!)).toEqual({
          pageId: identity.platformAccountId,
          expires: false
        })
        expect(identity.credentials.expires_at).toBeUndefined()
      }
      expect(identities[0].credentials.username).toBe("heraldnews")
      expect(f.counts).toEqual({ codeExchanges: 1, longLivedExchanges: 1, pageReads: 2 })
      const reads = f.server.requests.filter((r) => r.path === "/v26.0/me/accounts")
      expect(reads.map((r) => f.userTokens.get(r.query.get("access_token")!)?.longLived)).toEqual([true, true])
      expect(reads[0]!.query.get("fields")).toBe("id,name,username,access_token,picture.type(large)")
      const exchange = f.server.requests.find((r) => r.path === "/v26.0/oauth/access_token" && r.query.has("code"))!
      expect(exchange.method).toBe("GET")
      expect(exchange.query.get("redirect_uri")).toBe(redirectUri)
      expect(exchange.query.get("client_secret")).toBe(f.clientSecret)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a login that grants no Page is refused, saying what to do", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const fb = yield* provider(f)
      f.selectPages = []
      const none = yield* Effect.flip(fb.exchangeCode({
        code: consent(f, fb.authorizeUrl({ state: "st", redirectUri, codeChallenge: "c" })),
        redirectUri,
        codeVerifier: "v"
      }))
      expect(none.kind).toBe("auth")
      expect(none.message).toContain("granted no Facebook Page")
      expect(none.message).toContain("select the Pages to connect")
      f.selectPages = undefined
      f.signedIn = "10002"
      const noPages = yield* Effect.flip(fb.exchangeCode({
        code: consent(f, fb.authorizeUrl({ state: "st", redirectUri, codeChallenge: "c" })),
        redirectUri,
        codeVerifier: "v"
      }))
      expect(noPages.message).toContain("granted no Facebook Page")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a bad code and a wrong app secret are auth, with Meta's reason and every secret scrubbed", () =>
    Effect.gen(function*() {
      const f = yield* fake
      f.quoteRequest = true
      const fb = yield* provider(f)
      const badCode = "AQDnot-a-real-code-0123456789"
      const refused = yield* Effect.flip(fb.exchangeCode({ code: badCode, redirectUri, codeVerifier: "v" }))
      expect(refused.kind).toBe("auth")
      expect(refused.message).toContain("Facebook: Invalid verification code format.")
      expect(refused.message).toContain("(code 100, subcode 36007)")
      // The fake quoted both; neither survives.
      expect(refused.message).toContain("[redacted]")
      expect(refused.message).not.toContain(badCode)
      expect(refused.message).not.toContain(f.clientSecret)

      const wrong = yield* provider(f, "wrong-secret-abcdef")
      const code = consent(f, wrong.authorizeUrl({ state: "st", redirectUri, codeChallenge: "c" }))
      const badSecret = yield* Effect.flip(wrong.exchangeCode({ code, redirectUri, codeVerifier: "v" }))
      // Meta answers code 1 here, which elsewhere means "retry"; a wrong secret never heals.
      expect(badSecret.kind).toBe("auth")
      expect(badSecret.message).toContain("Error validating client secret.")
      expect(badSecret.message).not.toContain("wrong-secret-abcdef")
      expect(badSecret.message).not.toContain(code)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("an unreachable Graph API is transient", () =>
    Effect.gen(function*() {
      const fb = yield* Facebook.make({
        clientId: "a",
        clientSecret: Redacted.make("secret-1"),
        apiUrl: "http://127.0.0.1:9"
      })
      const error = yield* Effect.flip(fb.exchangeCode({ code: "code-1", redirectUri, codeVerifier: "v" }))
      expect(error.kind).toBe("transient")
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
