/**
 * Instagram professional accounts through Instagram Login (platform reference §7; no Facebook Page
 * needed; the account's `connectionFlow` is `direct`): authorize at www.instagram.com with the
 * `instagram_business_*` scopes, code exchange at api.instagram.com, long-lived token (60 days) and
 * identity at graph.instagram.com, renewal with `ig_refresh_token`. The account id is the professional
 * account's `user_id` (what publishing addresses), read from `/me` as a string: the code exchange's
 * `user_id` is a JSON number too large for a double.
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
  /** `https://www.instagram.com/oauth/authorize`. */
  readonly authorizeUrl?: string
  /** `https://api.instagram.com`: the code exchange. */
  readonly oauthUrl?: string
  /** `https://graph.instagram.com`: the long-lived token, its renewal and the API. */
  readonly apiUrl?: string
  /** The Graph API version (`HERALD_GRAPH_VERSION`); `MetaGraph.version` unless set. */
  readonly graphVersion?: string
}

export const defaultAuthorizeUrl = "https://www.instagram.com/oauth/authorize"
export const defaultOAuthUrl = "https://api.instagram.com"
export const defaultApiUrl = "https://graph.instagram.com"

export const scopes = [
  "instagram_business_basic",
  "instagram_business_content_publish",
  "instagram_business_manage_comments",
  "instagram_business_manage_insights"
] as const

const label = "Instagram"

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> => {
  const oauth = trimSlash(options.oauthUrl ?? defaultOAuthUrl)
  const api = trimSlash(options.apiUrl ?? defaultApiUrl)
  return MetaLongLived.make({
    platform: "instagram",
    label,
    authorizeUrl: options.authorizeUrl ?? defaultAuthorizeUrl,
    scopes,
    codeUrl: `${oauth}/oauth/access_token`,
    exchangeUrl: `${api}/access_token`,
    exchangeGrant: "ig_exchange_token",
    refreshUrl: `${api}/refresh_access_token`,
    refreshGrant: "ig_refresh_token",
    identity: (http, accessToken, secrets) =>
      MetaGraph.get(http, label, `${api}/${options.graphVersion ?? MetaGraph.version}/me`, {
        fields: "user_id,username,name,account_type,profile_picture_url",
        access_token: accessToken
      }, secrets).pipe(
        Effect.flatMap((body) => {
          const id = stringField(body, "user_id") ?? stringField(body, "id")
          const username = stringField(body, "username")
          if (id === undefined || username === undefined) return Effect.fail(OAuth2.unexpected(label, "/me"))
          return Effect.succeed({
            id,
            name: `@${username}`,
            avatar: stringField(body, "profile_picture_url") ?? "",
            extra: { username, account_type: stringField(body, "account_type") }
          })
        })
      )
  }, options)
}
