/**
 * TikTok Login Kit v2 (platform reference §11): `client_key` instead of `client_id`, PKCE, comma-
 * separated scopes, identity from `/v2/user/info/`, refresh grant (which may rotate the refresh token).
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import * as Effect from "effect/Effect"
import { field, stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"
import * as Standard from "./Standard.js"

export interface Options extends OAuth2.Client {
  /** `https://www.tiktok.com/v2/auth/authorize/`. */
  readonly authorizeUrl?: string
  /** `https://open.tiktokapis.com`. */
  readonly apiUrl?: string
}

/**
 * `user.info.profile` covers the `username` the identity call asks for (TikTok refuses it otherwise).
 * `video.list` (metrics through `video/query`) was added later: accounts connected before it must
 * reconnect before their metrics can be read.
 */
export const scopes = ["user.info.basic", "user.info.profile", "video.publish", "video.upload", "video.list"] as const

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> => {
  const api = trimSlash(options.apiUrl ?? "https://open.tiktokapis.com")
  return Standard.make({
    platform: "tiktok",
    label: "TikTok",
    authorizeUrl: options.authorizeUrl ?? "https://www.tiktok.com/v2/auth/authorize/",
    tokenUrl: `${api}/v2/oauth/token/`,
    scopes,
    scopeSeparator: ",",
    pkce: true,
    clientAuth: "body",
    clientIdParam: "client_key",
    refreshable: true,
    identity: (http, tokens) =>
      OAuth2.getJson(
        http,
        "TikTok",
        `${api}/v2/user/info/?fields=open_id,union_id,avatar_url,display_name,username`,
        tokens.accessToken
      ).pipe(
        Effect.flatMap((body) => {
          const user = field(field(body, "data"), "user")
          const openId = stringField(user, "open_id") ?? stringField(tokens.raw, "open_id")
          if (openId === undefined) return Effect.fail(OAuth2.unexpected("TikTok", "user/info"))
          const username = stringField(user, "username")
          return Effect.succeed({
            id: openId,
            name: username !== undefined ? `@${username}` : stringField(user, "display_name") ?? openId,
            avatar: stringField(user, "avatar_url") ?? ""
          })
        })
      )
  }, options)
}
