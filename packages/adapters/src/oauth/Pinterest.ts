/**
 * Pinterest API v5 OAuth (platform reference §12): no PKCE, client authentication with HTTP Basic,
 * comma-separated scopes, identity from `/v5/user_account`, refresh grant. The connect also lists the
 * account's boards and stores the first (the account's own order) as its default board
 * (`default_board_id`, `default_board_name` in the credentials); a failed listing leaves no default,
 * and the publishing client lists the boards again when it needs one.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import * as Effect from "effect/Effect"
import { stringField } from "../platforms/internal/PlatformHttp.js"
import * as PinterestPlatform from "../platforms/Pinterest.js"
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
  const api = PinterestPlatform.apiOrigin(options.apiUrl)
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
          return PinterestPlatform.listBoards(http, api, tokens.accessToken).pipe(
            Effect.map(PinterestPlatform.defaultBoardFields),
            Effect.catchAll((error) =>
              Effect.as(Effect.logWarning(`Pinterest: the boards could not be listed at connect: ${error.message}`), {})
            ),
            Effect.map((extra) => ({
              id: stringField(body, "id") ?? username,
              name: username,
              avatar: stringField(body, "profile_image") ?? "",
              extra
            }))
          )
        })
      )
  }, options)
}
