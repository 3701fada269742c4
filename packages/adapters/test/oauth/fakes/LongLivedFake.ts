/**
 * The login flow Instagram (Instagram Login) and Threads share, as a fake (platform reference §7, §8):
 * the authorize step as a function standing in for the person, the code exchange (POST form, short-lived
 * token), the long-lived exchange (`GET /access_token?grant_type=…_exchange_token`), the renewal
 * (`GET /refresh_access_token?grant_type=…_refresh_token`, long-lived tokens only) and `/me`. One server
 * plays every host of the platform. `InstagramOAuthFake` and `ThreadsOAuthFake` configure it.
 */
import * as FakeServer from "../../platforms/fakes/FakeServer.js"
import { checkAuthorize, invalidToken, metaError, param, redirect, token, tokenOf } from "./MetaFake.js"

export interface User {
  readonly id: string
  readonly username: string
  readonly name: string
  readonly picture: string
}

export interface Config<U extends User> {
  readonly clientId: string
  readonly clientSecret: string
  readonly scopes: ReadonlyArray<string>
  readonly users: Record<string, U>
  readonly authorizePath: string
  /** Appended to the redirect (Instagram adds `#_`). */
  readonly authorizeHash: string
  readonly exchangeGrant: string
  readonly refreshGrant: string
  readonly mePath: string
  readonly prefixes: { readonly short: string; readonly long: string }
  /** The platform's refusal of a code; `quote` is what failure injection appends. */
  readonly codeRefused: (quote: string) => FakeServer.Reply
  /** The code exchange's answer. */
  readonly codeAnswer: (accessToken: string, user: U) => FakeServer.Reply
  readonly me: (user: U, fields: ReadonlyArray<string>) => Record<string, unknown>
}

interface Issued {
  readonly userId: string
  readonly longLived: boolean
}

export interface LongLivedFake<U extends User> {
  readonly server: FakeServer.FakeServer
  readonly clientId: string
  readonly clientSecret: string
  readonly users: Record<string, U>
  signedIn: string
  /** Failure injection: error messages quote the request's code and client secret. */
  quoteRequest: boolean
  readonly tokens: Map<string, Issued>
  readonly counts: { codeExchanges: number; longLivedExchanges: number; refreshes: number; meReads: number }
  readonly authorize: (authorizeUrl: string) => string
  readonly revoke: (userId: string) => void
  readonly close: () => Promise<void>
}

export const longLivedSeconds = 5184000

export const start = async <U extends User>(config: Config<U>): Promise<LongLivedFake<U>> => {
  const codes = new Map<string, { redirectUri: string; userId: string }>()
  const tokens = new Map<string, Issued>()
  const counts = { codeExchanges: 0, longLivedExchanges: 0, refreshes: 0, meReads: 0 }
  const quoted = (request: FakeServer.Recorded) =>
    fake.quoteRequest
      ? ` (code=${param(request, "code") ?? ""}, client_secret=${param(request, "client_secret") ?? ""})`
      : ""
  const badSecret = (request: FakeServer.Recorded) =>
    metaError(400, `Error validating client secret.${quoted(request)}`, 1)
  const longLived = (userId: string): FakeServer.Reply => {
    const issued = token(config.prefixes.long)
    tokens.set(issued, { userId, longLived: true })
    return { status: 200, body: { access_token: issued, token_type: "bearer", expires_in: longLivedSeconds } }
  }

  const server = await FakeServer.start((request) => {
    if (request.method === "POST" && request.path === "/oauth/access_token") {
      counts.codeExchanges++
      if (param(request, "client_id") !== config.clientId) return config.codeRefused(" (invalid platform app)")
      if (param(request, "client_secret") !== config.clientSecret) return badSecret(request)
      if (param(request, "grant_type") !== "authorization_code") return config.codeRefused(quoted(request))
      const code = param(request, "code") ?? ""
      const entry = codes.get(code)
      codes.delete(code)
      if (entry === undefined || param(request, "redirect_uri") !== entry.redirectUri) {
        return config.codeRefused(quoted(request))
      }
      const short = token(config.prefixes.short)
      tokens.set(short, { userId: entry.userId, longLived: false })
      return config.codeAnswer(short, config.users[entry.userId]!)
    }
    if (request.method === "GET" && request.path === "/access_token") {
      counts.longLivedExchanges++
      if (param(request, "grant_type") !== config.exchangeGrant) return metaError(400, "Unsupported grant_type", 100)
      if (param(request, "client_secret") !== config.clientSecret) return badSecret(request)
      const issued = tokens.get(tokenOf(request) ?? "")
      if (issued === undefined) return invalidToken
      return longLived(issued.userId)
    }
    if (request.method === "GET" && request.path === "/refresh_access_token") {
      counts.refreshes++
      if (param(request, "grant_type") !== config.refreshGrant) return metaError(400, "Unsupported grant_type", 100)
      const issued = tokens.get(tokenOf(request) ?? "")
      if (issued === undefined || !issued.longLived) return invalidToken
      return longLived(issued.userId)
    }
    if (request.method === "GET" && request.path === config.mePath) {
      counts.meReads++
      const issued = tokens.get(tokenOf(request) ?? "")
      if (issued === undefined) return invalidToken
      const fields = (param(request, "fields") ?? "id").split(",")
      return { status: 200, body: config.me(config.users[issued.userId]!, fields) }
    }
    return metaError(400, "Unsupported get request.", 100, { subcode: 33, type: "GraphMethodException" })
  })

  const fake: LongLivedFake<U> = {
    server,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    users: config.users,
    signedIn: Object.keys(config.users)[0]!,
    quoteRequest: false,
    tokens,
    counts,
    authorize: (authorizeUrl) => {
      const { redirectUri, state } = checkAuthorize(authorizeUrl, {
        path: config.authorizePath,
        clientId: config.clientId,
        scopes: config.scopes
      })
      const code = token("AQ")
      codes.set(code, { redirectUri, userId: fake.signedIn })
      return redirect(redirectUri, { code, state }, config.authorizeHash)
    },
    revoke: (userId) => {
      for (const [t, issued] of [...tokens]) if (issued.userId === userId) tokens.delete(t)
    },
    close: () => server.close()
  }
  return fake
}
