/**
 * Threads through the Threads API (platform reference §8), for accounts connected with OAuth
 * (`oauth/Threads.ts`): every call carries the stored long-lived `access_token` as a parameter, and
 * the account's `platformAccountId` is the Threads user id.
 *
 * A post is a container (`POST /v1.0/{user-id}/threads`: `TEXT`, `IMAGE`, `VIDEO`, or `CAROUSEL` over
 * children made with `is_carousel_item=true`), polled until its `status` is `FINISHED`, then published
 * with `threads_publish`; the permalink is read afterwards. Meta fetches media itself, so every medium
 * needs a public URL (`HERALD_MEDIA_PUBLIC_URL`); one without is refused before any call.
 *
 * A text post (no media) whose text carries a link gets its first link as `link_attachment`
 * (developers.facebook.com/documentation/threads/posts#links), which Threads shows as a preview card;
 * the link is found as Bluesky's link cards find it (`internal/Links`). Threads reads the page itself.
 *
 * Thread parts (when the dispatcher passes them) and the first comment are replies: containers with
 * `reply_to_id`, published the same way. Once the main post is out, their failures are logged, never
 * returned, so a retry cannot post twice.
 *
 * Tokens are not refreshed here: the refresh sweep renews them (`th_refresh_token`), so an invalid
 * token is an `auth` failure.
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
  PublishPart,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Links from "./internal/Links.js"
import * as MetaContainers from "./internal/MetaContainers.js"
import * as MetaGraph from "./internal/MetaGraph.js"
import * as MetaInsights from "./internal/MetaInsights.js"
import * as MetaLookup from "./internal/MetaLookup.js"
import { publishError, stringField, trimSlash } from "./internal/PlatformHttp.js"

export interface Options {
  /** `https://graph.threads.net` unless a fake is used. */
  readonly apiUrl?: string
  /** Pause between container status polls; 3 seconds. */
  readonly pollInterval?: Duration.DurationInput
  /** Polls before a container still in progress counts as stuck (transient); 100. */
  readonly maxPolls?: number
}

export const defaultApiUrl = "https://graph.threads.net"

export const maxCarouselItems = 20

const label = "Threads"

/** Threads' limit on an image's or video's `alt_text`. */
export const maxAltText = 1000

const altTextOf = (medium: MediaRef): string | undefined =>
  medium.altText !== undefined && medium.altText.trim() !== "" ? medium.altText.slice(0, maxAltText) : undefined

/** The media insights asked for (platform reference §8). */
export const insightMetrics = "views,likes,replies,reposts,quotes,shares"

/** Threads' `reply_control` values by `replyControl` setting (developers.facebook.com/docs/threads/reference/publishing). */
export const replyControls: Readonly<Record<string, string>> = {
  everyone: "everyone",
  following: "accounts_you_follow",
  mentioned: "mentioned_only",
  followers: "followers_only",
  parentPostAuthor: "parent_post_author_only"
}

/** The API's `reply_control` for the `replyControl` setting; `everyone` is the default and not sent. */
export const replyControlOf = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "everyone" && Object.hasOwn(replyControls, value)
    ? replyControls[value]
    : undefined

/** The profile URL, where the permalink cannot be read. */
export const profileUrl = (username: string | undefined): string =>
  username === undefined || username === "" ? "https://www.threads.net/" : `https://www.threads.net/@${username}`

