/**
 * Instagram through the Content Publishing API on graph.instagram.com (platform reference §7), for
 * professional accounts connected with Instagram Login (`oauth/Instagram.ts`): every call carries the
 * stored long-lived `access_token` as a parameter, and the account's `platformAccountId` is the
 * Instagram user id.
 *
 * A post is a container (`POST /{ig-user-id}/media`): an image (`image_url`), a reel (`REELS` with
 * `video_url`; feed videos are reels now), a story (`STORIES`), or a carousel (`CAROUSEL` over children
 * made with `is_carousel_item=true`). Each container is polled until its `status_code` is `FINISHED`,
 * then published with `media_publish`; the permalink is read afterwards. Meta fetches every medium
 * itself, so each needs a public URL (`HERALD_MEDIA_PUBLIC_URL`); a post without is refused at create
 * time (`MediaRules.needsPublicUrl`) and, as a last line, before any call here. (Meta documents
 * `upload_type=resumable` only for Facebook Login for Business apps on graph.facebook.com; this client
 * holds Instagram Login tokens.) Instagram has no text-only posts.
 *
 * The first comment goes to `/{ig-media-id}/comments` once the post is out; its failure is logged,
 * never returned, so a retry cannot post twice.
 *
 * Stored credentials used: `access_token`, `user_id` (when the account id is missing), `username`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import { Metrics } from "@herald/core/domain/Destination"
import type {
  Credentials,
  MediaRef,
  PlatformClient,
  PublishedAnswer,
  PublishedLookup,
  PublishError,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MetaContainers from "./internal/MetaContainers.js"
import * as MetaGraph from "./internal/MetaGraph.js"
import * as MetaInsights from "./internal/MetaInsights.js"
import * as MetaLookup from "./internal/MetaLookup.js"
import { afterPublished, publishError, stringField, textSetting, trimSlash } from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://graph.instagram.com` unless a fake is used. */
  readonly apiUrl?: string
  /** Pause between container status polls; 5 seconds. */
  readonly pollInterval?: Duration.DurationInput
  /** Polls before a container still in progress counts as stuck (transient); 120. */
  readonly maxPolls?: number
  /** The Graph API version (`HERALD_GRAPH_VERSION`); `MetaGraph.version` unless set. */
  readonly graphVersion?: string
  /**
   * Pause before publishing a container again after Meta's 2207008 ("try again 1-2 times in the next
   * 30 seconds to 2 minutes"); 30 seconds. Two such retries, then the error stands (transient).
   */
  readonly publishRetryDelay?: Duration.DurationInput
}

export const defaultApiUrl = "https://graph.instagram.com"

export const maxCarouselItems = 10
export const maxAltText = 100

const label = "Instagram"

/** The medium's own alt text (the dispatcher has applied `settings.altText` to it), cut to the limit. */
const altTextOf = (medium: MediaRef): string | undefined =>
  medium.altText !== undefined && medium.altText.trim() !== "" ? medium.altText.slice(0, maxAltText) : undefined

/** The media insights asked for (platform reference §7). */
export const insightMetrics = "views,likes,comments,shares,saved,reach"
/** The insights every media product type (feed, reel, story, carousel) answers. */
export const safeInsightMetrics = "views,reach"

