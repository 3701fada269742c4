/**
 * YouTube through Google OAuth 2.0 (platform reference §10): offline access with consent (so a
 * refresh token is issued), upload, read and comment scopes, identity from `channels?mine=true`.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import * as Effect from "effect/Effect"
import { field, stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"
import * as Standard from "./Standard.js"

export interface Options extends OAuth2.Client {
  /** `https://accounts.google.com/o/oauth2/v2/auth`. */
  readonly authorizeUrl?: string
  /** `https://oauth2.googleapis.com/token`. */
  readonly tokenUrl?: string
  /** `https://www.googleapis.com`. */
  readonly apiUrl?: string
}

export const scopes = [
  "https://www.googleapis.com/auth/youtube.upload",
  "https://www.googleapis.com/auth/youtube.readonly",
  "https://www.googleapis.com/auth/youtube.force-ssl"
] as const

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> => {
  const api = trimSlash(options.apiUrl ?? "https://www.googleapis.com")
  return Standard.make({
    platform: "youtube",
    label: "YouTube",
    authorizeUrl: options.authorizeUrl ?? "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: options.tokenUrl ?? "https://oauth2.googleapis.com/token",
    scopes,
    scopeSeparator: " ",
    pkce: true,
    clientAuth: "body",
    extraAuthorizeParams: { access_type: "offline", prompt: "consent" },
    refreshable: true,
    identity: (http, tokens) =>
      OAuth2.getJson(http, "YouTube", `${api}/youtube/v3/channels?part=snippet&mine=true`, tokens.accessToken).pipe(
        Effect.flatMap((body) => {
          const items = field(body, "items")
          const channel = Array.isArray(items) ? items[0] : undefined
          const id = stringField(channel, "id")
          if (id === undefined) {
            return Effect.fail(
              OAuth2.classify("YouTube", {
                status: 403,
                headers: {},
                text: "",
                body: {
                  error: "youtubeSignupRequired",
                  error_description: "this Google account has no YouTube channel"
                }
              }, [])
            )
          }
          const snippet = field(channel, "snippet")
          const thumbnails = field(snippet, "thumbnails")
          return Effect.succeed({
            id,
            name: stringField(snippet, "title") ?? id,
            avatar: stringField(field(thumbnails, "default"), "url") ?? ""
          })
        })
      )
  }, options)
}
