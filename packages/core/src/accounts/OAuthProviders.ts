/**
 * The OAuth ports of connecting accounts: one provider per platform (its authorization-code flow and
 * token renewal), and this server's settings for the flow (the public origin OAuth redirects come
 * back to, the secret that signs connect states).
 */
import type { ConnectedIdentity, Credentials, PublishError } from "../platforms/Platforms.js"
import type { OAuthPlatform, Platform } from "../domain/Platform.js"
import { oauthPlatforms } from "../domain/Platform.js"
import type * as Arr from "effect/Array"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

export interface AuthorizeRequest {
  readonly state: string
  readonly redirectUri: string
  /** S256 challenge of the state's verifier; providers whose platform takes no PKCE ignore it. */
  readonly codeChallenge: string
}

export interface CodeExchange {
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier: string
}

/** One platform's OAuth 2.0 authorization-code flow. */
export interface OAuthProvider {
  readonly platform: OAuthPlatform
  readonly authorizeUrl: (request: AuthorizeRequest) => string
  /**
   * Exchanges the code for tokens and fetches the identities they grant, each one social account: one
   * on most platforms, every granted Page on Facebook (one login can grant several). A grant with no
   * usable identity fails instead.
   */
  readonly exchangeCode: (
    request: CodeExchange
  ) => Effect.Effect<Arr.NonEmptyReadonlyArray<ConnectedIdentity>, PublishError>
  /**
   * Renews the stored tokens, where the platform allows it; the result replaces them whole. The sweep
   * calls it for credentials holding a `refresh_token`, or a `refresh_at` (a token that renews itself,
   * as Meta's long-lived tokens do).
   */
  readonly refresh?: (credentials: Credentials) => Effect.Effect<ConnectedIdentity, PublishError>
}

export class OAuthProviders extends Context.Tag("@herald/core/OAuthProviders")<OAuthProviders, {
  /** The provider, or (Left) what the operator has to configure to enable the platform. */
  readonly get: (platform: OAuthPlatform) => Either.Either<OAuthProvider, string>
}>() {}

export class ConnectSettings extends Context.Tag("@herald/core/ConnectSettings")<ConnectSettings, {
  /** This server's public origin; OAuth redirects go to `{publicUrl}/oauth/callback/{platform}`. */
  readonly publicUrl: Option.Option<string>
  /** Signs connect states and derives PKCE verifiers. */
  readonly stateSecret: Redacted.Redacted<string>
}>() {}

export const callbackPath = (platform: OAuthPlatform): string => `/oauth/callback/${platform}`

export const redirectUri = (publicUrl: string, platform: OAuthPlatform): string =>
  publicUrl.replace(/\/+$/, "") + callbackPath(platform)

export const isOAuthPlatform = (platform: Platform): platform is OAuthPlatform =>
  (oauthPlatforms as ReadonlyArray<string>).includes(platform)
