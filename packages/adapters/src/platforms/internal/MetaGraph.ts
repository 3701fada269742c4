/**
 * The Meta Graph API plumbing shared by Facebook, Instagram and Threads (platform reference §5): the
 * versioned path prefixes, requests whose token travels as the `access_token` parameter, token
 * answers, and Meta's error shape `{error:{message,type,code,error_subcode,is_transient,…}}` (also
 * api.instagram.com's older `{error_type,code,error_message}`) mapped to the error classes.
 *
 * Every message is scrubbed of the secrets sent (codes, tokens, the client secret); requests are sent
 * with tracing disabled by the callers, since their URLs carry tokens.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as ApiVersions from "../ApiVersions.js"
import {
  field,
  isRecord,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField
} from "./PlatformHttp.js"

/**
 * The default Graph API version of graph.facebook.com and graph.instagram.com paths; the clients take
 * the configured one (`HERALD_GRAPH_VERSION`, see `ApiVersions`).
 */
export const version = ApiVersions.defaultGraphVersion

/** Meta's answers for a Graph version it no longer serves (code 12: "deprecated for versions …"; 2635). */
export const isVersionRetired = (code: number | undefined, text: string): boolean =>
  code === 12 || code === 2635 ||
  /deprecated version|version .*(is )?(deprecated|no longer (available|supported)|not supported|expired)|unsupported version/i
    .test(text)
/** The Threads API version of graph.threads.net paths. */
export const threadsVersion = "v1.0"

/** Meta's error object, from either shape. */
export interface MetaError {
  readonly message: string | undefined
  readonly type: string | undefined
  readonly code: number | undefined
  readonly subcode: number | undefined
  readonly isTransient: boolean
}

export const errorOf = (body: unknown): MetaError | undefined => {
  const error = field(body, "error")
  if (isRecord(error)) {
    return {
      message: stringField(error, "message"),
      type: stringField(error, "type"),
      code: numberField(error, "code"),
      subcode: numberField(error, "error_subcode"),
      isTransient: field(error, "is_transient") === true
    }
  }
  if (stringField(body, "error_message") !== undefined || stringField(body, "error_type") !== undefined) {
    return {
      message: stringField(body, "error_message"),
      type: stringField(body, "error_type"),
      code: numberField(body, "code"),
      subcode: undefined,
      isTransient: false
    }
  }
  if (typeof error === "string") {
    const description = stringField(body, "error_description")
    return {
      message: description === undefined ? error : `${error}: ${description}`,
      type: undefined,
      code: undefined,
      subcode: undefined,
      isTransient: false
    }
  }
  return undefined
}

/**
 * Meta's Graph error table (developers.facebook.com/docs/graph-api/guides/error-handling): 4 app, 17
 * user, 32 page, 341 application limit, 613 calls within a time window, 80001-80009 business use case.
 */
const rateCodes = new Set([4, 17, 32, 341, 613])
const isRateCode = (code: number) => rateCodes.has(code) || (code >= 80001 && code <= 80009)
const isPermissionCode = (code: number) => code === 10 || (code >= 200 && code <= 299)

/**
 * Seconds until access returns: the largest `estimated_time_to_regain_access` (minutes) in
 * `X-Business-Use-Case-Usage`, else `Retry-After`.
 */
const retryAfter = (headers: Readonly<Record<string, string>>): number | undefined => {
  const usage = headers["x-business-use-case-usage"]
  if (usage !== undefined) {
    try {
      const parsed = JSON.parse(usage) as unknown
      let minutes = 0
      if (isRecord(parsed)) {
        for (const entries of Object.values(parsed)) {
          if (!Array.isArray(entries)) continue
          for (const entry of entries) {
            minutes = Math.max(minutes, numberField(entry, "estimated_time_to_regain_access") ?? 0)
          }
        }
      }
      if (minutes > 0) return minutes * 60
    } catch {
      // not JSON: fall through to Retry-After
    }
  }
  return secondsHeader(headers, "retry-after")
}

/**
 * Where the request went: `oauth` for the token endpoints, where anything that is not a rate limit or
 * an outage is a refused code, secret or token (`auth`); `graph` for API calls, classified by the
 * reference's table (code 100 and 368 are `permanent` there).
 */
export type Context = "oauth" | "graph"

