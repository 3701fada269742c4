/**
 * A provider for platforms whose flow is the plain authorization-code grant: authorize URL, token
 * endpoint, one identity call, and (where offered) the refresh grant. LinkedIn, YouTube, Pinterest
 * and TikTok are built from it; their specifics (scopes, client authentication, PKCE, the identity
 * call) are data.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import type { OAuthPlatform } from "@herald/core/domain/Platform"
import type { ConnectedIdentity, Credentials, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as OAuth2 from "./OAuth2.js"

export interface Identity {
  readonly id: string
  readonly name: string
  readonly avatar: string
  /** Kept in the credentials beside the tokens (e.g. the author URN). */
  readonly extra?: Readonly<Record<string, string>>
}

export interface Spec {
  readonly platform: OAuthPlatform
  readonly label: string
  readonly authorizeUrl: string
  readonly tokenUrl: string
  readonly scopes: ReadonlyArray<string>
  readonly scopeSeparator: " " | ","
  readonly pkce: boolean
  readonly clientAuth: "basic" | "body"
  readonly clientIdParam?: string
  readonly clientSecretParam?: string
  readonly extraAuthorizeParams?: Readonly<Record<string, string>>
  readonly refreshable: boolean
  readonly identity: (
    http: HttpClient.HttpClient,
    tokens: OAuth2.TokenSet
  ) => Effect.Effect<Identity, PublishError>
}

export const make = (spec: Spec, client: OAuth2.Client): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const token = (form: Record<string, string | undefined>, secrets: ReadonlyArray<string | undefined>) =>
      OAuth2.requestToken(http, {
        label: spec.label,
        url: spec.tokenUrl,
        client,
        clientAuth: spec.clientAuth,
        ...(spec.clientIdParam === undefined ? {} : { clientIdParam: spec.clientIdParam }),
        ...(spec.clientSecretParam === undefined ? {} : { clientSecretParam: spec.clientSecretParam }),
        form,
        secrets
      })

    const identityOf = (tokens: OAuth2.TokenSet, user: Identity): ConnectedIdentity => ({
      platformAccountId: user.id,
      accountName: user.name,
      avatarUrl: user.avatar,
      credentials: OAuth2.credentialsOf(tokens, { user_id: user.id, ...user.extra }),
      tokenExpiresAt: OAuth2.connectionExpiry(tokens)
    })

    const provider: OAuthProvider = {
      platform: spec.platform,
      authorizeUrl: (request) =>
        OAuth2.buildUrl(spec.authorizeUrl, {
          response_type: "code",
          [spec.clientIdParam ?? "client_id"]: client.clientId,
          redirect_uri: request.redirectUri,
          scope: spec.scopes.join(spec.scopeSeparator),
          state: request.state,
          ...(spec.pkce ? { code_challenge: request.codeChallenge, code_challenge_method: "S256" } : {}),
          ...spec.extraAuthorizeParams
        }),
      exchangeCode: (request) =>
        Effect.gen(function*() {
          const tokens = yield* token({
            grant_type: "authorization_code",
            code: request.code,
            redirect_uri: request.redirectUri,
            ...(spec.pkce ? { code_verifier: request.codeVerifier } : {})
          }, [request.code, request.codeVerifier])
          return [identityOf(tokens, yield* spec.identity(http, tokens))] as const
        })
    }
    if (!spec.refreshable) return provider
    return {
      ...provider,
      refresh: (credentials: Credentials) =>
        Effect.gen(function*() {
          const stored = Redacted.value(credentials)
          const refreshToken = yield* OAuth2.requireRefreshToken(spec.label, stored)
          const tokens = yield* token({ grant_type: "refresh_token", refresh_token: refreshToken }, [refreshToken])
          // Keep the stored identity fields; a platform that issues no new refresh token keeps the old one.
          const kept: Record<string, string> = { ...stored }
          delete kept.access_token
          delete kept.scope
          delete kept.expires_at
          const credentialsOut = { ...kept, ...OAuth2.credentialsOf(tokens) }
          const renewed: OAuth2.TokenSet = { ...tokens, refreshToken: credentialsOut.refresh_token }
          return {
            platformAccountId: stored["user_id"] ?? "",
            accountName: "",
            avatarUrl: "",
            credentials: credentialsOut,
            tokenExpiresAt: OAuth2.connectionExpiry(renewed)
          } satisfies ConnectedIdentity
        })
    }
  })
