/**
 * Threads (platform reference §8): authorize at threads.net without PKCE, code exchange, long-lived
 * token (`th_exchange_token`, 60 days), identity from `/v1.0/me`, renewal with `th_refresh_token`. All
 * API calls go to graph.threads.net.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import type * as Redacted from "effect/Redacted"
import * as Effect from "effect/Effect"
import * as MetaGraph from "../platforms/internal/MetaGraph.js"
import { stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"
import * as MetaLongLived from "./internal/MetaLongLived.js"

export interface Options {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** `https://threads.net/oauth/authorize`. */
  readonly authorizeUrl?: string
  /** `https://graph.threads.net`: token endpoints and the API. */
  readonly apiUrl?: string
}

export const defaultAuthorizeUrl = "https://threads.net/oauth/authorize"
export const defaultApiUrl = "https://graph.threads.net"

export const scopes = [
  "threads_basic",
  "threads_content_publish",
  "threads_manage_replies",
  "threads_manage_insights"
] as const

const label = "Threads"

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> => {
  const api = trimSlash(options.apiUrl ?? defaultApiUrl)
  return MetaLongLived.make({
    platform: "threads",
    label,
    authorizeUrl: options.authorizeUrl ?? defaultAuthorizeUrl,
    scopes,
    codeUrl: `${api}/oauth/access_token`,
    exchangeUrl: `${api}/access_token`,
    exchangeGrant: "th_exchange_token",
    refreshUrl: `${api}/refresh_access_token`,
    refreshGrant: "th_refresh_token",
    identity: (http, accessToken, secrets) =>
      MetaGraph.get(http, label, `${api}/${MetaGraph.threadsVersion}/me`, {
        fields: "id,username,name,threads_profile_picture_url",
        access_token: accessToken
      }, secrets).pipe(
        Effect.flatMap((body) => {
          const id = stringField(body, "id")
          const username = stringField(body, "username")
          if (id === undefined || username === undefined) return Effect.fail(OAuth2.unexpected(label, "/me"))
          return Effect.succeed({
            id,
            name: `@${username}`,
            avatar: stringField(body, "threads_profile_picture_url") ?? "",
            extra: { username }
          })
        })
      )
  }, options)
}