/** A Meta error answer as one of the reference's classes. */
export const classify = (
  label: string,
  response: RawResponse,
  secrets: ReadonlyArray<string | undefined>,
  context: Context = "graph"
): PublishError => {
  const error = errorOf(response.body)
  const code = error?.code
  const text = error?.message ?? `HTTP ${response.status}`
  // api.instagram.com's `code` repeats the HTTP status; Graph codes are worth showing.
  const codes = code === undefined || code === response.status
    ? ""
    : ` (code ${code}${error?.subcode === undefined ? "" : `, subcode ${error.subcode}`})`
  const message = `${label}: ${scrub(`${text}${codes}`, secrets)}`
  if (response.status === 429 || (code !== undefined && isRateCode(code))) {
    return publishError("rate_limit", message, retryAfter(response.headers))
  }
  if (response.status === 426 || isVersionRetired(code, text)) {
    // Retrying on the same version cannot succeed. Threads' version is fixed in code.
    return publishError(
      "permanent",
      label === "Threads"
        ? `${message} (configuration: the Threads API version is no longer served)`
        : `${message} (${ApiVersions.raiseHint("graph")})`
    )
  }
  if (
    code === 190 || (code !== undefined && isPermissionCode(code)) ||
    /Error validating access token|REVOKED_ACCESS_TOKEN|validating (client|application) secret/i.test(text)
  ) {
    return publishError("auth", message)
  }
  if (code === 1 || code === 2 || error?.isTransient === true || response.status >= 500) {
    return publishError("transient", message)
  }
  if (code === 506 || code === 1366051) return publishError("duplicate", message)
  if (context === "oauth") return publishError("auth", message)
  if (code === 100 || code === 368) return publishError("permanent", message)
  if (response.status === 401 || response.status === 403) return publishError("auth", message)
  return publishError("permanent", message)
}

const withParams = (url: string, params: Readonly<Record<string, string | undefined>>): string => {
  const out = new URL(url)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) out.searchParams.set(key, value)
  return out.toString()
}

const execute = (
  http: HttpClient.HttpClient,
  label: string,
  request: HttpClientRequest.HttpClientRequest,
  secrets: ReadonlyArray<string | undefined>,
  context: Context
): Effect.Effect<unknown, PublishError> =>
  Effect.gen(function*() {
    const response = yield* send(http, HttpClientRequest.acceptJson(request), label)
    if (response.status < 200 || response.status >= 300) return yield* classify(label, response, secrets, context)
    // Meta sometimes answers 200 with an error object.
    if (isRecord(field(response.body, "error"))) {
      return yield* classify(label, { ...response, status: 400 }, secrets, context)
    }
    if (response.body === undefined) return yield* publishError("transient", `${label}: unexpected response`)
    return response.body
  })

/** `GET url?params`; the token, where needed, is the `access_token` parameter. */
export const get = (
  http: HttpClient.HttpClient,
  label: string,
  url: string,
  params: Readonly<Record<string, string | undefined>>,
  secrets: ReadonlyArray<string | undefined>,
  context: Context = "graph"
): Effect.Effect<unknown, PublishError> =>
  execute(http, label, HttpClientRequest.get(withParams(url, params)), [...secrets, params["access_token"]], context)

/** `POST url` with a form body. */
export const postForm = (
  http: HttpClient.HttpClient,
  label: string,
  url: string,
  form: Readonly<Record<string, string | undefined>>,
  secrets: ReadonlyArray<string | undefined>,
  context: Context = "graph"
): Effect.Effect<unknown, PublishError> => {
  const body: Record<string, string> = {}
  for (const [key, value] of Object.entries(form)) if (value !== undefined) body[key] = value
  return execute(
    http,
    label,
    HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUrlParams(body)),
    [...secrets, form["access_token"]],
    context
  )
}

export interface Token {
  readonly accessToken: string
  /** `expires_in`, when given. */
  readonly expiresInSeconds: number | undefined
  readonly body: unknown
}

/**
 * A token answer: `{access_token, token_type?, expires_in?, user_id?}`, or the same inside `data[0]`
 * (api.instagram.com documents that shape for its code exchange).
 */
export const tokenOf = (label: string, body: unknown): Effect.Effect<Token, PublishError> => {
  const data = field(body, "data")
  const entry = Array.isArray(data) && data.length > 0 ? data[0] : body
  const accessToken = stringField(entry, "access_token")
  if (accessToken === undefined || accessToken === "") {
    return Effect.fail(publishError("transient", `${label}: unexpected token response`))
  }
  const expiresIn = numberField(entry, "expires_in") ?? Number(stringField(entry, "expires_in"))
  return Effect.succeed({
    accessToken,
    expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(expiresIn) : undefined,
    body: entry
  })
}
