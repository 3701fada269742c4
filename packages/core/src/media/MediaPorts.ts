/**
 * The services the media library's use cases need from outside: the probe of a file's first bytes,
 * the SSRF-guarded URL fetcher, upload signing settings, the operator's upload budget and whether
 * platforms must be able to fetch media by public URL.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** What the first bytes of a file are (an adapter reads magic bytes and cheap header fields). */
export interface Probe {
  readonly mime: string
  readonly width: Option.Option<number>
  readonly height: Option.Option<number>
  readonly durationMs: Option.Option<number>
}

export class MediaProbe extends Context.Tag("@herald/core/MediaLibrary/MediaProbe")<MediaProbe, {
  /** How many leading bytes `inspect` wants. */
  readonly headBytes: number
  /** `none` when the bytes are not recognised. */
  readonly inspect: (head: Uint8Array) => Effect.Effect<Option.Option<Probe>>
}>() {}

export const UrlFetchFailure = Schema.Literal("refused", "network", "http_status", "timeout", "too_large")
export type UrlFetchFailure = typeof UrlFetchFailure.Type

export class UrlFetchError extends Schema.TaggedError<UrlFetchError>()("UrlFetchError", {
  reason: UrlFetchFailure,
  /** Names the host at most, never the URL's path or query. */
  message: Schema.String
}) {}

export interface FetchedUrl {
  readonly contentType: Option.Option<string>
  readonly contentLength: Option.Option<number>
  /** From `Content-Disposition`, else the last path segment of the final URL. */
  readonly filename: Option.Option<string>
  /** The body; the fetcher bounds the whole exchange in time. */
  readonly body: Stream.Stream<Uint8Array, UrlFetchError>
}

/** Fetches a user-supplied URL behind the SSRF guard; the connection lives as long as the scope. */
export class UrlFetcher extends Context.Tag("@herald/core/MediaLibrary/UrlFetcher")<UrlFetcher, {
  readonly fetch: (url: string) => Effect.Effect<FetchedUrl, UrlFetchError, Scope.Scope>
}>() {}

/** Signing of upload URLs. */
export class MediaSettings extends Context.Tag("@herald/core/MediaLibrary/MediaSettings")<MediaSettings, {
  readonly signingKey: Redacted.Redacted<string>
  /** How long an upload URL stays valid; 3600 by default. */
  readonly uploadTtlSeconds?: number
}>() {}

export interface Budget {
  readonly hour: number
  readonly day: number
}

export const defaultBudget: Budget = { hour: 60, day: 300 }

/** Optional: an operator's own upload budget (otherwise the spec's 60 per hour and 300 per day). */
export class MediaBudget extends Context.Tag("@herald/core/MediaLibrary/MediaBudget")<MediaBudget, Budget>() {}

/**
 * Optional: whether posts bound for platforms that fetch media themselves (Instagram images, Threads)
 * need a public URL for it at create time; `true` unless provided. The sandbox fetches nothing: `false`.
 */
export class PublicUrlsRequired extends Context.Tag("@herald/core/MediaLibrary/PublicUrlsRequired")<
  PublicUrlsRequired,
  boolean
>() {}

export const defaultUploadTtlSeconds = 3600
