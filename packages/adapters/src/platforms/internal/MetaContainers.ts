/**
 * What the Instagram and Threads publishing clients share (platform reference §5, §7, §8): Graph calls
 * whose token travels as the `access_token` parameter, Meta errors classified by `MetaGraph` and then
 * refined with the content-publishing subcodes, media containers polled until they are ready, and the
 * refusal of media that has no public URL (Meta fetches every medium itself).
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { MediaRef, PublishError, PublishErrorKind } from "@herald/core/platforms/Platforms"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as MediaBytes from "./MediaBytes.js"
import * as MetaGraph from "./MetaGraph.js"
import { failure, field, isRecord, publishError, type RawResponse, scrub, send, stringField } from "./PlatformHttp.js"

/** Meta's Instagram error table, the source of the retry classes below. */
export const errorCodesPage =
  "https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes"

/**
 * Content-publishing subcodes (reference §7 Errors, §8; Meta's error table): the class each one means,
 * whatever the top-level code (the publishing limit, for one, arrives as code 9). Those Meta's table
 * says to try again are `transient`, so the dispatcher retries the post with its backoff; every retry
 * makes new containers, which is what 2207020 and 2207053 prescribe ("generate a new container and use
 * it to try again"). 2207008, a container Meta could not publish for the moment, is also first retried
 * in place (`publishRetries`).
 */
const subcodeKinds: ReadonlyMap<number, PublishErrorKind> = new Map<number, PublishErrorKind>([
  [2207042, "rate_limit"],
  [2207010, "too_long"],
  [2207004, "media"],
  [2207005, "media"],
  [2207009, "media"],
  [36003, "media"],
  [2207026, "media"],
  [2207052, "media"],
  [2207077, "media"],
  [2207028, "media"],
  [2207057, "media"],
  // "Instagram server error. Try again."
  [2207001, "transient"],
  // "A timeout occured while downloading the media. Try again."
  [2207003, "transient"],
  // "Temporary error publishing a container. Try again 1-2 times in the next 30 seconds to 2 minutes."
  [2207008, "transient"],
  // "The media you are trying to access has expired": a new container, then again.
  [2207020, "transient"],
  // "Failed to create a media container. Try again."
  [2207032, "transient"],
  // "An unknown error occured during upload. Generate a new container and use it to try again."
  [2207053, "transient"],
  [2207027, "transient"],
  [2207050, "permanent"],
  [2207051, "permanent"],
  [4279013, "permanent"],
  [33, "auth"]
])

/** Subcodes whose prescribed retry needs a new container (what the next attempt makes). */
export const newContainerSubcodes: ReadonlySet<number> = new Set([2207020, 2207053])

/** Whether a classified error is Meta's 2207008 ("temporary error publishing a container"). */
export const isTemporaryPublishError = (error: PublishError): boolean => /\bsubcode 2207008\b/.test(error.message)

/** The class a content-publishing subcode means, if it is one of the reference's. */
export const subcodeKind = (subcode: number | undefined): PublishErrorKind | undefined =>
  subcode === undefined ? undefined : subcodeKinds.get(subcode)

/** A Meta error answer as one of the reference's classes, with the publishing subcodes and messages. */
export const classify = (
  label: string,
  response: RawResponse,
  secrets: ReadonlyArray<string | undefined>
): PublishError => {
  const base = MetaGraph.classify(label, response, secrets)
  const error = MetaGraph.errorOf(response.body)
  const bySubcode = subcodeKind(error?.subcode)
  if (bySubcode !== undefined) {
    const retry = error?.subcode !== undefined && newContainerSubcodes.has(error.subcode)
      ? " (retried with a new container)"
      : bySubcode === "transient"
      ? " (retried, as Meta's error table prescribes)"
      : ""
    return publishError(bySubcode, `${base.message}${retry}`, base.retryAfterSeconds)
  }
  if (base.kind !== "permanent") return base
  const text = `${error?.message ?? ""} ${stringField(field(response.body, "error"), "error_user_msg") ?? ""}`
  if (/session has been invalidated|not an instagram business/i.test(text)) return publishError("auth", base.message)
  if (/too long|at most \d+ characters|exceeds? the maximum/i.test(text)) return publishError("too_long", base.message)
  const mediaProblem =
    /could not be fetched|aspect ratio|unsupported (image|video|media)|too (little|few) or too many attachments|media type/i
  if (mediaProblem.test(text)) {
    return publishError("media", base.message)
  }
  return base
}

export type Params = Readonly<Record<string, string | undefined>>

/** A Graph client for one token: `get` with query parameters, `post` with a form body. */
export interface Graph {
  readonly get: (url: string, params: Params) => Effect.Effect<unknown, PublishError>
  readonly post: (url: string, params: Params) => Effect.Effect<unknown, PublishError>
  /** `POST url` as multipart/form-data: the params plus one file field (e.g. a photo's `source`). */
  readonly postFile: (
    url: string,
    params: Params,
    file: { readonly field: string; readonly media: MediaRef }
  ) => Effect.Effect<unknown, PublishError>
}

/** How a Graph client classifies an error answer; `classify` above unless a platform refines it. */
export type Classify = (
  label: string,
  response: RawResponse,
  secrets: ReadonlyArray<string | undefined>
) => PublishError

