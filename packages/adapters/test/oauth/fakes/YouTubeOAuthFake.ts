/**
 * A Google OAuth 2.0 + YouTube fake (platform reference §10): the consent screen as a function
 * (PKCE S256, offline access, consent prompt), `POST /token` (authorization code with the verifier,
 * refresh), and `GET /youtube/v3/channels?mine=true`. A Google account without a channel lists no
 * items. Errors use Google's bodies.
 */
import { createHash, randomBytes } from "node:crypto"
import * as FakeServer from "../../platforms/fakes/FakeServer.js"

export const clientId = "1234-herald.apps.googleusercontent.com"
export const clientSecret = "GOCSPX-herald-secret-0123"

export interface Account {
  readonly sub: string
  /** None: the Google account has no YouTube channel. */
  readonly channel?: { readonly id: string; readonly title: string; readonly thumbnail: string }
}

export interface YouTubeFake {
  readonly server: FakeServer.FakeServer
  readonly accounts: Record<string, Account>
  signedIn: string
  readonly accessTokens: Map<string, string>
  readonly refreshTokens: Map<string, string>
  readonly counts: { exchanges: number; refreshes: number }
  readonly authorize: (authorizeUrl: string) => string
  readonly close: () => Promise<void>
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")
const token = (prefix: string) => `${prefix}${randomBytes(20).toString("base64url")}`

const invalidGrant = (description: string): FakeServer.Reply => ({
  status: 400,
  body: { error: "invalid_grant", error_description: description }
})
const unauthenticated: FakeServer.Reply = {
  status: 401,
  body: {
    error: {
      code: 401,
      message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other " +
        "valid authentication credential.",
      errors: [{ message: "Invalid Credentials", domain: "global", reason: "authError", location: "Authorization" }],
      status: "UNAUTHENTICATED"
    }
  }
}

export const start = async (): Promise<YouTubeFake> => {
  const accounts: Record<string, Account> = {
    "g-1": {
      sub: "g-1",
      channel: { id: "UCherald0000000000000001", title: "Herald TV", thumbnail: "https://yt3.example/h.jpg" }
    },
    "g-2": { sub: "g-2" }
  }
  const codes = new Map<string, { challenge: string; redirectUri: string; sub: string }>()
  const accessTokens = new Map<string, string>()
  const refreshTokens = new Map<string, string>()
  const counts = { exchanges: 0, refreshes: 0 }

  const server = await FakeServer.start((request) => {
    const form = request.form
    if (request.method === "POST" && request.path === "/token") {
      if (form?.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) {
        return { status: 401, body: { error: "invalid_client", error_description: "Unauthorized" } }
      }
      if (form.get("grant_type") === "authorization_code") {
        counts.exchanges++
        const code = String(form.get("code") ?? "")
        const entry = codes.get(code)
        codes.delete(code)
        if (entry === undefined || form.get("redirect_uri") !== entry.redirectUri) return invalidGrant("Bad Request")
        if (s256(String(form.get("code_verifier") ?? "")) !== entry.challenge) {
          return invalidGrant("Invalid code verifier.")
        }
        const access = token("ya29.")
        const refresh = token("1//")
        accessTokens.set(access, entry.sub)
        refreshTokens.set(refresh, entry.sub)
        return {
          status: 200,
          body: {
            access_token: access,
            expires_in: 3599,
            refresh_token: refresh,
            scope: "https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly",
            token_type: "Bearer"
          }
        }
      }
      if (form.get("grant_type") === "refresh_token") {
        counts.refreshes++
        const sub = refreshTokens.get(String(form.get("refresh_token") ?? ""))
        if (sub === undefined) return invalidGrant("Token has been expired or revoked.")
        const access = token("ya29.")
        accessTokens.set(access, sub)
        // Google keeps the refresh token: none in the answer.
        return { status: 200, body: { access_token: access, expires_in: 3599, token_type: "Bearer" } }
      }
      return { status: 400, body: { error: "unsupported_grant_type", error_description: "Invalid grant_type" } }
    }
    if (request.method === "GET" && request.path === "/youtube/v3/channels") {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
      const sub = bearer === undefined ? undefined : accessTokens.get(bearer)
      if (sub === undefined) return unauthenticated
      if (request.query.get("mine") !== "true") {
        return { status: 400, body: { error: { code: 400, message: "No filter selected." } } }
      }
      const channel = accounts[sub]!.channel
      return {
        status: 200,
        body: {
          kind: "youtube#channelListResponse",
          pageInfo: { totalResults: channel === undefined ? 0 : 1, resultsPerPage: 5 },
          ...(channel === undefined ? {} : {
            items: [{
              kind: "youtube#channel",
              id: channel.id,
              snippet: {
                title: channel.title,
                customUrl: "@heraldtv",
                thumbnails: { default: { url: channel.thumbnail } }
              }
            }]
          })
        }
      }
    }
    return { status: 404, body: { error: { code: 404, message: "Not Found", status: "NOT_FOUND" } } }
  })

  const fake: YouTubeFake = {
    server,
    accounts,
    signedIn: "g-1",
    accessTokens,
    refreshTokens,
    counts,
    authorize: (authorizeUrl) => {
      const url = new URL(authorizeUrl)
      const p = url.searchParams
      if (url.pathname !== "/o/oauth2/v2/auth") throw new Error(`authorize path ${url.pathname}`)
      if (p.get("client_id") !== clientId) throw new Error("unknown client_id")
      if (p.get("response_type") !== "code") throw new Error("response_type must be code")
      if (p.get("code_challenge_method") !== "S256") throw new Error("PKCE S256 expected")
      const challenge = p.get("code_challenge")
      const redirectUri = p.get("redirect_uri")
      const state = p.get("state")
      if (challenge === null || redirectUri === null || state === null) throw new Error("missing parameters")
      const code = token("4/0A")
      codes.set(code, { challenge, redirectUri, sub: fake.signedIn })
      const back = new URL(redirectUri)
      back.searchParams.set("state", state)
      back.searchParams.set("code", code)
      back.searchParams.set("scope", p.get("scope") ?? "")
      return back.toString()
    },
    close: () => server.close()
  }
  return fake
}
