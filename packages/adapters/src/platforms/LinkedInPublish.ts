/**
 * Publishing to LinkedIn: `POST /rest/posts` by the stored `author_urn`; LinkedIn answers 201 with an
 * empty body and the post's URN in `x-restli-id`. Media is uploaded first (`LinkedInMedia`): 2 or more
 * images become a `multiImage`.
 *
 * A post without media whose text carries a link gets an article card (`content.article`): the page's
 * title, description and image (uploaded through the Images API as its `thumbnail`), read by Herald
 * through the guarded fetcher since LinkedIn reads no page itself (`LinkPreview`, shared with Bluesky).
 * A first comment (`settings.firstComment`) goes to `/rest/socialActions/{urn}/comments` after the
 * post; its failure is logged, never a failed publish, since the post is already out.
 *
 * The commentary is "little text": its reserved characters are escaped, and `#tag` becomes a hashtag.
 * LinkedIn has no threads: thread parts are not published (the rules publish them on x/bluesky only).
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import type {
  MediaRef,
  PublishError,
  PublishPart,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { afterPublished, publishError, textSetting } from "./internal/PlatformHttp.js"
import { label, type RestApi } from "./LinkedInApi.js"
import { awaitAsset, checkMedia, type MediaOptions, uploadAll, uploadSimple } from "./LinkedInMedia.js"
import * as LinkPreview from "./LinkPreview.js"

export const maxCommentary = 3000
export const maxAltText = 4086

/**
 * An article card's thumbnail goes through the Images API, which takes JPG, GIF and PNG
 * (learn.microsoft.com/linkedin/marketing/community-management/shares/images-api); Herald reads at most
 * 5 MiB of it.
 */
export const thumbRules: LinkPreview.ThumbRules = {
  maxBytes: 5 * 1024 * 1024,
  types: ["image/jpeg", "image/png", "image/gif"]
}

/** `https://www.linkedin.com/feed/update/{urn}/`. */
export const postUrl = (urn: string): string => `https://www.linkedin.com/feed/update/${urn}/`