export const graph = (
  http: HttpClient.HttpClient,
  label: string,
  token: string,
  classifyError: Classify = classify
): Graph => {
  const execute = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.gen(function*() {
      const response = yield* send(http, HttpClientRequest.acceptJson(request), label)
      const ok = response.status >= 200 && response.status < 300
      // Meta sometimes answers 200 with an error object.
      if (!ok || isRecord(field(response.body, "error"))) {
        return yield* classifyError(label, ok ? { ...response, status: 400 } : response, [token])
      }
      if (response.body === undefined) return yield* publishError("transient", `${label}: unexpected response`)
      return response.body
    })
  const defined = (params: Params) => {
    const out: Record<string, string> = {}
    for (const [key, value] of Object.entries(params)) if (value !== undefined) out[key] = value
    return { ...out, access_token: token }
  }
  return {
    get: (url, params) => execute(HttpClientRequest.get(url).pipe(HttpClientRequest.setUrlParams(defined(params)))),
    post: (url, params) => execute(HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUrlParams(defined(params)))),
    postFile: (url, params, file) => {
      // The file streams from the store into the form as it is sent.
      const form = MediaBytes.multipart([
        ...Object.entries(defined(params)).map(([key, value]) => MediaBytes.field(key, value)),
        MediaBytes.file(file.field, file.media)
      ])
      return execute(HttpClientRequest.post(url).pipe(HttpClientRequest.setBody(form)))
    }
  }
}

/** The `id` of a creation or publish answer. */
export const idOf = (label: string, what: string, body: unknown): Effect.Effect<string, PublishError> => {
  const id = stringField(body, "id")
  return id === undefined || id === ""
    ? Effect.fail(publishError("transient", `${label}: unexpected ${what} response`))
    : Effect.succeed(id)
}

/**
 * The public URL of every medium, or a `media` error naming the first one without: Meta fetches media
 * from the web, and Herald only has public URLs when the operator sets `HERALD_MEDIA_PUBLIC_URL`.
 */
export const publicUrls = (
  label: string,
  media: ReadonlyArray<MediaRef>
): Effect.Effect<ReadonlyArray<string>, PublishError> => {
  const urls: Array<string> = []
  for (const medium of media) {
    if (Option.isNone(medium.publicUrl)) {
      return Effect.fail(publishError(
        "media",
        `${label}: ${medium.filename} has no public URL, and ${label} fetches media from the web; ` +
          "set HERALD_MEDIA_PUBLIC_URL on the server so media is served publicly"
      ))
    }
    urls.push(medium.publicUrl.value)
  }
  return Effect.succeed(urls)
}

export interface PollOptions {
  readonly label: string
  readonly graph: Graph
  readonly token: string
  /** `{api}/{version}/{container-id}`. */
  readonly url: string
  /** The fields to ask for, e.g. `status_code,status`. */
  readonly fields: string
  /** Reads the state (`IN_PROGRESS`, `FINISHED`, …) out of an answer. */
  readonly state: (body: unknown) => string | undefined
  /** Reads the failure detail out of an answer. */
  readonly detail: (body: unknown) => string | undefined
  readonly what: string
  readonly interval: Duration.DurationInput
  readonly maxPolls: number
}

/**
 * Polls a container until it is `FINISHED` (or already `PUBLISHED`). `ERROR` is a `media` failure (or
 * the class its subcode names), `EXPIRED` a `permanent` one; still in progress after `maxPolls` is
 * `transient`, since a later attempt creates fresh containers.
 */
export const awaitContainer = (options: PollOptions): Effect.Effect<void, PublishError> =>
  Effect.gen(function*() {
    const { label } = options
    for (let poll = 0;; poll++) {
      const body = yield* options.graph.get(options.url, { fields: options.fields })
      const state = options.state(body)?.toUpperCase()
      if (state === "FINISHED" || state === "PUBLISHED") return
      if (state === "ERROR" || state === "EXPIRED") {
        const detail = options.detail(body)
        const reason = scrub(
          `${label}: ${options.what} failed with status ${state}${detail === undefined ? "" : `: ${detail}`}`,
          [options.token]
        )
        if (state === "EXPIRED") return yield* publishError("permanent", reason)
        const code = /\b(\d{4,})\b/.exec(detail ?? "")?.[1]
        const kind = subcodeKind(code === undefined ? undefined : Number(code))
        return yield* publishError(kind ?? "media", reason)
      }
      if (poll + 1 >= options.maxPolls) {
        return yield* publishError("transient", `${label}: ${options.what} is still being processed`)
      }
      yield* Effect.sleep(options.interval)
    }
  })

/**
 * A refused rupload (`rupload.facebook.com`, Facebook reels and Instagram resumable containers): it
 * answers `{success:true}`, or `{debug_info:{retriable,type,message}}` when it refuses.
 */
export const ruploadError = (label: string, response: RawResponse, token: string): PublishError => {
  const info = field(response.body, "debug_info")
  const reason = stringField(info, "message") ?? MetaGraph.errorOf(response.body)?.message ?? `HTTP ${response.status}`
  const kind: PublishErrorKind = response.status >= 500 || field(info, "retriable") === true
    ? "transient"
    : response.status === 401 || /oauth|access token/i.test(reason)
    ? "auth"
    : response.status === 429
    ? "rate_limit"
    : "media"
  return failure(label, kind, `video upload refused: ${reason}`, [token])
}
