/**
 * A Facebook Login fake for Pages (platform reference §6): the dialog as a function standing in for
 * the person (who picks which of their Pages to grant), `GET /v26.0/oauth/access_token` for the code
 * (short-lived user token) and for `fb_exchange_token` (long-lived user token), and
 * `GET /v26.0/me/accounts` listing the granted Pages with their Page tokens, cursor-paged. Page tokens
 * read with a long-lived user token never expire; with a short-lived one they do (as at Meta). Errors
 * use Meta's body.
 */
import * as FakeServer from "../../platforms/fakes/FakeServer.js"
import { checkAuthorize, invalidToken, metaError, noToken, param, redirect, token, tokenOf } from "./MetaFake.js"

export const version = "v26.0"
export const clientId = "1234567890123456"
export const clientSecret = "fb-app-secret-0123456789abcdef"
export const scopes = ["pages_show_list", "pages_manage_posts", "pages_read_engagement", "pages_manage_engagement"]

export interface Page {
  readonly id: string
  readonly name: string
  readonly username?: string
  readonly picture: string
  /** False when the person's role does not let the app act for the Page: no token is listed. */
  readonly canAct?: boolean
}

export interface User {
  readonly id: string
  readonly name: string
  readonly pages: ReadonlyArray<Page>
}

interface UserToken {
  readonly userId: string
  readonly longLived: boolean
  readonly pages: ReadonlyArray<string>
}

export interface FacebookFake {
  readonly server: FakeServer.FakeServer
  readonly clientId: string
  readonly clientSecret: string
  readonly users: Record<string, User>
  /** Who is signed in to the browser. */
  signedIn: string
  /** The Page ids the person keeps selected in the dialog; all of theirs when undefined. */
  selectPages: ReadonlyArray<string> | undefined
  /** Pages per `/me/accounts` answer (Meta caps `limit` at 100). */
  pageSize: number
  /** Failure injection: error messages quote the request's code and client secret. */
  quoteRequest: boolean
  readonly userTokens: Map<string, UserToken>
  /** Page tokens: which Page, and whether the token expires. */
  readonly pageTokens: Map<string, { readonly pageId: string; readonly expires: boolean }>
  readonly counts: { codeExchanges: number; longLivedExchanges: number; pageReads: number }
  /** Plays the dialog: checks the URL and returns the redirect (`redirect_uri?code&state`). */
  readonly authorize: (authorizeUrl: string) => string
  /** The person declines: the redirect Facebook sends then. */
  readonly decline: (authorizeUrl: string) => string
  /** Invalidates every token of a user (password change). */
  readonly revoke: (userId: string) => void
  readonly close: () => Promise<void>
}

