/** The X OAuth 2.0 provider against a loopback fake of X's token and users endpoints. */
import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as X from "../../src/oauth/X.js"
import * as XFake from "./fakes/XOAuthFake.js"

const fake = Effect.acquireRelease(Effect.promise(() => XFake.start()), (f) => Effect.promise(() => f.close()))

const provider = (f: XFake.XOAuthFake) =>
  X.make({
    clientId: f.clientId,
    clientSecret: Redacted.make(f.clientSecret),
    authorizeUrl: `${f.server.url}/i/oauth2/authorize`,
    apiUrl: f.server.url
  })

const verifier = "v".repeat(43) + "0123456789abcdef0123"
const challenge = createHash("sha256").update(verifier).digest("base64url")
const redirectUri = "https://herald.example.com/oauth/callback/x"

describe("X OAuth provider", () => {
  it.scoped("builds the authorize URL with PKCE S256 and the posting scopes", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const x = yield* provider(f)
      const url = new URL(x.authorizeUrl({ state: "s.t", redirectUri, codeChallenge: challenge }))
      expect(url.origin + url.pathname).toBe(`${f.server.url}/i/oauth2/authorize`)
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: "code",
        client_id: XFake.clientId,
        redirect_uri: redirectUri,
        scope: "tweet.read tweet.write users.read offline.access media.write",
        state: "s.t",
        code_challenge: challenge,
        code_challenge_method: "S256"
      })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("exchanges the code with the verifier and Basic client auth, then reads the identity", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const x = yield* provider(f)
      const back = new URL(f.authorize(x.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
      const [identity] = yield* x.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri,
        codeVerifier: verifier
      })
      expect(identity.platformAccountId).toBe("1111")
      expect(identity.accountName).toBe("@herald_app")
      expect(identity.avatarUrl).toBe("https://pbs.twimg.com/herald.png")
      // offline.access: the refresh token does not expire, so neither does the connection.
      expect(identity.tokenExpiresAt).toEqual(Option.none())
      expect(identity.credentials.expires_at).toBe(String(7200 * 1000)) // TestClock starts at 0
      expect(f.accessTokens.get(identity.credentials.access_token!)).toBe("1111")
      expect(f.refreshTokens.get(identity.credentials.refresh_token!)).toBe("1111")
      const form = f.server.requests.find((r) => r.path === "/2/oauth2/token")!.form!
      expect(form.get("grant_type")).toBe("authorization_code")
      expect(form.get("code_verifier")).toBe(verifier)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("refuses a code presented with the wrong verifier, as auth, without echoing secrets", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const x = yield* provider(f)
      const back = new URL(f.authorize(x.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
      const code = back.searchParams.get("code")!
      const error = yield* Effect.flip(x.exchangeCode({ code, redirectUri, codeVerifier: "w".repeat(64) }))
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("code verifier was invalid")
      expect(error.message).not.toContain(code)
      expect(error.message).not.toContain(XFake.clientSecret)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("refresh rotates the pair: the new refresh token is returned and the old one is dead", () =>
    Effect.gen(function*() {
      const f = yield* fake
      const x = yield* provider(f)
      const back = new URL(f.authorize(x.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge })))
      const [first] = yield* x.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri,
        codeVerifier: verifier
      })
      const renewed = yield* x.refresh!(Redacted.make(first.credentials))
      expect(renewed.credentials.refresh_token).not.toBe(first.credentials.refresh_token)
      expect(renewed.credentials.access_token).not.toBe(first.credentials.access_token)
      expect(renewed.credentials.user_id).toBe("1111")
      expect(f.refreshTokens.has(first.credentials.refresh_token!)).toBe(false)
      // The retired token is refused as X refuses it: auth, so the account needs reconnection.
      const again = yield* Effect.flip(x.refresh!(Redacted.make(first.credentials)))
      expect(again.kind).toBe("auth")
      expect(again.message).toBe("X: invalid_request: Value passed for the token was invalid.")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("an unreachable token endpoint is transient, not a dead token", () =>
    Effect.gen(function*() {
      const x = yield* X.make({ clientId: "c", apiUrl: "http://127.0.0.1:9" })
      const error = yield* Effect.flip(x.refresh!(Redacted.make({ refresh_token: "r", user_id: "1", username: "u" })))
      expect(error.kind).toBe("transient")
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
