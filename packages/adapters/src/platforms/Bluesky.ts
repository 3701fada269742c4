/**
 * Bluesky over AT Protocol XRPC (platform reference §2): the client the registry holds. An account
 * connects with a handle and an app password, kept as a session (`BlueskySession`); a post is a
 * record with its embed and its thread (`BlueskyPublish`, `BlueskyEmbeds`); an unknown outcome is
 * looked up in the account's repo (`BlueskyLookup`); counts come from the public AppView. Every call
 * goes through the address guard (`BlueskyXrpc`).
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import { Metrics } from "@herald/core/domain/Destination"
import type { Credentials, PlatformClient, PublishError } from "@herald/core/platforms/Platforms"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as AddressGuard from "../net/AddressGuard.js"
import { field, numberField, publishError, stringField, trimSlash } from "./internal/PlatformHttp.js"
import * as BlueskyLookup from "./BlueskyLookup.js"
import * as BlueskyPublish from "./BlueskyPublish.js"
import * as BlueskySession from "./BlueskySession.js"
import * as BlueskyXrpc from "./BlueskyXrpc.js"

export interface Options {
  /** Where sessions are created; `https://bsky.social` unless the account names its own. */
  readonly service?: string
  /** The video service; `https://video.bsky.app`. */
  readonly videoService?: string
  /** The public AppView used for metrics; `https://public.api.bsky.app`. */
  readonly appView?: string
  /** Accept a user-supplied `service` over plain http (tests and local PDSes only). */
  readonly allowInsecureService?: boolean
  /**
   * Operator switch (`HERALD_BLUESKY_ALLOW_PRIVATE=true`): a user-supplied `service`, or the PDS a
   * DID document names, may be on a private or local address (a self-hosted PDS on a private
   * network). Off: they pass the same address guard as webhooks. The origins of `service`,
   * `videoService` and `appView` above are the operator's own and are not range-checked (exact
   * scheme, host and port: another port on the same host is checked like any user address).
   */
  readonly allowPrivate?: boolean
  /** How the guard resolves host names (tests); the system resolver by default. */
  readonly resolve?: AddressGuard.Resolver
  /** Extra trusted CA certificates (PEM), for a self-hosted PDS behind a private CA. */
  readonly ca?: string
  /** Pause between video job polls; 2 seconds. */
  readonly videoPollInterval?: Duration.DurationInput
  /** Polls before a video job counts as stuck (transient); 150. */
  readonly videoMaxPolls?: number
  /** Fetches link card pages and thumbnails (the media importer's, behind its address guard); no cards without. */
  readonly linkCards?: UrlFetcher["Type"]
}

export const defaultService = "https://bsky.social"
export const defaultVideoService = "https://video.bsky.app"
export const defaultAppView = "https://public.api.bsky.app"

export const make = (options: Options = {}): Effect.Effect<PlatformClient> =>
  Effect.gen(function*() {
    const defaultServiceUrl = trimSlash(options.service ?? defaultService)
    const videoService = trimSlash(options.videoService ?? defaultVideoService)
    const appView = trimSlash(options.appView ?? defaultAppView)
    const xrpc = yield* BlueskyXrpc.make({
      allowPrivate: options.allowPrivate === true,
      allowPlainHttp: options.allowInsecureService === true,
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
      trustedOrigins: [defaultServiceUrl, videoService, appView],
      ...(options.ca === undefined ? {} : { ca: options.ca })
    })
    const publishOptions: BlueskyPublish.PublishOptions = {
      defaultService: defaultServiceUrl,
      videoService,
      videoPollInterval: options.videoPollInterval ?? Duration.seconds(2),
      videoMaxPolls: options.videoMaxPolls ?? 150,
      linkCards: options.linkCards
    }

    /** Counts of up to 25 posts from one `getPosts` on the public AppView (no auth). */
    const metricsBatch = (
      _credentials: Credentials,
      platformPostIds: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyMap<string, Metrics>, PublishError> =>
      Effect.gen(function*() {
        let request = HttpClientRequest.get(`${appView}/xrpc/app.bsky.feed.getPosts`)
        for (const uri of platformPostIds) request = HttpClientRequest.appendUrlParam(request, "uris", uri)
        const body = yield* xrpc.call(request).pipe(
          Effect.catchTag("XrpcFailure", (f) => BlueskyXrpc.classifyNow(f, "default", []))
        )
        const posts = field(body, "posts")
        const found = new Map<string, Metrics>()
        for (const post of Array.isArray(posts) ? posts : []) {
          const uri = stringField(post, "uri")
          if (uri === undefined || !platformPostIds.includes(uri)) continue
          const count = (key: string) => Math.max(0, Math.floor(numberField(post, key) ?? 0))
          found.set(
            uri,
            new Metrics({
              views: 0,
              likes: count("likeCount"),
              comments: count("replyCount"),
              shares: count("repostCount") + count("quoteCount"),
              impressions: 0,
              saves: count("bookmarkCount"),
              clicks: 0
            })
          )
        }
        return found
      })

    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.flatMap(metricsBatch(credentials, [platformPostId]), (found) => {
        const metrics = found.get(platformPostId)
        return metrics !== undefined
          ? Effect.succeed(metrics)
          : Effect.fail(publishError("permanent", "Bluesky: the post no longer exists"))
      })

    return {
      platform: "bluesky",
      publish: (request) => BlueskyPublish.publish(xrpc, publishOptions, request),
      connectWithCredentials: (input) =>
        BlueskySession.connectWithCredentials(xrpc, {
          defaultService: defaultServiceUrl,
          allowInsecureService: options.allowInsecureService === true
        }, input),
      refresh: (credentials) => BlueskySession.refresh(xrpc, defaultServiceUrl, credentials),
      metrics,
      metricsBatch,
      metricsBatchSize: 25,
      findPublished: (lookup) => BlueskyLookup.findPublished(xrpc, defaultServiceUrl, lookup),
      timeout: "10 minutes"
    } satisfies PlatformClient
  })