export const start = async (): Promise<FacebookFake> => {
  const users: Record<string, User> = {
    "10001": {
      id: "10001",
      name: "Ada Herald",
      pages: [
        { id: "501", name: "Herald News", username: "heraldnews", picture: "https://scontent.example/501.jpg" },
        { id: "502", name: "Herald Sports", picture: "https://scontent.example/502.jpg" },
        { id: "503", name: "Herald Weather", username: "heraldweather", picture: "https://scontent.example/503.jpg" },
        { id: "504", name: "Herald Archive", picture: "https://scontent.example/504.jpg", canAct: false }
      ]
    },
    "10002": { id: "10002", name: "No Pages", pages: [] }
  }
  const codes = new Map<string, { redirectUri: string; userId: string; pages: ReadonlyArray<string> }>()
  const userTokens = new Map<string, UserToken>()
  const pageTokens = new Map<string, { pageId: string; expires: boolean }>()
  const counts = { codeExchanges: 0, longLivedExchanges: 0, pageReads: 0 }

  const quoted = (request: FakeServer.Recorded) =>
    fake.quoteRequest
      ? ` (code=${param(request, "code") ?? ""}, client_secret=${param(request, "client_secret") ?? ""})`
      : ""

  const oauthToken = (request: FakeServer.Recorded): FakeServer.Reply => {
    if (param(request, "client_id") !== clientId) {
      return metaError(400, "Error validating application. Invalid application ID.", 101)
    }
    if (param(request, "client_secret") !== clientSecret) {
      return metaError(400, `Error validating client secret.${quoted(request)}`, 1)
    }
    if (param(request, "grant_type") === "fb_exchange_token") {
      counts.longLivedExchanges++
      const short = userTokens.get(param(request, "fb_exchange_token") ?? "")
      if (short === undefined) return invalidToken
      const long = token("EAAL")
      userTokens.set(long, { ...short, longLived: true })
      return { status: 200, body: { access_token: long, token_type: "bearer", expires_in: 5183944 } }
    }
    counts.codeExchanges++
    const code = param(request, "code") ?? ""
    const entry = codes.get(code)
    if (entry === undefined) {
      return metaError(400, `Invalid verification code format.${quoted(request)}`, 100, { subcode: 36007 })
    }
    codes.delete(code)
    if (param(request, "redirect_uri") !== entry.redirectUri) {
      return metaError(
        400,
        "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the " +
          "OAuth dialog request",
        100,
        { subcode: 36008 }
      )
    }
    const short = token("EAAS")
    userTokens.set(short, { userId: entry.userId, longLived: false, pages: entry.pages })
    return { status: 200, body: { access_token: short, token_type: "bearer", expires_in: 5400 } }
  }

  const accounts = (request: FakeServer.Recorded): FakeServer.Reply => {
    counts.pageReads++
    const presented = tokenOf(request)
    if (presented === undefined) return noToken
    const user = userTokens.get(presented)
    if (user === undefined) return invalidToken
    const fields = (param(request, "fields") ?? "").split(",")
    const granted = users[user.userId]!.pages.filter((p) => user.pages.includes(p.id))
    const limit = Math.min(100, Number(param(request, "limit") ?? "25"), fake.pageSize)
    const offset = Number(Buffer.from(param(request, "after") ?? "", "base64url").toString("utf8") || "0")
    const slice = granted.slice(offset, offset + limit)
    const data = slice.map((page) => {
      const out: Record<string, unknown> = { id: page.id, name: page.name }
      if (fields.includes("username") && page.username !== undefined) out.username = page.username
      if (fields.some((f) => f.startsWith("picture"))) {
        out.picture = { data: { url: page.picture, is_silhouette: false, height: 200, width: 200 } }
      }
      if (fields.includes("access_token") && page.canAct !== false) {
        const pageToken = token("EAAP")
        pageTokens.set(pageToken, { pageId: page.id, expires: !user.longLived })
        out.access_token = pageToken
      }
      return out
    })
    const after = Buffer.from(String(offset + slice.length)).toString("base64url")
    const before = Buffer.from(String(offset)).toString("base64url")
    const more = offset + slice.length < granted.length
    const next = new URL(`${server.url}/${version}/me/accounts`)
    next.searchParams.set("access_token", presented)
    next.searchParams.set("limit", String(limit))
    next.searchParams.set("after", after)
    return {
      status: 200,
      body: { data, paging: { cursors: { before, after }, ...(more ? { next: next.toString() } : {}) } }
    }
  }

  const server = await FakeServer.start((request) => {
    if (request.method === "GET" && request.path === `/${version}/oauth/access_token`) return oauthToken(request)
    if (request.method === "GET" && request.path === `/${version}/me/accounts`) return accounts(request)
    return metaError(400, "Unsupported get request.", 100, { type: "GraphMethodException", subcode: 33 })
  })

  const fake: FacebookFake = {
    server,
    clientId,
    clientSecret,
    users,
    signedIn: "10001",
    selectPages: undefined,
    pageSize: 100,
    quoteRequest: false,
    userTokens,
    pageTokens,
    counts,
    authorize: (authorizeUrl) => {
      const { redirectUri, state } = checkAuthorize(authorizeUrl, {
        path: `/${version}/dialog/oauth`,
        clientId,
        scopes
      })
      const own = users[fake.signedIn]!.pages.map((p) => p.id)
      const pages = fake.selectPages === undefined ? own : own.filter((id) => fake.selectPages!.includes(id))
      const code = token("AQD")
      codes.set(code, { redirectUri, userId: fake.signedIn, pages })
      return redirect(redirectUri, { code, state }, "#_=_")
    },
    decline: (authorizeUrl) => {
      const { redirectUri, state } = checkAuthorize(authorizeUrl, {
        path: `/${version}/dialog/oauth`,
        clientId,
        scopes
      })
      return redirect(redirectUri, {
        error: "access_denied",
        error_code: "200",
        error_description: "Permissions error",
        error_reason: "user_denied",
        state
      }, "#_=_")
    },
    revoke: (userId) => {
      for (const [t, u] of [...userTokens]) if (u.userId === userId) userTokens.delete(t)
      const ids = new Set(users[userId]?.pages.map((p) => p.id))
      for (const [t, p] of [...pageTokens]) if (ids.has(p.pageId)) pageTokens.delete(t)
    },
    close: () => server.close()
  }
  return fake
}
