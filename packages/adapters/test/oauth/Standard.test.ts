/** Providers built from the standard flow (LinkedIn, Pinterest, TikTok) against a loopback fake. */
import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as LinkedIn from "../../src/oauth/LinkedIn.js"
import * as Pinterest from "../../src/oauth/Pinterest.js"
import * as TikTok from "../../src/oauth/TikTok.js"
import * as FakeServer from "../platforms/fakes/FakeServer.js"

const redirectUri = "https://herald.example.com/oauth/callback/linkedin"
const client = { clientId: "cid", clientSecret: Redacted.make("csecret-0123") }

describe("standard OAuth providers", () => {
  it.scoped("LinkedIn: no PKCE, client secret in the form, identity from userinfo; without a refresh token the access expiry is the connection's", () =>
    Effect.gen(function*() {
      const fake = yield* FakeServer.scoped((request) => {
        if (request.path === "/oauth/v2/accessToken") {
          if (request.form?.get("client_secret") !== "csecret-0123" || request.form.get("code") !== "good") {
            return {
              status: 400,
              body: { error: "invalid_grant", error_description: "Unable to retrieve access token" }
            }
          }
          return {
            status: 200,
            body: { access_token: "li-at", expires_in: 5184000, scope: "openid,profile,w_member_social" }
          }
        }
        if (request.path === "/v2/userinfo" && request.headers.authorization === "Bearer li-at") {
          return {
            status: 200,
            body: { sub: "abc123", name: "Ada Herald", picture: "https://media.licdn.com/ada.jpg" }
          }
        }
        return { status: 401, body: { message: "Invalid access token", serviceErrorCode: 65600, status: 401 } }
      })
      const provider = yield* LinkedIn.make({ ...client, oauthUrl: `${fake.url}/oauth/v2`, apiUrl: fake.url })
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "ch" }))
      expect(url.pathname).toBe("/oauth/v2/authorization")
      expect(url.searchParams.get("scope")).toBe("openid profile w_member_social")
      expect(url.searchParams.has("code_challenge")).toBe(false)
      const [identity] = yield* provider.exchangeCode({ code: "good", redirectUri, codeVerifier: "v" })
      expect(identity).toMatchObject({ platformAccountId: "abc123", accountName: "Ada Herald" })
      expect(identity.credentials).toMatchObject({ access_token: "li-at", author_urn: "urn:li:person:abc123" })
      expect(Option.isSome(identity.tokenExpiresAt)).toBe(true)
      const refused = yield* Effect.flip(provider.exchangeCode({ code: "bad", redirectUri, codeVerifier: "v" }))
      expect(refused.kind).toBe("auth")
      expect(refused.message).toBe("LinkedIn: invalid_grant: Unable to retrieve access token")
      // No refresh token stored: renewing is refused as auth (the sweep skips such grants).
      expect((yield* Effect.flip(provider.refresh!(Redacted.make(identity.credentials)))).kind).toBe("auth")
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.scoped("Pinterest: Basic client auth, comma scopes; refresh keeps the identity and takes the new tokens", () =>
    Effect.gen(function*() {
      const expectedBasic = `Basic ${Buffer.from("cid:csecret-0123").toString("base64")}`
      const fake = yield* FakeServer.scoped((request) => {
        if (request.path === "/v5/oauth/token") {
          if (request.headers.authorization !== expectedBasic) {
            return { status: 401, body: { code: 2, message: "Authentication failed." } }
          }
          const grant = request.form?.get("grant_type")
          return {
            status: 200,
            body: grant === "refresh_token"
              ? { access_token: "pin-at-2", expires_in: 2592000 }
              : {
                access_token: "pin-at",
                refresh_token: "pin-rt",
                expires_in: 2592000,
                refresh_token_expires_in: 31536000
              }
          }
        }
        if (request.path === "/v5/user_account") return { status: 200, body: { username: "heraldpins", id: "p-9" } }
        return { status: 404, body: { code: 404, message: "not found" } }
      })
      const provider = yield* Pinterest.make({ ...client, authorizeUrl: `${fake.url}/oauth/`, apiUrl: fake.url })
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "ch" }))
      expect(url.searchParams.get("scope")).toBe("boards:read,boards:write,pins:read,pins:write,user_accounts:read")
      const [identity] = yield* provider.exchangeCode({ code: "c", redirectUri, codeVerifier: "v" })
      expect(identity).toMatchObject({ platformAccountId: "p-9", accountName: "heraldpins" })
      // The connection lasts as long as the refresh token (the test clock starts at 0).
      expect(Option.map(identity.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(Option.some(31536000 * 1000))
      const renewed = yield* provider.refresh!(Redacted.make(identity.credentials))
      expect(renewed.credentials).toMatchObject({ access_token: "pin-at-2", refresh_token: "pin-rt", user_id: "p-9" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("TikTok: client_key instead of client_id, PKCE S256", () =>
    Effect.gen(function*() {
      const provider = yield* TikTok.make({ ...client, authorizeUrl: "https://tiktok.test/v2/auth/authorize/" })
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "ch" }))
      expect(url.searchParams.get("client_key")).toBe("cid")
      expect(url.searchParams.has("client_id")).toBe(false)
      expect(url.searchParams.get("code_challenge")).toBe("ch")
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(url.searchParams.get("scope")).toBe(
        "user.info.basic,user.info.profile,video.publish,video.upload,video.list"
      )
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
