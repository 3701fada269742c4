/**
 * The parts of the OAuth 2.0 authorization-code flow every platform shares: the authorize URL, the
 * token endpoint (code and refresh grants, client authentication in the body or as HTTP Basic), the
 * token response, and how a refusal maps to the error classes (`auth` for a refused code or refresh,
 * `rate_limit`/`transient` for a platform that is busy or down).
 *
 * Error messages carry the platform's `error` and `error_description`, scrubbed of every secret sent.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  field,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField
} from "../platforms/internal/PlatformHttp.js"

export interface Client {
  readonly clientId: string
  readonly clientSecret?: Redacted.Redacted<string> | undefined
}

/** `base?k=v&…`, keeping any query the base already has. */
export const buildUrl = (base: string, params: Readonly<Record<string, string | undefined>>): string => {
  const url = new URL(base)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.toString()
}

export interface TokenSet {
  readonly accessToken: string
  readonly refreshToken: string | undefined
  readonly scope: string | undefined
  /** Of the access token, from `expires_in`; none when the platform gave no lifetime. */
  readonly expiresAt: Option.Option<DateTime.Utc>
  /** Of the refresh token, from `refresh_token_expires_in` (Pinterest, LinkedIn) or `refresh_expires_in` (TikTok). */
  readonly refreshExpiresAt: Option.Option<DateTime.Utc>
  /** The whole response body, for platform-specific fields (`open_id`, `user_id`, …). */
  readonly raw: unknown
}

/** A platform's error reply as one of the reference's classes. */
export const classify = (label: string, response: RawResponse, secrets: ReadonlyArray<string | undefined>) => {
  const error = stringField(response.body, "error") ?? stringField(field(response.body, "error"), "code")
  const description = stringField(response.body, "error_description") ??
    stringField(response.body, "message") ??
    stringField(field(response.body, "error"), "message") ??
    stringField(response.body, "detail")
  const reason = scrub(
    [error, description].filter((s) => s !== undefined && s !== "").join(": ") || `HTTP ${response.status}`,
    secrets
  )
  const message = `${label}: ${reason}`
  if (response.status === 429) {
    return publishError("rate_limit", message, secondsHeader(response.headers, "retry-after"))
  }
  if (response.status >= 500) return publishError("transient", message)
  return publishError("auth", message)
}

export interface TokenRequest {
  readonly label: string
  readonly url: string
  readonly client: Client
  /** `basic`: HTTP Basic with id and secret (X, Pinterest); `body`: both as form fields. */
  readonly clientAuth: "basic" | "body"
  /** The form parameter carrying the client id (`client_key` on TikTok). */
  readonly clientIdParam?: string
  readonly clientSecretParam?: string
  readonly form: Readonly<Record<string, string | undefined>>
  /** Extra secrets to keep out of messages (the code, the refresh token). */
  readonly secrets: ReadonlyArray<string | undefined>
}

export const requestToken = (
  http: HttpClient.HttpClient,
  request: TokenRequest
): Effect.Effect<TokenSet, PublishError> =>
  Effect.gen(function*() {
    const secret = request.client.clientSecret === undefined ? undefined : Redacted.value(request.client.clientSecret)
    const form: Record<string, string> = {}
    for (const [key, value] of Object.entries(request.form)) if (value !== undefined) form[key] = value
    form[request.clientIdParam ?? "client_id"] = request.client.clientId
    if (request.clientAuth === "body" && secret !== undefined) {
      form[request.clientSecretParam ?? "client_secret"] = secret
    }
    let httpRequest = HttpClientRequest.post(request.url).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.bodyUrlParams(form)
    )
    if (request.clientAuth === "basic" && secret !== undefined) {
      httpRequest = HttpClientRequest.basicAuth(httpRequest, request.client.clientId, secret)
    }
    const secrets = [secret, ...request.secrets]
    const response = yield* send(http, httpRequest, request.label)
    if (response.status < 200 || response.status >= 300) return yield* classify(request.label, response, secrets)
    const accessToken = stringField(response.body, "access_token")
    if (accessToken === undefined) {
      // Some platforms answer 200 with an error body.
      return yield* classify(request.label, { ...response, status: 400 }, secrets)
    }
    const now = yield* DateTime.now
    const after = (field: string): Option.Option<DateTime.Utc> => {
      const seconds = numberField(response.body, field) ?? Number(stringField(response.body, field))
      return Number.isFinite(seconds) && seconds > 0
        ? Option.some(DateTime.addDuration(now, `${Math.floor(seconds)} seconds`))
        : Option.none()
    }
    return {
      accessToken,
      refreshToken: stringField(response.body, "refresh_token"),
      scope: stringField(response.body, "scope"),
      expiresAt: after("expires_in"),
      refreshExpiresAt: Option.orElse(after("refresh_token_expires_in"), () => after("refresh_expires_in")),
      raw: response.body
    } satisfies TokenSet
  })

/** A GET with the bearer token; a refusal is classified like a token-endpoint error. */
export const getJson = (
  http: HttpClient.HttpClient,
  label: string,
  url: string,
  accessToken: string,
  headers: Readonly<Record<string, string>> = {}
): Effect.Effect<unknown, PublishError> =>
  Effect.gen(function*() {
    const response = yield* send(
      http,
      HttpClientRequest.get(url).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.bearerToken(accessToken),
        HttpClientRequest.setHeaders(headers)
      ),
      label
    )
    if (response.status < 200 || response.status >= 300) return yield* classify(label, response, [accessToken])
    return response.body
  })

/**
 * The stored credentials of an OAuth account: the token pair, the access token's expiry as epoch
 * milliseconds in `expires_at` (what the refresh sweep schedules by), plus what the platform adds.
 */
export const credentialsOf = (
  tokens: TokenSet,
  extra: Readonly<Record<string, string | undefined>> = {}
): Record<string, string> => {
  const out: Record<string, string> = { access_token: tokens.accessToken }
  if (tokens.refreshToken !== undefined) out.refresh_token = tokens.refreshToken
  if (tokens.scope !== undefined) out.scope = tokens.scope
  if (Option.isSome(tokens.expiresAt)) out.expires_at = String(DateTime.toEpochMillis(tokens.expiresAt.value))
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) out[key] = value
  return out
}

/**
 * When the connection stops working without the person: with a refresh token, when that expires
 * (none when it does not); without one, when the access token does. This is the account's
 * `tokenExpiresAt`, which its health reports; a short-lived access token that is renewed in the
 * background is not a reason to warn.
 */
export const connectionExpiry = (tokens: TokenSet): Option.Option<DateTime.Utc> =>
  tokens.refreshToken === undefined ? tokens.expiresAt : tokens.refreshExpiresAt

/** Stored credentials without a refresh token cannot be renewed. */
export const requireRefreshToken = (
  label: string,
  stored: Readonly<Record<string, string>>
): Effect.Effect<string, PublishError> => {
  const token = stored["refresh_token"]
  return token === undefined || token === ""
    ? Effect.fail(
      new PublishError({ kind: "auth", message: `${label}: no refresh token stored; reconnect the account` })
    )
    : Effect.succeed(token)
}

export const unexpected = (label: string, what: string) =>
  publishError("transient", `${label}: unexpected ${what} response`)