const reserved = /[\\|{}@[\]()<>#*_~]/g

/**
 * Commentary in LinkedIn's "little text": each reserved character (`\ | { } @ [ ] ( ) < > # * _ ~`)
 * is escaped with a backslash, otherwise LinkedIn cuts the text off or refuses it; a `#tag` that
 * starts a word becomes the hashtag template `{hashtag|\#|tag}`.
 */
export const escapeLittleText = (text: string): string => {
  const out: Array<string> = []
  const hashtag = /(^|[^\p{L}\p{N}_&#])#([\p{L}\p{N}_]+)/gu
  let last = 0
  for (const match of text.matchAll(hashtag)) {
    const start = match.index + match[1]!.length
    out.push(text.slice(last, start).replace(reserved, "\\$&"))
    out.push(`{hashtag|\\#|${match[2]!.replace(reserved, "\\$&")}}`)
    last = start + 1 + match[2]!.length
  }
  out.push(text.slice(last).replace(reserved, "\\$&"))
  return out.join("")
}

/** The Posts API visibility for the `visibility` setting; `PUBLIC` unless set. */
export const visibilityOf = (value: unknown): "PUBLIC" | "CONNECTIONS" | "LOGGED_IN" =>
  value === "CONNECTIONS"
    ? "CONNECTIONS"
    : value === "LOGGED_IN_MEMBERS" || value === "LOGGED_IN"
    ? "LOGGED_IN"
    : "PUBLIC"

/** An image's `altText` (LinkedIn takes up to 4086 characters); none for videos and documents. */
const altTextOf = (medium: MediaRef): { readonly altText?: string } =>
  medium.kind === "image" && medium.altText !== undefined && medium.altText.trim() !== ""
    ? { altText: medium.altText.slice(0, maxAltText) }
    : {}

const contentOf = (part: PublishPart, urns: ReadonlyArray<string>): Record<string, unknown> | undefined => {
  if (urns.length === 0) return undefined
  if (urns.length === 1) {
    const medium = part.media[0]!
    // A document needs a title; LinkedIn shows it above the carousel.
    const title = medium.kind === "document" ? medium.filename.replace(/\.pdf$/i, "") : undefined
    return { media: title === undefined ? { id: urns[0], ...altTextOf(medium) } : { id: urns[0], title } }
  }
  return { multiImage: { images: urns.map((id, i) => ({ id, ...altTextOf(part.media[i]!) })) } }
}

export interface PublishOptions extends MediaOptions {
  /** Fetches link preview pages and images; no article cards without. */
  readonly linkCards: UrlFetcher["Type"] | undefined
}

/**
 * The article card of a post without media whose text carries a link: the page's title and
 * description, and its image uploaded through the Images API as the thumbnail. LinkedIn reads no
 * page itself (its Posts API takes the card as sent). A thumbnail LinkedIn will not take leaves the
 * card without one; a page that gives no card leaves a plain text post.
 */
const articleOf = (api: RestApi, options: PublishOptions, token: string, author: string, text: string) =>
  Effect.gen(function*() {
    const fetcher = options.linkCards
    if (fetcher === undefined) return undefined
    const found = yield* LinkPreview.ofText(fetcher, text, { label, thumb: thumbRules })
    if (Option.isNone(found)) return undefined
    const card = found.value
    const thumbnail = yield* Option.match(card.thumb, {
      onNone: () => Effect.succeed(undefined),
      onSome: (thumb) =>
        Effect.gen(function*() {
          const urn = yield* uploadSimple(api, token, author, "image", HttpBody.uint8Array(thumb.bytes, thumb.mimeType))
          yield* awaitAsset(api, options, token, "image", "the link preview's image", urn)
          return urn
        }).pipe(
          Effect.catchAll((error) =>
            Effect.as(Effect.logInfo(`LinkedIn: the link preview goes without its image (${error.message})`), undefined)
          )
        )
    })
    return {
      article: {
        source: card.uri,
        // LinkedIn requires a title; a page that names none is shown by its host.
        title: card.title !== "" ? card.title : new URL(card.uri).hostname,
        ...(card.description === "" ? {} : { description: card.description }),
        ...(thumbnail === undefined ? {} : { thumbnail })
      }
    }
  })

const createPost = (
  api: RestApi,
  token: string,
  author: string,
  part: PublishPart,
  urns: ReadonlyArray<string>,
  visibility: string,
  article: Record<string, unknown> | undefined
): Effect.Effect<string, PublishError> =>
  Effect.gen(function*() {
    const body: Record<string, unknown> = {
      author,
      commentary: escapeLittleText(part.content),
      visibility,
      distribution: { feedDistribution: "MAIN_FEED", targetEntities: [], thirdPartyDistributionChannels: [] },
      lifecycleState: "PUBLISHED",
      isReshareDisabledByAuthor: false
    }
    const content = contentOf(part, urns) ?? article
    if (content !== undefined) body["content"] = content
    const response = yield* api.rest(
      token,
      "post",
      HttpClientRequest.post(`${api.url}/rest/posts`).pipe(HttpClientRequest.bodyUnsafeJson(body))
    )
    const urn = response.headers["x-restli-id"] ?? response.headers["x-linkedin-id"]
    if (urn === undefined || urn === "") {
      // The post is out but unnamed: a retry would post it twice.
      return yield* publishError("permanent", "LinkedIn: the post was accepted without an id (x-restli-id)")
    }
    return urn
  })

const createComment = (api: RestApi, token: string, author: string, post: string, text: string) =>
  api.rest(
    token,
    "comment",
    HttpClientRequest.post(`${api.url}/rest/socialActions/${encodeURIComponent(post)}/comments`).pipe(
      HttpClientRequest.bodyUnsafeJson({ actor: author, object: post, message: { text } })
    )
  )

export const publish = (
  api: RestApi,
  options: PublishOptions,
  request: PublishRequest
): Effect.Effect<PublishResult, PublishError> =>
  Effect.gen(function*() {
    const stored = Redacted.value(request.credentials)
    const token = stored["access_token"] ?? ""
    if (token === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack an access token")
    const userId = stored["user_id"] ?? ""
    const author = stored["author_urn"] ?? (userId === "" ? "" : `urn:li:person:${userId}`)
    if (author === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack the author URN")

    const comment = textSetting(request.settings, "firstComment")
    const visibility = visibilityOf(request.settings["visibility"])

    const problem = checkMedia(request.main.media)
    if (problem !== undefined) return yield* problem
    const urns = yield* uploadAll(api, options, token, author, request.main.media)

    const article = request.main.media.length === 0
      ? yield* articleOf(api, options, token, author, request.main.content)
      : undefined
    const post = yield* createPost(api, token, author, request.main, urns, visibility, article)

    return {
      platformPostId: post,
      platformPostUrl: postUrl(post),
      // Run by the engine once the post is recorded, outside the publish deadline.
      ...(comment === undefined
        ? {}
        : {
          followUps: Effect.asVoid(
            afterPublished(label, "first comment", createComment(api, token, author, post, comment))
          )
        })
    } satisfies PublishResult
  })
