import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { SocialAccount } from "../domain/Account.js"
import type { Metrics } from "../domain/Destination.js"
import type { DestinationId, MediaId } from "../kernel/Ids.js"
import type { MediaKind } from "../domain/Media.js"
import type { Platform } from "../domain/Platform.js"
import type { PlatformSettings } from "../domain/Post.js"

/**
 * How a platform call failed, in the classes of the platform reference:
 * `auth` needs reconnection; `rate_limit` may carry the platform's delay; `transient` is retried with
 * back-off; the others will not succeed as sent.
 */
export const PublishErrorKind = Schema.Literal(
  "auth",
  "rate_limit",
  "duplicate",
  "too_long",
  "media",
  "transient",
  "permanent"
)
export type PublishErrorKind = typeof PublishErrorKind.Type

export class PublishError extends Schema.TaggedError<PublishError>()("PublishError", {
  kind: PublishErrorKind,
  message: Schema.String,
  /** For `rate_limit`: how long the platform asked us to wait, in seconds. */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {
  get retryable(): boolean {
    return this.kind === "transient" || this.kind === "rate_limit"
  }
}

/** Platform credentials as the adapter needs them: a flat map, secret as a whole. */
export type Credentials = Redacted.Redacted<Readonly<Record<string, string>>>

/** A medium handed to a platform: its bytes through the blob store, or a public URL where configured. */
export interface MediaRef {
  readonly id: MediaId
  readonly mimeType: string
  readonly kind: MediaKind
  readonly size: number
  readonly filename: string
  /** The bytes, streamed from the blob store (each run reads the file again). */
  readonly bytes: Stream.Stream<Uint8Array, unknown>
  /**
   * Bytes `start` to `end` (exclusive), read directly where the store can seek; chunked uploads use it
   * so that no publish path holds a whole medium. Absent, clients slice `bytes` as it streams.
   */
  readonly range?: (start: number, end: number) => Stream.Stream<Uint8Array, unknown>
  readonly publicUrl: Option.Option<string>
  /** The medium's alternative text for this platform (its `settings.altText`, else the medium's). */
  readonly altText?: string
  /** Pixels of what is sent (a rendition's own), when known: e.g. Bluesky's `aspectRatio`. */
  readonly width?: number
  readonly height?: number
  /** A video's duration, when known. */
  readonly durationMs?: number
}

export interface PublishPart {
  readonly content: string
  readonly media: ReadonlyArray<MediaRef>
}

export interface PublishRequest {
  readonly account: SocialAccount
  readonly credentials: Credentials
  /** The main post, with the platform's override applied. */
  readonly main: PublishPart
  readonly contentType: Option.Option<string>
  readonly settings: PlatformSettings
  /** Further posts of a thread, published in order as replies. */
  readonly thread: ReadonlyArray<PublishPart>
  /** The destination being published and its attempt number (1-based), e.g. for idempotency keys. */
  readonly destinationId?: DestinationId
  readonly attempt?: number
}

export interface PublishResult {
  readonly platformPostId: string
  readonly platformPostUrl: string
  /** Credentials the adapter renewed along the way (e.g. a refreshed session), to be saved. */
  readonly renewedCredentials?: Readonly<Record<string, string>>
  /**
   * What is sent once the main post is out (thread parts, a first comment). The engine runs it only
   * after `published` is recorded, outside the publish deadline and under its own (`followUpTimeout`),
   * so a slow or failing follow-up can never make it retry a post that is already out. It cannot fail:
   * a client logs what did not go through.
   */
  readonly followUps?: Effect.Effect<void>
}

/** What a connect flow learned about the account. */
export interface ConnectedIdentity {
  readonly platformAccountId: string
  readonly accountName: string
  readonly avatarUrl: string
  readonly credentials: Readonly<Record<string, string>>
  readonly tokenExpiresAt: Option.Option<DateTime.Utc>
}

/** What the metrics sweep knows about the post whose metrics it asks for. */
export interface MetricsContext {
  readonly account: SocialAccount
  readonly publishedAt: DateTime.Utc
}

/** What the engine asks a platform about an attempt whose outcome it does not know. */
export interface PublishedLookup {
  readonly account: SocialAccount
  readonly credentials: Credentials
  readonly destinationId: DestinationId
  /** The attempt in question (1-based). */
  readonly attempt: number
  /** The main post's text as it was sent (the platform's override applied). */
  readonly content: string
  /** The attempt's time window: from its claim to now. */
  readonly since: DateTime.Utc
  readonly until: DateTime.Utc
}

/**
 * The platform's answer: the post exists (`Found`), it certainly does not and never will from that
 * attempt (`Absent`), or the platform cannot say (`Unknown`).
 */
export type PublishedAnswer =
  | { readonly _tag: "Found"; readonly platformPostId: string; readonly platformPostUrl: string }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Unknown"; readonly reason: string }

/** A post's final id and URL on its platform. */
export interface ResolvedPost {
  readonly platformPostId: string
  readonly platformPostUrl: string
}

export interface PlatformClient {
  readonly platform: Platform
  readonly publish: (request: PublishRequest) => Effect.Effect<PublishResult, PublishError>
  /** Credential platforms: validates the submitted credentials live. */
  readonly connectWithCredentials?: (
    input: Readonly<Record<string, string>>
  ) => Effect.Effect<ConnectedIdentity, PublishError>
  /** Renews tokens before they expire, where the platform allows it. */
  readonly refresh?: (credentials: Credentials) => Effect.Effect<ConnectedIdentity, PublishError>
  /**
   * The post's current counts. `context` tells when it was published (clients of real platforms need
   * only the id; the sandbox grows its numbers with the time since).
   */
  readonly metrics?: (
    credentials: Credentials,
    platformPostId: string,
    context?: MetricsContext
  ) => Effect.Effect<Metrics, PublishError>
  /**
   * Several posts of one account in one call, where the platform allows it (at most `metricsBatchSize`
   * ids). A post missing from the answer is gone or not visible.
   */
  readonly metricsBatch?: (
    credentials: Credentials,
    platformPostIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, Metrics>, PublishError>
  readonly metricsBatchSize?: number
  /**
   * The post's final id and URL where the platform assigns them only after publishing (TikTok's
   * public video id, after moderation): `Some` once known and different from `platformPostId`, `None`
   * while still pending or when nothing changes. The metrics sweep asks before each fetch, so a post
   * is followed at every step of its schedule, and stores what it answers.
   */
  readonly resolvePost?: (
    credentials: Credentials,
    platformPostId: string,
    context: MetricsContext
  ) => Effect.Effect<Option.Option<ResolvedPost>, PublishError>
  /** How long a publish (the main post only) may take before it is treated as a transient failure. */
  readonly timeout?: Duration.DurationInput
  /** How long the follow-ups of a published post may take before they are abandoned; default `timeout`. */
  readonly followUpTimeout?: Duration.DurationInput
  /**
   * Whether an attempt whose worker died reached the platform. Optional: a client without it means
   * "cannot tell", and such a destination is failed with the unknown-outcome error.
   */
  readonly findPublished?: (lookup: PublishedLookup) => Effect.Effect<PublishedAnswer, PublishError>
}

/** The registry of platform clients the engine publishes through. */
export class Platforms extends Context.Tag("@herald/core/platforms/Platforms")<Platforms, {
  readonly get: (platform: Platform) => Option.Option<PlatformClient>
}>() {}
