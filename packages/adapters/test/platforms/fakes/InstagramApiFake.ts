/**
 * An Instagram Content Publishing fake on graph.instagram.com (reference §7, §13):
 * `POST /v26.0/{ig-user-id}/media` creates image, REELS, STORIES, carousel-item and CAROUSEL
 * containers, `GET /v26.0/{container-id}?fields=status_code,status` answers IN_PROGRESS for a few polls
 * then FINISHED, `media_publish` publishes, `/{ig-media-id}/comments` comments, and
 * `GET /v26.0/{ig-media-id}?fields=permalink` reads the post back, `/{ig-media-id}/insights` answers
 * `insights` (`storyInsights` for a story, refusing the metrics a story lacks). Errors use Meta's body (§5) with the
 * IG subcodes. Failures are injected by caption (`#fail-limit` 2207042, `#fail-long` 2207010,
 * `#fail-429` code 4, `#fail-500`), by media URL (`fail-status` ends the container in ERROR with
 * subcode 2207026; `fail-image` is refused with 2207004), or with `failNext` for a route.
 *
 * Meta publishes no machine-readable description: the documented rules of the container call are in
 * `rules` with their pages (media_type enum, a URL for each medium, no `upload_type=resumable` on
 * graph.instagram.com, where Meta documents it only for Facebook Login for Business apps, caption
 * length, carousel items); a request that breaks one is answered code 100 and recorded.
 */
import { invalidToken, metaError, param, tokenOf } from "../../oauth/fakes/MetaFake.js"
import { Rulebook } from "./DocumentedRules.js"
import * as FakeServer from "./FakeServer.js"

const contentPublishing = "https://developers.facebook.com/docs/instagram-platform/content-publishing"
const resumableUpload = "https://developers.facebook.com/docs/instagram-platform/content-publishing/resumable-uploads"
const mediaTypes = ["IMAGE", "REELS", "STORIES", "VIDEO", "CAROUSEL"]

export const accessToken = "IGAAfakeInstagramLongLivedTokenZXCVBNMasdfghjkl0987654321qwerty"
export const userId = "17841405822304914"
export const username = "herald_ig"

export interface Container {
  readonly id: string
  readonly params: Readonly<Record<string, string>>
  /** Polls answered IN_PROGRESS before FINISHED (or ERROR). */
  pendingPolls: number
  readonly fails: boolean
  published: boolean
}

export interface Published {
  readonly id: string
  readonly container: Container
  readonly shortcode: string
  readonly comments: Array<string>
  /** When Instagram published it (epoch ms); a test may place a post made by another client at any time. */
  readonly createdAt: number
}

export interface InstagramFake {
  readonly server: FakeServer.FakeServer
  readonly containers: Map<string, Container>
  readonly posts: Array<Published>
  /** Tokens that now answer 190. */
  readonly revoked: Set<string>
  /** Replies served, in order, to the next calls of a route (`POST /media`, `POST /media_publish`, `POST /comments`, `GET /{id}`). */
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
  /** Polls an image container stays IN_PROGRESS; 1. */
  imagePolls: number
  /** Polls a video or carousel container stays IN_PROGRESS; 2. */
  videoPolls: number
  /**
   * Fetch every `image_url` when its container is made, as Meta does (off by default: most tests use
   * URLs nothing answers). A fetch that is not 200 is Meta's 9004 "media download has failed".
   */
  fetchImages: boolean
  /** What those fetches received, by URL. */
  readonly fetched: Map<string, { readonly status: number; readonly contentType: string; readonly bytes: Uint8Array }>
  /** The documented rules checked on every container request, and the requests that broke them. */
  readonly rules: Rulebook
}

/** What `GET /{ig-media-id}/insights` answers for a feed post or reel. */
export const insights: Readonly<Record<string, number>> = {
  views: 2400,
  reach: 1800,
  likes: 140,
  comments: 9,
  shares: 6,
  saved: 11,
  total_interactions: 166
}
/** A story's insights: no likes, comments or saves (asking for them is a 400). */
export const storyInsights: Readonly<Record<string, number>> = { views: 300, reach: 250, shares: 2, replies: 1 }

export const publishingLimit = metaError(
  400,
  "Application request limit reached",
  9,
  { subcode: 2207042, type: "OAuthException" }
)
export const captionTooLong = metaError(400, "The caption is too long.", 100, { subcode: 2207010 })
export const rateLimited = metaError(400, "Application request limit reached", 4, { isTransient: true })
export const unavailable = metaError(500, "An unexpected error has occurred. Please retry your request later.", 2, {
  isTransient: true
})
export const imageTooLarge = metaError(400, "The image size is too large.", 36001, { subcode: 2207004 })

