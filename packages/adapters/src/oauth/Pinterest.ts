/**
 * Pinterest API v5 OAuth (platform reference §12): no PKCE, client authentication with HTTP Basic,
 * comma-separated scopes, identity from `/v5/user_account`, refresh grant.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/Connections"
import * as Effect from "effect/Effect"
import { stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"
import * as Standard from "./Standard.js"

export interface Options extends OAuth2.Client {
  /** `https://www.pinterest.com/oauth/`. */
  readonly authorizeUrl?: string
  /** `https://api.pinterest.com` (or the sandbox, `https://api-sandbox.pinterest.com`). */
  readonly apiUrl?: string
}

export const scopes = ["boards:read", "boards:write", "pins:read", "pins:write", "user_accounts:read"] as const

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> => {
  const api = trimSlash(options.apiUrl ?? "https://api.pinterest.com")
  return Standard.make({
    platform: "pinterest",
    label: "Pinterest",
    authorizeUrl: options.authorizeUrl ?? "https://www.pinterest.com/oauth/",
    tokenUrl: `${api}/v5/oauth/token`,
    scopes,
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "basic",
    refreshable: true,
    identity: (http, tokens) =>
      OAuth2.getJson(http, "Pinterest", `${api}/v5/user_account`, tokens.accessToken).pipe(
        Effect.flatMap((body) => {
          const username = stringField(body, "username")
          if (username === undefined) return Effect.fail(OAuth2.unexpected("Pinterest", "user_account"))
          return Effect.succeed({
            id: stringField(body, "id") ?? username,
            name: username,
            avatar: stringField(body, "profile_image") ?? ""
          })
        })
      )
  }, options)
}
