/**
 * LinkedIn's versioned REST API (platform reference §9): every call carries the stored `access_token`
 * as a Bearer token, and every `/rest/*` call the `LinkedIn-Version` and
 * `X-Restli-Protocol-Version: 2.0.0` headers. A failed call is classified into the reference's error
 * classes (§9 Errors), with the token scrubbed from the message.
 */
import type * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import {
  failureReason,
  field,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField
} from "./internal/PlatformHttp.js"
import * as ApiVersions from "./ApiVersions.js"

export const restliProtocolVersion = "2.0.0"

export const label = "LinkedIn"

/** A failed API call, before classification. */
class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly response: RawResponse
}> {}

/** A 403: LinkedIn refused for lack of a permission or a role (not a dead token). */
export const isAccessDenied = (error: PublishError): boolean =>
  error.kind === "auth" && /\b403\b|ACCESS_DENIED|permission/i.test(error.message)

/** Every human-readable piece of a LinkedIn error body: `message`, `code` and validation `inputErrors`. */
const errorTexts = (body: unknown): ReadonlyArray<string> => {
  const texts: Array<string> = []
  const message = stringField(body, "message")
  if (message !== undefined) texts.push(message)
  const inputErrors = field(field(body, "errorDetails"), "inputErrors")
  if (Array.isArray(inputErrors)) {
    for (const error of inputErrors) {
      const text = stringField(error, "description") ?? stringField(error, "code")
      if (text !== undefined && !texts.includes(text)) texts.push(text)
    }
  }
  // The OAuth-style body some gateways answer with.
  const error = stringField(body, "error")
  const description = stringField(body, "error_description")
  if (error !== undefined) texts.push(description === undefined ? error : `${error}: ${description}`)
  return texts
}

const codesOf = (body: unknown): string => {
  const codes = [stringField(body, "code") ?? "", String(numberField(body, "serviceErrorCode") ?? "")]
  const inputErrors = field(field(body, "errorDetails"), "inputErrors")
  if (Array.isArray(inputErrors)) { for (const error of inputErrors) codes.push(stringField(error, "code") ?? "") }
  return codes.join(" ")
}

/**
 * Seconds until LinkedIn accepts calls again. LinkedIn sends no standard reset header: `Retry-After`
 * when present; else, for a daily quota ("… DAY limit …"), until the next midnight UTC, when the
 * quotas reset; else a minute.
 */
export const retryAfterSeconds = (
  headers: Readonly<Record<string, string>>,
  text: string,
  nowMillis: number
): number => {
  const header = secondsHeader(headers, "retry-after")
  if (header !== undefined) return header
  if (/\bday\b/i.test(text)) {
    const day = 86_400_000
    return Math.ceil((Math.floor(nowMillis / day) * day + day - nowMillis) / 1000)
  }
  return 60
}

export type Context = "post" | "upload" | "comment" | "metrics"

/** Maps a failed call to the reference's error classes (§9 Errors). */
export const classify = (
  response: RawResponse,
  context: Context,
  nowMillis: number,
  secrets: ReadonlyArray<string | undefined>,
  version?: string
): PublishError => {
  const texts = errorTexts(response.body)
  const message = `${label}: ${scrub(failureReason(response, texts), secrets)}`
  const all = `${texts.join(" ")} ${codesOf(response.body)}`.toLowerCase()
  const status = response.status
  if (status === 429 || /throttle|too many requests/.test(all)) {
    return publishError("rate_limit", message, retryAfterSeconds(response.headers, texts.join(" "), nowMillis))
  }
  if (status >= 500 || all.includes("unable to obtain activity")) return publishError("transient", message)
  if (status === 426 || /version .*not active|nonexistent_version|version_missing/.test(all)) {
    // A configuration problem: retrying with the same version header cannot succeed.
    return publishError("permanent", `${message} (${ApiVersions.raiseHint("linkedin", version)})`)
  }
  if (
    status === 401 || /invalid_access_token|expired_access_token|revoked_access_token/.test(all) ||
    (status === 403 && !all.includes("duplicate"))
  ) {
    return publishError("auth", message)
  }
  if (all.includes("duplicate")) return publishError("duplicate", message)
  if (/too long|exceeds|maximum length|max length|length .*commentary|commentary .*length/.test(all)) {
    return publishError("too_long", message)
  }
  if (
    context === "upload" || status === 413 ||
    /urn:li:(image|video|document)|processing_failed|media|multiimage|image|video|document/.test(all)
  ) {
    return publishError("media", message)
  }
  return publishError("permanent", message)
}

export const unexpected = (what: string) => publishError("transient", `LinkedIn: unexpected ${what} response`)

/** The API of one LinkedIn client: where it is and which version it speaks. */
export interface RestApi {
  /** The API's origin, e.g. `https://api.linkedin.com`. */
  readonly url: string
  /** A versioned `/rest/*` call; a non-2xx answer fails classified. */
  readonly rest: (
    token: string,
    context: Context,
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<RawResponse, PublishError>
  /** A PUT of streamed bytes (the whole file, or one part of a video). */
  readonly putBytes: (token: string, url: string, body: HttpBody.HttpBody) => Effect.Effect<RawResponse, PublishError>
}

export const make = (options: {
  readonly url: string
  /** The `LinkedIn-Version` header (YYYYMM). */
  readonly version: string
}): Effect.Effect<RestApi, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const version = options.version

    /** One authenticated call; a non-2xx answer is an `ApiFailure`. */
    const call = (
      token: string,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, ApiFailure | PublishError> =>
      Effect.gen(function*() {
        const response = yield* send(client, request.pipe(HttpClientRequest.bearerToken(token)), label)
        if (response.status < 200 || response.status >= 300) return yield* new ApiFailure({ response })
        return response
      })

    const classified = (
      token: string,
      context: Context,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, PublishError> =>
      call(token, request).pipe(
        Effect.catchTag("ApiFailure", (failure) =>
          Effect.flatMap(
            Clock.currentTimeMillis,
            (now) => Effect.fail(classify(failure.response, context, now, [token], version))
          ))
      )

    const rest = (
      token: string,
      context: Context,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<RawResponse, PublishError> =>
      classified(
        token,
        context,
        request.pipe(
          HttpClientRequest.acceptJson,
          HttpClientRequest.setHeaders({
            "LinkedIn-Version": version,
            "X-Restli-Protocol-Version": restliProtocolVersion
          })
        )
      )

    const putBytes = (token: string, url: string, body: HttpBody.HttpBody) =>
      classified(token, "upload", HttpClientRequest.put(url).pipe(HttpClientRequest.setBody(body)))

    return { url: options.url, rest, putBytes }
  })