/** Checks a part's media before anything is sent: kinds, count, and a public URL for each. */
const checkMedia = (media: ReadonlyArray<MediaRef>): Effect.Effect<ReadonlyArray<string>, PublishError> => {
  if (media.some((m) => m.kind === "document")) {
    return Effect.fail(publishError("media", "Threads: documents cannot be posted; only images and videos"))
  }
  if (media.length > maxCarouselItems) {
    return Effect.fail(
      publishError("media", `Threads: a carousel takes at most ${maxCarouselItems} items, got ${media.length}`)
    )
  }
  return MetaContainers.publicUrls(label, media)
}

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // Request URLs carry the token: no spans for them.
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const api = `${trimSlash(options.apiUrl ?? defaultApiUrl)}/${MetaGraph.threadsVersion}`
    const interval = options.pollInterval ?? "3 seconds"
    const maxPolls = Math.max(1, options.maxPolls ?? 100)

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(request.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Threads: the stored credentials lack an access token")
        const userId = request.account.platformAccountId !== ""
          ? request.account.platformAccountId
          : stored["user_id"] ?? ""
        const username = stored["username"] ?? request.account.accountName.replace(/^@/, "")
        const graph = MetaContainers.graph(http, label, token)

        const firstComment = request.settings["firstComment"]
        const comment: PublishPart | undefined = typeof firstComment === "string" && firstComment.trim() !== ""
          ? { content: firstComment, media: [] }
          : undefined
        const replyControl = replyControlOf(request.settings["replyControl"])

        // Every part's media is checked before the first call: a refusal then leaves nothing behind.
        const parts = [request.main, ...request.thread]
        const urls: Array<ReadonlyArray<string>> = []
        for (const part of parts) urls.push(yield* checkMedia(part.media))

        const awaitReady = (id: string, what: string) =>
          MetaContainers.awaitContainer({
            label,
            graph,
            token,
            url: `${api}/${encodeURIComponent(id)}`,
            fields: "status,error_message",
            state: (body) => stringField(body, "status"),
            detail: (body) => stringField(body, "error_message"),
            what,
            interval,
            maxPolls
          })

        const createContainer = (params: MetaContainers.Params, what: string) =>
          graph.post(`${api}/${encodeURIComponent(userId)}/threads`, params).pipe(
            Effect.flatMap((body) => MetaContainers.idOf(label, `${what} container`, body)),
            Effect.tap((id) => awaitReady(id, what))
          )

        const mediumParams = (medium: MediaRef, url: string): MetaContainers.Params =>
          medium.kind === "video"
            ? { media_type: "VIDEO", video_url: url, alt_text: altTextOf(medium) }
            : { media_type: "IMAGE", image_url: url, alt_text: altTextOf(medium) }

        /** Builds (and waits for) the container of one part, returning its id. */
        const container = (
          part: PublishPart,
          partUrls: ReadonlyArray<string>,
          replyTo: string | undefined
        ): Effect.Effect<string, PublishError> =>
          Effect.gen(function*() {
            const common: MetaContainers.Params = {
              text: part.content === "" ? undefined : part.content,
              reply_to_id: replyTo,
              reply_control: replyControl
            }
            if (part.media.length === 0) {
              // Threads shows the attached link as a preview card; only a text post may carry one.
              const link = Links.first(part.content)
              return yield* createContainer({ media_type: "TEXT", link_attachment: link, ...common }, "post")
            }
            if (part.media.length === 1) {
              return yield* createContainer({ ...mediumParams(part.media[0]!, partUrls[0]!), ...common }, "post")
            }
            const children: Array<string> = []
            for (const [index, medium] of part.media.entries()) {
              children.push(
                yield* createContainer(
                  { ...mediumParams(medium, partUrls[index]!), is_carousel_item: "true" },
                  `carousel item ${medium.filename}`
                )
              )
            }
            return yield* createContainer({ media_type: "CAROUSEL", children: children.join(","), ...common }, "post")
          })

        const publishContainer = (id: string) =>
          graph.post(`${api}/${encodeURIComponent(userId)}/threads_publish`, { creation_id: id }).pipe(
            Effect.flatMap((body) => MetaContainers.idOf(label, "publish", body))
          )

        const main = yield* publishContainer(yield* container(request.main, urls[0]!, undefined))

        const followUp = (what: string, effect: Effect.Effect<string, PublishError>) =>
          Effect.either(effect).pipe(
            Effect.tap((result) =>
              result._tag === "Left"
                // The main post is out: failing now would make a retry post it twice.
                ? Effect.logWarning(
                  `Threads: ${what} not published after the main post: ${result.left.kind}: ${result.left.message}`
                )
                : Effect.void
            )
          )
        // Run by the engine once the main post is recorded, outside the publish deadline.
        const followUps = Effect.gen(function*() {
          let previous = main
          for (const [index, part] of request.thread.entries()) {
            const sent = yield* followUp(
              "thread part",
              Effect.flatMap(container(part, urls[index + 1]!, previous), publishContainer)
            )
            if (sent._tag === "Left") break
            previous = sent.right
          }
          if (comment !== undefined) {
            yield* followUp("first comment", Effect.flatMap(container(comment, [], main), publishContainer))
          }
        })

        const permalink = yield* graph.get(`${api}/${encodeURIComponent(main)}`, { fields: "id,permalink" }).pipe(
          Effect.map((body) => stringField(body, "permalink")),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(`Threads: could not read the permalink of ${main}: ${error.kind}: ${error.message}`),
              undefined
            )
          )
        )
        return {
          platformPostId: main,
          platformPostUrl: permalink ?? profileUrl(username),
          ...(request.thread.length > 0 || comment !== undefined ? { followUps } : {})
        } satisfies PublishResult
      })

    /**
     * `GET /{media-id}/insights` (`threads_manage_insights`, asked at connect): views, likes, replies
     * as comments, and reposts + quotes + shares as shares. Threads has no impressions, saves or clicks.
     */
    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.gen(function*() {
        const token = Redacted.value(credentials)["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Threads: the stored credentials lack an access token")
        // The Graph table, not the publishing subcodes: 100/33 here is a post that is gone (permanent).
        const body = yield* MetaContainers.graph(http, label, token, MetaGraph.classify).get(
          `${api}/${encodeURIComponent(platformPostId)}/insights`,
          { metric: insightMetrics }
        )
        const values = MetaInsights.valuesOf(body)
        const value = (name: string) => values.get(name) ?? 0
        return new Metrics({
          views: value("views"),
          likes: value("likes"),
          comments: value("replies"),
          shares: value("reposts") + value("quotes") + value("shares"),
          impressions: 0,
          saves: 0,
          clicks: 0
        })
      })

    /**
     * Whether an attempt reached the account: the user's threads (`GET /{user-id}/threads`, top-level
     * posts only, from the window's start with `since`), matched by the text as sent. An error or a
     * rate limit fails the lookup (the engine keeps the outcome unknown).
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(lookup.credentials)
        const token = stored["access_token"] ?? ""
        if (token === "") return yield* publishError("auth", "Threads: the stored credentials lack an access token")
        const userId = lookup.account.platformAccountId !== ""
          ? lookup.account.platformAccountId
          : stored["user_id"] ?? "me"
        const username = stored["username"] ?? lookup.account.accountName.replace(/^@/, "")
        return yield* MetaLookup.find({
          graph: MetaContainers.graph(http, label, token, MetaGraph.classify),
          url: `${api}/${encodeURIComponent(userId)}/threads`,
          fields: "id,text,timestamp,permalink",
          since: true,
          timeField: "timestamp",
          textField: "text",
          urlOf: (item) => stringField(item, "permalink") ?? profileUrl(username),
          limit: 100,
          maxPages: 10,
          label
        }, lookup)
      })

    return {
      platform: "threads",
      publish,
      metrics,
      findPublished,
      timeout: "15 minutes"
    } satisfies PlatformClient
  })
