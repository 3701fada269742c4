/**
 * LinkedIn 3-legged OAuth 2.0 (platform reference §9): scopes `openid profile w_member_social`,
 * identity from `/v2/userinfo` (author URN `urn:li:person:{sub}`). Tokens last 60 days; refresh
 * tokens are issued to approved partners only, and used when present.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/Connections"
import * as Effect from "effect/Effect"
import { stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"
import * as Standard from "./Standard.js"

export interface Options extends OAuth2.Client {
  /** `https://www.linkedin.com/oauth/v2`: authorization and token endpoints. */
  readonly oauthUrl?: string
  /** `https://api.linkedin.com`. */
  readonly apiUrl?: string
}

export const scopes = ["openid", "profile", "w_member_social"] as const

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> => {
  const oauth = trimSlash(options.oauthUrl ?? "https://www.linkedin.com/oauth/v2")
  const api = trimSlash(options.apiUrl ?? "https://api.linkedin.com")
  return Standard.make({
    platform: "linkedin",
    label: "LinkedIn",
    authorizeUrl: `${oauth}/authorization`,
    tokenUrl: `${oauth}/accessToken`,
    scopes,
    scopeSeparator: " ",
    pkce: false,
    clientAuth: "body",
    refreshable: true,
    identity: (http, tokens) =>
      OAuth2.getJson(http, "LinkedIn", `${api}/v2/userinfo`, tokens.accessToken).pipe(
        Effect.flatMap((body) => {
          const sub = stringField(body, "sub")
          if (sub === undefined) return Effect.fail(OAuth2.unexpected("LinkedIn", "userinfo"))
          return Effect.succeed({
            id: sub,
            name: stringField(body, "name") ?? sub,
            avatar: stringField(body, "picture") ?? "",
            extra: { author_urn: `urn:li:person:${sub}` }
          })
        })
      )
  }, options)
}
