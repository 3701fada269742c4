/** The YouTube provider (Google OAuth 2.0) against a loopback fake of Google's token endpoint and the Data API. */
import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as YouTube from "../../src/oauth/YouTube.js"
import * as YouTubeFake from "./fakes/YouTubeOAuthFake.js"

const fake = Effect.acquireRelease(Effect.promise(() => YouTubeFake.start()), (f) => Effect.promise(() => f.close()))

const provider = (f: YouTubeFake.YouTubeFake) =>
  YouTube.make({
    clientId: YouTubeFake.clientId,
    clientSecret: Redacted.make(YouTubeFake.clientSecret),
    authorizeUrl: `${f.server.url}/o/oauth2/v2/auth`,
    tokenUrl: `${f.server.url}/token`,
    apiUrl: f.server.url
  })

const verifier = "y".repeat(43) + "0123456789abcdef0123"
const challenge = createHash("sha256").update(verifier).digest("base64url")
const redirectUri = "https://herald.example.com/oauth/callback/youtube"

describe("YouTube OAuth provider", () => {
  it.effect("authorize URL: Google's endpoint, PKCE S256, offline access with consent, the three YouTube scopes", () =>
    Effect.gen(function*() {
      const yt = yield* YouTube.make({ clientId: "cid", clientSecret: Redacted.make("csecret") })
      const url = new URL(yt.authorizeUrl({ state: "s.t", redirectUri, codeChallenge: challenge }))
      expect(url.origin + url.pathname).toBe("https://accounts.google.com/o/oauth2/v2/auth")
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: "code",
        client_id: "cid",
        redirect_uri: redirectUri,
        scope: "https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly " +
          "https://www.googleapis.com/auth/youtube.force-ssl",
        state: "s.t",
        code_challenge: challenge,
        code_challenge_method: "S256",
        access_type: "offline",
        prompt: "consent"
      })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("exchanges the code with the verifier, reads the channel; the refresh token does not expire, so neither does the connection", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const yt = yield* provider(f)
      const back = new URL(f.authorize(yt.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
      const identities = yield* yt.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri,
        codeVerifier: verifier
      })
      expect(identities).toHaveLength(1)
      const [identity] = identities
      expect(identity).toMatchObject({
        platformAccountId: "UCherald0000000000000001",
        accountName: "Herald TV",
        avatarUrl: "https://yt3.example/h.jpg"
      })
      expect(identity.tokenExpiresAt).toEqual(Option.none())
      expect(identity.credentials.expires_at).toBe(String(3599 * 1000))
      expect(f.accessTokens.get(identity.credentials.access_token!)).toBe("g-1")
      expect(f.refreshTokens.get(identity.credentials.refresh_token!)).toBe("g-1")
      const form = f.server.requests.find((r) => r.path === "/token")!.form!
      expect(form.get("code_verifier")).toBe(verifier)
      expect(form.get("client_secret")).toBe(YouTubeFake.clientSecret)
      const channels = f.server.requests.find((r) => r.path === "/youtube/v3/channels")!
      expect(channels.query.get("mine")).toBe("true")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a wrong verifier is refused as auth, without echoing the code", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const yt = yield* provider(f)
      const code = new URL(f.authorize(yt.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
        .searchParams.get("code")!
      const error = yield* Effect.flip(yt.exchangeCode({ code, redirectUri, codeVerifier: "z".repeat(64) }))
      expect(error.kind).toBe("auth")
      expect(error.message).toBe("YouTube: invalid_grant: Invalid code verifier.")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("a Google account without a channel is refused with youtubeSignupRequired", () =>
    Effect.gen(function*() {
      const f = yield* fake
      f.signedIn = "g-2"
      const yt = yield* provider(f)
      const code = new URL(f.authorize(yt.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
        .searchParams.get("code")!
      const error = yield* Effect.flip(yt.exchangeCode({ code, redirectUri, codeVerifier: verifier }))
      expect(error.kind).toBe("auth")
      expect(error.message).toBe("YouTube: youtubeSignupRequired: this Google account has no YouTube channel")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("refresh takes a new access token and keeps the refresh token and channel; a revoked one is auth", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const yt = yield* provider(f)
      const back = new URL(f.authorize(yt.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
      const [first] = yield* yt.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri,
        codeVerifier: verifier
      })
      const renewed = yield* yt.refresh!(Redacted.make(first.credentials))
      expect(renewed.credentials.access_token).not.toBe(first.credentials.access_token)
      expect(renewed.credentials.refresh_token).toBe(first.credentials.refresh_token)
      expect(renewed.platformAccountId).toBe("UCherald0000000000000001")
      expect(renewed.tokenExpiresAt).toEqual(Option.none())
      f.refreshTokens.clear()
      const dead = yield* Effect.flip(yt.refresh!(Redacted.make(first.credentials)))
      expect(dead.kind).toBe("auth")
      expect(dead.message).toBe("YouTube: invalid_grant: Token has been expired or revoked.")
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
