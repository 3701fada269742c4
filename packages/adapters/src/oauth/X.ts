/**
 * X (Twitter) OAuth 2.0: authorization code with PKCE (S256, required by X), scopes for posting,
 * identity from `/2/users/me`, and the refresh grant (platform reference §1). Every refresh returns
 * a new refresh token and retires the old one; the result carries both, to be saved in one write.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import type { ConnectedIdentity, Credentials } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { field, stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"

export interface Options extends OAuth2.Client {
  /** `https://x.com/i/oauth2/authorize` unless a fake is used. */
  readonly authorizeUrl?: string
  /** `https://api.x.com`: the token endpoint and the API. */
  readonly apiUrl?: string
}

export const defaultAuthorizeUrl = "https://x.com/i/oauth2/authorize"
export const defaultApiUrl = "https://api.x.com"
export const scopes = ["tweet.read", "tweet.write", "users.read", "offline.access", "media.write"] as const

const label = "X"

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = trimSlash(options.apiUrl ?? defaultApiUrl)
    const tokenUrl = `${api}/2/oauth2/token`
    // A confidential client authenticates with Basic; a public one sends only its id.
    const token = (form: Record<string, string | undefined>, secrets: ReadonlyArray<string | undefined>) =>
      OAuth2.requestToken(http, { label, url: tokenUrl, client: options, clientAuth: "basic", form, secrets })

    const me = (accessToken: string) =>
      OAuth2.getJson(http, label, `${api}/2/users/me?user.fields=profile_image_url,verified,verified_type`, accessToken)
        .pipe(
          Effect.flatMap((body) => {
            const data = field(body, "data")
            const id = stringField(data, "id")
            const username = stringField(data, "username")
            return id === undefined || username === undefined
              ? Effect.fail(OAuth2.unexpected(label, "users/me"))
              : Effect.succeed({ id, username, avatar: stringField(data, "profile_image_url") ?? "" })
          })
        )

    const identityOf = (tokens: OAuth2.TokenSet, user: { id: string; username: string; avatar: string }) =>
      ({
        platformAccountId: user.id,
        accountName: `@${user.username}`,
        avatarUrl: user.avatar,
        credentials: OAuth2.credentialsOf(tokens, { user_id: user.id, username: user.username }),
        tokenExpiresAt: OAuth2.connectionExpiry(tokens)
      }) satisfies ConnectedIdentity

    return {
      platform: "x",
      authorizeUrl: (request) =>
        OAuth2.buildUrl(options.authorizeUrl ?? defaultAuthorizeUrl, {
          response_type: "code",
          client_id: options.clientId,
          redirect_uri: request.redirectUri,
          scope: scopes.join(" "),
          state: request.state,
          code_challenge: request.codeChallenge,
          code_challenge_method: "S256"
        }),
      exchangeCode: (request) =>
        Effect.gen(function*() {
          const tokens = yield* token({
            grant_type: "authorization_code",
            code: request.code,
            redirect_uri: request.redirectUri,
            code_verifier: request.codeVerifier
          }, [request.code, request.codeVerifier])
          return [identityOf(tokens, yield* me(tokens.accessToken))] as const
        }),
      refresh: (credentials: Credentials) =>
        Effect.gen(function*() {
          const stored = Redacted.value(credentials)
          const refreshToken = yield* OAuth2.requireRefreshToken(label, stored)
          const tokens = yield* token({ grant_type: "refresh_token", refresh_token: refreshToken }, [refreshToken])
          const id = stored["user_id"]
          const username = stored["username"]
          // The identity is known; ask for it only when an older row lacks it.
          const user = id !== undefined && username !== undefined
            ? { id, username, avatar: "" }
            : yield* me(tokens.accessToken)
          const identity = identityOf(tokens, user)
          // X may omit a new refresh token; then the old one stays valid and is kept.
          return identity.credentials.refresh_token === undefined
            ? { ...identity, credentials: { ...identity.credentials, refresh_token: refreshToken } }
            : identity
        })
    } satisfies OAuthProvider
  })
