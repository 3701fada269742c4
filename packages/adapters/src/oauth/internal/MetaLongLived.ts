/**
 * The login flow Instagram (Instagram Login) and Threads share (platform reference §7, §8): authorize
 * without PKCE, exchange the code for a short-lived token (POST form, about an hour), exchange that for
 * a long-lived token (GET `access_token?grant_type=…_exchange_token`, 60 days), read the identity, and
 * renew the long-lived token itself (GET `refresh_access_token?grant_type=…_refresh_token`). There is
 * no refresh token: the connection lasts as long as the long-lived token, and each renewal extends it.
 *
 * Credentials: `access_token`, `expires_at` (epoch ms) and `refresh_at` (epoch ms, when the sweep
 * renews: ten days before expiry, so health never warns while renewals work, and never within the
 * token's first 25 hours, as Meta refuses to renew a token younger than a day), plus the identity.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import type { ConnectedIdentity, Credentials, PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MetaGraph from "../../platforms/internal/MetaGraph.js"
import { publishError } from "../../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "../OAuth2.js"

export interface Client {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
}

export interface Identity {
  readonly id: string
  readonly name: string
  readonly avatar: string
  /** Kept in the credentials beside the token. */
  readonly extra?: Readonly<Record<string, string | undefined>>
}

export interface Spec {
  readonly platform: "instagram" | "threads"
  readonly label: string
  readonly authorizeUrl: string
  readonly scopes: ReadonlyArray<string>
  /** The code exchange (POST form). */
  readonly codeUrl: string
  /** The long-lived exchange (GET) and its grant type. */
  readonly exchangeUrl: string
  readonly exchangeGrant: string
  /** The renewal of a long-lived token (GET) and its grant type. */
  readonly refreshUrl: string
  readonly refreshGrant: string
  readonly identity: (
    http: HttpClient.HttpClient,
    accessToken: string,
    secrets: ReadonlyArray<string>
  ) => Effect.Effect<Identity, PublishError>
}

/** Renew ten days before expiry, but not within the token's first 25 hours. */
export const renewLead = Duration.days(10)
export const minimumAge = Duration.hours(25)

const tokenSet = (token: MetaGraph.Token, now: DateTime.Utc): OAuth2.TokenSet => ({
  accessToken: token.accessToken,
  refreshToken: undefined,
  scope: undefined,
  expiresAt: token.expiresInSeconds === undefined
    ? Option.none()
    : Option.some(DateTime.addDuration(now, Duration.seconds(token.expiresInSeconds))),
  refreshExpiresAt: Option.none(),
  raw: token.body
})

const renewAt = (tokens: OAuth2.TokenSet, now: DateTime.Utc): string | undefined =>
  Option.match(tokens.expiresAt, {
    onNone: () => undefined,
    onSome: (expiresAt) => {
      const early = DateTime.subtractDuration(expiresAt, renewLead)
      const earliest = DateTime.addDuration(now, minimumAge)
      return String(DateTime.toEpochMillis(DateTime.max(early, earliest)))
    }
  })

const credentialsOf = (
  tokens: OAuth2.TokenSet,
  now: DateTime.Utc,
  extra: Readonly<Record<string, string | undefined>>
) => OAuth2.credentialsOf(tokens, { ...extra, refresh_at: renewAt(tokens, now) })

export const make = (spec: Spec, client: Client): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // Tokens travel in URLs: no spans carrying them.
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const secret = Redacted.value(client.clientSecret)

    const exchangeCode: OAuthProvider["exchangeCode"] = (request) =>
      Effect.gen(function*() {
        const short = yield* MetaGraph.postForm(
          http,
          spec.label,
          spec.codeUrl,
          {
            client_id: client.clientId,
            client_secret: secret,
            grant_type: "authorization_code",
            redirect_uri: request.redirectUri,
            code: request.code
          },
          [secret, request.code],
          "oauth"
        ).pipe(Effect.flatMap((body) => MetaGraph.tokenOf(spec.label, body)))
        const long = yield* MetaGraph.get(
          http,
          spec.label,
          spec.exchangeUrl,
          {
            grant_type: spec.exchangeGrant,
            client_secret: secret,
            access_token: short.accessToken
          },
          [secret, request.code],
          "oauth"
        ).pipe(Effect.flatMap((body) => MetaGraph.tokenOf(spec.label, body)))
        const now = yield* DateTime.now
        const tokens = tokenSet(long, now)
        const user = yield* spec.identity(http, tokens.accessToken, [secret, short.accessToken])
        return [
          {
            platformAccountId: user.id,
            accountName: user.name,
            avatarUrl: user.avatar,
            credentials: credentialsOf(tokens, now, { user_id: user.id, ...user.extra }),
            tokenExpiresAt: tokens.expiresAt
          } satisfies ConnectedIdentity
        ] as const
      })

    const refresh = (credentials: Credentials) =>
      Effect.gen(function*() {
        const stored = Redacted.value(credentials)
        const current = stored["access_token"]
        if (current === undefined || current === "") {
          return yield* publishError("auth", `${spec.label}: no access token stored; reconnect the account`)
        }
        const renewed = yield* MetaGraph.get(
          http,
          spec.label,
          spec.refreshUrl,
          {
            grant_type: spec.refreshGrant,
            access_token: current
          },
          [secret],
          "oauth"
        ).pipe(Effect.flatMap((body) => MetaGraph.tokenOf(spec.label, body)))
        const now = yield* DateTime.now
        const tokens = tokenSet(renewed, now)
        // The identity fields stay; the token, its expiry and the next renewal are replaced.
        const kept: Record<string, string> = { ...stored }
        delete kept.access_token
        delete kept.expires_at
        delete kept.refresh_at
        return {
          platformAccountId: stored["user_id"] ?? "",
          accountName: "",
          avatarUrl: "",
          credentials: { ...kept, ...credentialsOf(tokens, now, {}) },
          tokenExpiresAt: tokens.expiresAt
        } satisfies ConnectedIdentity
      })

    return {
      platform: spec.platform,
      authorizeUrl: (request) =>
        OAuth2.buildUrl(spec.authorizeUrl, {
          client_id: client.clientId,
          redirect_uri: request.redirectUri,
          response_type: "code",
          scope: spec.scopes.join(","),
          state: request.state
        }),
      exchangeCode,
      refresh
    } satisfies OAuthProvider
  })
