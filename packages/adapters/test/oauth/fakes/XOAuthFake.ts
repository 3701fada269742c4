/**
 * An X OAuth 2.0 fake (platform reference §1): the authorize step as a function standing in for the
 * person in the browser, `POST /2/oauth2/token` (authorization code with PKCE S256, refresh with
 * rotation: the old refresh token stops working), and `GET /2/users/me`. Errors use X's bodies.
 */
import { createHash } from "node:crypto"
import * as FakeServer from "../../platforms/fakes/FakeServer.js"

export interface User {
  readonly id: string
  readonly name: string
  readonly username: string
  readonly profile_image_url: string
}

export interface XOAuthFake {
  readonly server: FakeServer.FakeServer
  readonly clientId: string
  readonly clientSecret: string
  readonly users: Record<string, User>
  /** Who approves the next authorization (the profile signed in to the browser). */
  signedIn: string
  /** Valid access tokens and refresh tokens, by user id. */
  readonly accessTokens: Map<string, string>
  readonly refreshTokens: Map<string, string>
  readonly counts: { exchanges: number; refreshes: number }
  /**
   * Plays the browser: checks the authorize URL as X would and returns the redirect X sends the
   * person to (`redirect_uri?code&state`).
   */
  readonly authorize: (authorizeUrl: string) => string
  /** Revokes every token of a user (the person removed the app). */
  readonly revoke: (userId: string) => void
  readonly close: () => Promise<void>
}

export const clientId = "herald-x-client"
export const clientSecret = "x-client-secret-0123456789"

const invalidToken: FakeServer.Reply = {
  status: 400,
  body: { error: "invalid_request", error_description: "Value passed for the token was invalid." }
}
const unauthorized: FakeServer.Reply = {
  status: 401,
  body: { title: "Unauthorized", type: "about:blank", status: 401, detail: "Unauthorized" }
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

let counter = 0
const token = (kind: string) => `${kind}-${Date.now().toString(36)}-${(++counter).toString(36)}`

export const start = async (): Promise<XOAuthFake> => {
  const users: Record<string, User> = {
    "1111": {
      id: "1111",
      name: "Herald",
      username: "herald_app",
      profile_image_url: "https://pbs.twimg.com/herald.png"
    },
    "2222": {
      id: "2222",
      name: "Other",
      username: "someone_else",
      profile_image_url: "https://pbs.twimg.com/other.png"
    }
  }
  const codes = new Map<string, { challenge: string; redirectUri: string; userId: string }>()
  const accessTokens = new Map<string, string>()
  const refreshTokens = new Map<string, string>()
  const counts = { exchanges: 0, refreshes: 0 }

  const issue = (userId: string): FakeServer.Reply => {
    const access = token("xat")
    const refresh = token("xrt")
    accessTokens.set(access, userId)
    refreshTokens.set(refresh, userId)
    return {
      status: 200,
      body: {
        token_type: "bearer",
        expires_in: 7200,
        access_token: access,
        scope: "tweet.read tweet.write users.read offline.access media.write",
        refresh_token: refresh
      }
    }
  }

  const server = await FakeServer.start((request) => {
    if (request.method === "POST" && request.path === "/2/oauth2/token") {
      const form = request.form
      const basic = request.headers.authorization ?? ""
      const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`
      if (basic !== expected) {
        return {
          status: 401,
          body: { error: "unauthorized_client", error_description: "Missing valid authorization header" }
        }
      }
      if (form?.get("client_id") !== clientId) return invalidToken
      const grant = form.get("grant_type")
      if (grant === "authorization_code") {
        counts.exchanges++
        const code = String(form.get("code") ?? "")
        const entry = codes.get(code)
        codes.delete(code)
        if (entry === undefined) return invalidToken
        if (form.get("redirect_uri") !== entry.redirectUri) return invalidToken
        if (s256(String(form.get("code_verifier") ?? "")) !== entry.challenge) {
          return {
            status: 400,
            body: { error: "invalid_request", error_description: "Value passed for the code verifier was invalid." }
          }
        }
        return issue(entry.userId)
      }
      if (grant === "refresh_token") {
        counts.refreshes++
        const old = String(form.get("refresh_token") ?? "")
        const userId = refreshTokens.get(old)
        if (userId === undefined) return invalidToken
        refreshTokens.delete(old)
        return issue(userId)
      }
      return { status: 400, body: { error: "unsupported_grant_type" } }
    }
    if (request.method === "GET" && request.path === "/2/users/me") {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
      const userId = bearer === undefined ? undefined : accessTokens.get(bearer)
      if (userId === undefined) return unauthorized
      return { status: 200, body: { data: users[userId] } }
    }
    return { status: 404, body: { title: "Not Found" } }
  })

  const fake: XOAuthFake = {
    server,
    clientId,
    clientSecret,
    users,
    signedIn: "1111",
    accessTokens,
    refreshTokens,
    counts,
    authorize: (authorizeUrl) => {
      const url = new URL(authorizeUrl)
      const p = url.searchParams
      if (p.get("response_type") !== "code") throw new Error("response_type must be code")
      if (p.get("client_id") !== clientId) throw new Error("unknown client_id")
      if (p.get("code_challenge_method") !== "S256") throw new Error("PKCE S256 required")
      const challenge = p.get("code_challenge")
      const redirectUri = p.get("redirect_uri")
      const state = p.get("state")
      if (challenge === null || redirectUri === null || state === null) throw new Error("missing parameters")
      const code = token("code")
      codes.set(code, { challenge, redirectUri, userId: fake.signedIn })
      const back = new URL(redirectUri)
      back.searchParams.set("state", state)
      back.searchParams.set("code", code)
      return back.toString()
    },
    revoke: (userId) => {
      for (const [t, u] of [...accessTokens]) if (u === userId) accessTokens.delete(t)
      for (const [t, u] of [...refreshTokens]) if (u === userId) refreshTokens.delete(t)
    },
    close: () => server.close()
  }
  return fake
}