/** Instagram's 400 for a metric the media product type does not have (code 100, naming the metric). */
const isUnsupportedMetric = (error: PublishError): boolean =>
  error.kind === "permanent" && /\(code 100\b/.test(error.message) && /metric/i.test(error.message)

export type Kind = "post" | "reel" | "trial_reel" | "story"

/** The post kind from the `contentType` (`Post`, `Reels`, `Story`, `Trial Reel`); one video defaults to a reel. */
export const kindOf = (contentType: string | undefined, media: ReadonlyArray<MediaRef>): Kind => {
  const type = contentType ?? (media.length === 1 && media[0]!.kind === "video" ? "Reels" : "Post")
  return type === "Reels" ? "reel" : type === "Trial Reel" ? "trial_reel" : type === "Story" ? "story" : "post"
}

/** The profile URL, where the permalink cannot be read. */
export const profileUrl = (username: string | undefined): string =>
  username === undefined || username === "" ? "https://www.instagram.com/" : `https://www.instagram.com/${username}/`

/** Checks the media against what the post kind takes, before anything is sent. */
export const checkMedia = (kind: Kind, media: ReadonlyArray<MediaRef>): PublishError | undefined => {
  if (media.length === 0) {
    return publishError("media", "Instagram: a post needs at least one image or video; there are no text-only posts")
  }
  if (media.some((m) => m.kind === "document")) {
    return publishError("media", "Instagram: documents cannot be posted; only images and videos")
  }
  const notJpeg = media.find((m) => m.kind === "image" && !/^image\/p?jpe?g$/i.test(m.mimeType))
  if (notJpeg !== undefined) {
    return publishError(
      "media",
      `Instagram: ${notJpeg.filename} is ${notJpeg.mimeType}; Instagram takes JPEG images only`
    )
  }
  if ((kind === "reel" || kind === "trial_reel") && (media.length !== 1 || media[0]!.kind !== "video")) {
    return publishError("media", "Instagram: a reel takes exactly one video")
  }
  if (kind === "story" && media.length !== 1) {
    return publishError("media", "Instagram: a story takes exactly one image or video")
  }
  if (media.length > maxCarouselItems) {
    return publishError("media", `Instagram: a carousel takes at most ${maxCarouselItems} items, got ${media.length}`)
  }
  return undefined
}

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // Request URLs carry the token: no spans for them.
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const graphVersion = options.graphVersion ?? MetaGraph.version
    const api = `${trimSlash(options.apiUrl ?? defaultApiUrl)}/${graphVersion}`
    const interval = options.pollInterval ?? "5 seconds"
    const maxPolls = Math.max(1, options.maxPolls ?? 120)
    const publishRetryDelay = options.publishRetryDelay ?? "30 seconds"

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const media = request.main.media
        const kind = kindOf(Option.getOrUndefined(request.contentType), media)
        const problem = checkMedia(kind, media)
        if (problem !== undefined) return yield* problem
        const urls: ReadonlyArray<string | undefined> = yield* MetaContainers.publicUrls(label, media)

        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Instagram: the stored credentials lack an access token")
        const userId = request.account.platformAccountId !== ""
          ? request.account.platformAccountId
          : stored["user_id"] ?? ""
        const username = stored["username"] ?? request.account.accountName.replace(/^@/, "")
        const graph = MetaContainers.graph(http, label, token)

        const caption = request.main.content === "" ? undefined : request.main.content
        const comment = textSetting(request.settings, "firstComment")
        const altSetting = request.settings["altText"]
        const altText = typeof altSetting === "string" && altSetting.trim() !== ""
          ? altSetting.slice(0, maxAltText)
          : undefined

        /** A video's source: its public URL. */
        const videoSource = (url: string | undefined): MetaContainers.Params => ({ video_url: url })

        const createContainer = (params: MetaContainers.Params, what: string) =>
          graph.post(`${api}/${encodeURIComponent(userId)}/media`, params).pipe(
            Effect.flatMap((body) => MetaContainers.idOf(label, `${what} container`, body)),
            Effect.tap((id) =>
              MetaContainers.awaitContainer({
                label,
                graph,
                token,
                url: `${api}/${encodeURIComponent(id)}`,
                fields: "status_code,status",
                state: (body) => stringField(body, "status_code"),
                detail: (body) => stringField(body, "status"),
                what,
                interval,
                maxPolls
              })
            )
          )

        const medium = media[0]!
        const url = urls[0]
        const containerId = yield* (
          kind === "story"
            ? createContainer(
              medium.kind === "video"
                ? { media_type: "STORIES", ...videoSource(url) }
                : { media_type: "STORIES", image_url: url },
              "story"
            )
            : medium.kind === "video" && media.length === 1
            ? createContainer({
              media_type: "REELS",
              ...videoSource(url),
              caption,
              share_to_feed: "true",
              trial_params: kind === "trial_reel" ? JSON.stringify({ graduation_strategy: "MANUAL" }) : undefined
            }, "reel")
            : media.length === 1
            ? createContainer({ image_url: url, caption, alt_text: altTextOf(medium) ?? altText }, "image")
            : Effect.gen(function*() {
              const children: Array<string> = []
              for (const [index, m] of media.entries()) {
                children.push(
                  yield* createContainer(
                    m.kind === "video"
                      ? { media_type: "VIDEO", ...videoSource(urls[index]), is_carousel_item: "true" }
                      : {
                        image_url: urls[index],
                        is_carousel_item: "true",
                        alt_text: altTextOf(m) ?? (index === 0 ? altText : undefined)
                      },
                    `carousel item ${m.filename}`
                  )
                )
              }
              return yield* createContainer(
                { media_type: "CAROUSEL", children: children.join(","), caption },
                "carousel"
              )
            })
        )

        const publishContainer = graph.post(`${api}/${encodeURIComponent(userId)}/media_publish`, {
          creation_id: containerId
        })
        // Meta's table for 2207008: the same container, tried again 1-2 times within 30 s to 2 min.
        const published = yield* publishContainer.pipe(
          Effect.catchIf(MetaContainers.isTemporaryPublishError, () =>
            Effect.zipRight(Effect.sleep(publishRetryDelay), publishContainer)),
          Effect.catchIf(MetaContainers.isTemporaryPublishError, () =>
            Effect.zipRight(Effect.sleep(publishRetryDelay), publishContainer))
        )
        const id = yield* MetaContainers.idOf(label, "publish", published)

        // The post is out from here on: nothing below may fail the publish.
        if (comment !== undefined && kind === "story") {
          yield* Effect.logWarning("Instagram: stories take no comments; the first comment was not posted")
        }
        // Run by the engine once the post is recorded, outside the publish deadline.
        const followUps = comment === undefined || kind === "story" ? undefined : Effect.asVoid(afterPublished(
          label,
          "first comment",
          graph.post(`${api}/${encodeURIComponent(id)}/comments`, { message: comment })
        ))
        const permalink = yield* graph.get(`${api}/${encodeURIComponent(id)}`, { fields: "permalink" }).pipe(
          Effect.map((body) =>
            stringField(body, "permalink")
          ),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(`Instagram: could not read the permalink of ${id}: ${error.kind}: ${error.message}`),
              undefined
            )
          )
        )
        return {
          platformPostId: id,
          platformPostUrl: permalink ?? profileUrl(username),
          ...(followUps === undefined ? {} : { followUps })
        } satisfies PublishResult
      })

    /**
     * `GET /{ig-media-id}/insights` (`instagram_business_manage_insights`, asked at connect): views,
     * likes, comments, shares, saved as saves, reach as impressions. A media type without some of them
     * (a story has no likes, comments or saves) answers 400 naming the metric; then the metrics every
     * type has are asked, and the others stay 0.
     */
    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Instagram: the stored credentials lack an access token")
        // The Graph table, not the publishing subcodes: 100/33 here is a post that is gone (permanent).
        const graph = MetaContainers.graph(http, label, token, MetaGraph.classify)
        const url = `${api}/${encodeURIComponent(platformPostId)}/insights`
        const body = yield* graph.get(url, { metric: insightMetrics }).pipe(
          Effect.catchIf(isUnsupportedMetric, () => graph.get(url, { metric: safeInsightMetrics }))
        )
        const values = MetaInsights.valuesOf(body)
        const value = (name: string) => values.get(name) ?? 0
        return new Metrics({
          views: value("views"),
          likes: value("likes"),
          comments: value("comments"),
          shares: value("shares"),
          impressions: value("reach"),
          saves: value("saved"),
          clicks: 0
        })
      })

    /**
     * Whether an attempt reached the account: its media (`GET /{ig-user-id}/media`, newest first, until
     * past the window), matched by the caption as sent. A story carries no caption and is listed apart
     * (`/stories`): when the media do not have the post and a story was published in the window, the
     * answer is Unknown, never Absent. An error or a rate limit fails the lookup.
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(lookup.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Instagram: the stored credentials lack an access token")
        const userId = lookup.account.platformAccountId !== ""
          ? lookup.account.platformAccountId
          : stored["user_id"] ?? ""
        const username = stored["username"] ?? lookup.account.accountName.replace(/^@/, "")
        const graph = MetaContainers.graph(http, label, token, MetaGraph.classify)
        const edge = (name: string, text: string) => ({
          graph,
          url: `${api}/${encodeURIComponent(userId)}/${name}`,
          fields: `id,${text === "" ? "" : `${text},`}timestamp,permalink`,
          since: false,
          timeField: "timestamp",
          textField: text,
          urlOf: (item: unknown) => stringField(item, "permalink") ?? profileUrl(username),
          limit: 100,
          maxPages: 10,
          label
        })
        const answer = yield* MetaLookup.find(edge("media", "caption"), lookup)
        if (answer._tag !== "Absent") return answer
        // Any live story inside the window is a candidate without text.
        const stories = yield* MetaLookup.find(edge("stories", "caption"), { ...lookup, content: "" })
        return stories._tag === "Absent" ? answer : {
          _tag: "Unknown",
          reason: "Instagram: a story was published in the attempt's window; a story has no caption to tell it by"
        } satisfies PublishedAnswer
      })

    return {
      platform: "instagram",
      publish,
      metrics,
      findPublished,
      timeout: "15 minutes"
    } satisfies PlatformClient
  })