const formOf = (request: FakeServer.Recorded): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of request.query) out[key] = value
  request.form?.forEach((value, key) => {
    if (typeof value === "string") out[key] = value
  })
  delete out["access_token"]
  return out
}

export const start = async (): Promise<InstagramFake> => {
  const rules = new Rulebook()
  const containers = new Map<string, Container>()
  const posts: Array<Published> = []
  const revoked = new Set<string>()
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let next = 17900000000000000n

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    const token = tokenOf(request)
    if (token !== accessToken || revoked.has(token)) return invalidToken
    const match = /^\/v26\.0\/([^/]+)(?:\/(media|media_publish|comments|insights|stories))?$/.exec(request.path)
    if (match === null) return metaError(404, `Unknown path components: ${request.path}`, 2500)
    const [, target, edge] = match
    const route = edge === undefined ? `${request.method} /{id}` : `${request.method} /${edge}`
    const injected = queued.get(route)?.shift()
    if (injected !== undefined) return injected
    const params = formOf(request)

    if (edge === "media" && request.method === "POST") {
      if (target !== userId) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const caption = params["caption"] ?? ""
      if (caption.includes("#fail-limit")) return publishingLimit
      if (caption.includes("#fail-long") || [...caption].length > 2200) return captionTooLong
      if (caption.includes("#fail-429")) return rateLimited
      if (caption.includes("#fail-500")) return unavailable
      const type = params["media_type"]
      const url = params["image_url"] ?? params["video_url"]
      const broken = rules.first(request, [
        [
          params["upload_type"] === undefined,
          {
            rule: "upload_type=resumable is for apps using Facebook Login for Business (graph.facebook.com), " +
              "not Instagram Login tokens on graph.instagram.com",
            source: resumableUpload
          }
        ],
        [
          type === undefined || mediaTypes.includes(type),
          { rule: `media_type is one of ${mediaTypes.join(", ")} (none for an image)`, source: contentPublishing }
        ],
        [
          params["alt_text"] === undefined || params["image_url"] !== undefined,
          { rule: "alt_text is for image containers only", source: contentPublishing }
        ]
      ])
      if (broken !== undefined) return metaError(400, `(#100) ${broken}`, 100)
      if (type === "CAROUSEL") {
        const children = (params["children"] ?? "").split(",").filter((c) => c !== "")
        if (children.length < 2 || children.length > 10) {
          return metaError(400, "The carousel has too little or too many attachments.", 100, { subcode: 2207028 })
        }
        for (const child of children) {
          const c = containers.get(child)
          if (c === undefined || c.params["is_carousel_item"] !== "true" || c.pendingPolls > 0) {
            return metaError(400, `Invalid child id ${child}.`, 100)
          }
        }
      } else if (url === undefined) {
        return metaError(400, "The parameter image_url or video_url is required.", 100)
      } else if ((type === "REELS" || type === "VIDEO") && params["video_url"] === undefined) {
        return metaError(400, "The parameter video_url is required.", 100)
      } else if (url.includes("fail-image")) return imageTooLarge
      if (params["is_carousel_item"] === "true" && params["caption"] !== undefined) {
        return metaError(400, "Carousel items take no caption.", 100)
      }
      next += 1n
      const container: Container = {
        id: String(next),
        params,
        pendingPolls: params["video_url"] !== undefined || type === "CAROUSEL" ? fake.videoPolls : fake.imagePolls,
        fails: url?.includes("fail-status") === true,
        published: false
      }
      containers.set(container.id, container)
      return { status: 200, body: { id: container.id } }
    }

    if (edge === "media_publish" && request.method === "POST") {
      if (target !== userId) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const container = containers.get(param(request, "creation_id") ?? "")
      if (container === undefined) return metaError(400, "Invalid parameter creation_id.", 100)
      if (container.pendingPolls > 0 || container.fails) {
        return metaError(400, "Media ID is not available", 9007, { subcode: 2207027 })
      }
      if (container.params["is_carousel_item"] === "true") {
        return metaError(400, "A carousel item cannot be published.", 100)
      }
      if (container.published) return metaError(400, "The container has already been published.", 100)
      container.published = true
      next += 1n
      const post: Published = {
        id: String(next),
        container,
        shortcode: `D${next.toString(36).toUpperCase()}`,
        comments: [],
        createdAt: Date.now()
      }
      posts.push(post)
      return { status: 200, body: { id: post.id } }
    }

    // The account's media (feed posts, reels, carousels) or its live stories, newest first, `limit`
    // (25 by default) a page, cursor `after`.
    // https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media
    if ((edge === "media" || edge === "stories") && request.method === "GET") {
      if (target !== userId) return metaError(400, "Unsupported get request.", 100, { subcode: 33 })
      const limit = Math.min(100, Number(param(request, "limit") ?? "25"))
      const offset = Number(param(request, "after") ?? "0")
      const listed = posts
        .filter((p) => (p.container.params["media_type"] === "STORIES") === (edge === "stories"))
        .sort((a, b) => b.createdAt - a.createdAt)
      const page = listed.slice(offset, offset + limit)
      const more = offset + limit < listed.length
      return {
        status: 200,
        body: {
          data: page.map((p) => ({
            id: p.id,
            ...(p.container.params["caption"] === undefined ? {} : { caption: p.container.params["caption"] }),
            timestamp: new Date(p.createdAt).toISOString().replace(/\.\d{3}Z$/, "+0000"),
            permalink: `https://www.instagram.com/p/${p.shortcode}/`
          })),
          paging: {
            cursors: { before: String(offset), after: String(offset + page.length) },
            ...(more ? { next: `${fake.server.url}/v26.0/${userId}/${edge}?after=${offset + page.length}` } : {})
          }
        }
      }
    }

    if (edge === "comments" && request.method === "POST") {
      const post = posts.find((p) => p.id === target)
      if (post === undefined) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const message = params["message"] ?? ""
      if (message === "") return metaError(400, "The parameter message is required.", 100)
      post.comments.push(message)
      next += 1n
      return { status: 200, body: { id: String(next) } }
    }

    if (edge === "insights" && request.method === "GET") {
      const post = posts.find((p) => p.id === target)
      if (post === undefined) {
        return metaError(400, `Unsupported get request. Object with ID '${target}' does not exist.`, 100, {
          subcode: 33
        })
      }
      const story = post.container.params["media_type"] === "STORIES"
      const supported = story ? storyInsights : insights
      const asked = (param(request, "metric") ?? "").split(",").filter((m) => m !== "")
      const unsupported = asked.find((m) => !(m in supported))
      if (asked.length === 0 || unsupported !== undefined) {
        return metaError(
          400,
          `(#100) The Media Insights API does not support the ${
            unsupported ?? "(none)"
          } metric for this media product type.`,
          100
        )
      }
      return {
        status: 200,
        body: {
          data: asked.map((name) => ({
            name,
            period: "lifetime",
            values: [{ value: supported[name] }],
            title: name,
            id: `${post.id}/insights/${name}/lifetime`
          }))
        }
      }
    }

    if (edge === undefined && request.method === "GET") {
      const fields = param(request, "fields") ?? ""
      const container = containers.get(target!)
      if (container !== undefined) {
        if (container.pendingPolls > 0) {
          container.pendingPolls--
          return { status: 200, body: { status_code: "IN_PROGRESS", status: "In Progress", id: container.id } }
        }
        if (container.fails) {
          return {
            status: 200,
            body: {
              status_code: "ERROR",
              status: "Error: Media upload has failed with error code 2207026",
              id: container.id
            }
          }
        }
        return {
          status: 200,
          body: {
            status_code: container.published ? "PUBLISHED" : "FINISHED",
            status: "Finished: Media container is ready",
            id: container.id
          }
        }
      }
      const post = posts.find((p) => p.id === target)
      if (post !== undefined && fields.includes("permalink")) {
        const reel = post.container.params["media_type"] === "REELS"
        return {
          status: 200,
          body: { id: post.id, permalink: `https://www.instagram.com/${reel ? "reel" : "p"}/${post.shortcode}/` }
        }
      }
      return metaError(400, `Unsupported get request. Object with ID '${target}' does not exist.`, 100, {
        subcode: 33
      })
    }

    return metaError(400, `Unknown path components: ${request.path}`, 2500)
  }

  const fetched: InstagramFake["fetched"] = new Map()
  const downloadFailed = metaError(
    400,
    "Media download has failed. The media URI doesn't meet our requirements.",
    9004,
    {
      subcode: 2207052
    }
  )
  const server = await FakeServer.start(async (request) => {
    const url = request.method === "POST" && /\/media$/.test(request.path) ? formOf(request)["image_url"] : undefined
    if (fake.fetchImages && url !== undefined && tokenOf(request) === accessToken) {
      const response = await fetch(url).catch(() => undefined)
      const bytes = response === undefined ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer())
      fetched.set(url, {
        status: response?.status ?? 0,
        contentType: response?.headers.get("content-type") ?? "",
        bytes
      })
      if (response?.status !== 200) return downloadFailed
    }
    return handler(request)
  })
  const fake: InstagramFake = {
    rules,
    fetchImages: false,
    fetched,
    server,
    containers,
    posts,
    revoked,
    failNext: (route, reply) => {
      const list = queued.get(route) ?? []
      list.push(reply)
      queued.set(route, list)
    },
    imagePolls: 1,
    videoPolls: 2
  }
  return fake
}
