/**
 * A Threads API fake (reference §8, §13): `POST /v1.0/{user-id}/threads` creates TEXT, IMAGE, VIDEO
 * and CAROUSEL containers (children with `is_carousel_item`), `GET /v1.0/{container-id}` answers
 * `status` IN_PROGRESS for a few polls then FINISHED, `threads_publish` publishes, and
 * `GET /v1.0/{media-id}?fields=permalink` reads it back, `GET /v1.0/{media-id}/insights?metric=…`
 * answers `insights`. Errors use Meta's body (§5).
 * Failures are injected by text (`#fail-long`, `#fail-429`, `#fail-500`) or media URL (`fail-fetch`
 * in the URL makes the container end in ERROR), or with `failNext` for a route.
 *
 * Meta publishes no machine-readable description of the Threads API: the documented rules of the
 * container call (media_type and reply_control enums, text length, carousel items, `link_attachment`
 * on text posts only, at most 5 links) are in `rules`
 * with their pages; a request that breaks one is answered code 100 and recorded.
 */
import { invalidToken, metaError, param, tokenOf } from "../../oauth/fakes/MetaFake.js"
import { Rulebook } from "./DocumentedRules.js"
import * as FakeServer from "./FakeServer.js"

const publishingReference = "https://developers.facebook.com/docs/threads/reference/publishing"
const linksPage = "https://developers.facebook.com/documentation/threads/posts#links"
const linkLimitPage = "https://developers.facebook.com/documentation/threads/create-posts/text-attachments"

/** The distinct URLs of a text, as Threads counts links (at most 5 per post). */
const urlsOf = (text: string): Set<string> =>
  new Set([...text.matchAll(/https?:\/\/\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:\/\S*)?/gi)].map((m) => m[0]))

const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}
const replyControls = ["everyone", "accounts_you_follow", "mentioned_only", "parent_post_author_only", "followers_only"]
const mediaTypes = ["TEXT", "IMAGE", "VIDEO", "CAROUSEL"]

export const accessToken = "THAAGfakeThreadsLongLivedTokenQWERTYasdfgh123456789zxcvbnm"
export const userId = "26915712345678901"
export const username = "herald_threads"

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
  /** When Threads published it (epoch ms); a test may place a post made by another client at any time. */
  readonly createdAt: number
}

/** Meta's timestamp form: `2026-11-28T02:33:54+0000`. */
export const metaTime = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "+0000")

export interface ThreadsFake {
  readonly server: FakeServer.FakeServer
  readonly containers: Map<string, Container>
  readonly posts: Array<Published>
  /** Tokens that now answer 190. */
  readonly revoked: Set<string>
  /** Replies served, in order, to the next calls of a route (e.g. `POST /threads_publish`). */
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
  /** Polls an image or text container stays IN_PROGRESS; 1. */
  imagePolls: number
  /** Polls a video or carousel container stays IN_PROGRESS; 2. */
  videoPolls: number
  /** The documented rules checked on every container request, and the requests that broke them. */
  readonly rules: Rulebook
}

/** What `GET /{media-id}/insights` answers for every published post. */
export const insights: Readonly<Record<string, number>> = {
  views: 1520,
  likes: 87,
  replies: 12,
  reposts: 5,
  quotes: 2,
  shares: 3
}

export const rateLimited = metaError(400, "Application request limit reached", 4, { isTransient: true })
export const tooLong = metaError(400, "Param text must be at most 500 characters long.", 100)
export const unavailable = metaError(500, "An unknown error has occurred.", 1, { isTransient: true })

const formOf = (request: FakeServer.Recorded): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of request.query) out[key] = value
  request.form?.forEach((value, key) => {
    if (typeof value === "string") out[key] = value
  })
  delete out["access_token"]
  return out
}

export const start = async (): Promise<ThreadsFake> => {
  const rules = new Rulebook()
  const containers = new Map<string, Container>()
  const posts: Array<Published> = []
  const revoked = new Set<string>()
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let next = 17841400000000000n

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    const token = tokenOf(request)
    if (token !== accessToken || revoked.has(token)) return invalidToken
    const match = /^\/v1\.0\/([^/]+)(?:\/(threads|threads_publish|insights))?$/.exec(request.path)
    if (match === null) return metaError(404, `Unknown path components: ${request.path}`, 2500)
    const [, target, edge] = match
    const route = edge === undefined ? `${request.method} /{id}` : `${request.method} /${edge}`
    const injected = queued.get(route)?.shift()
    if (injected !== undefined) return injected

    if (edge === "threads" && request.method === "POST") {
      if (target !== userId) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const params = formOf(request)
      const text = params["text"] ?? ""
      const broken = rules.first(request, [
        [
          mediaTypes.includes(params["media_type"] ?? ""),
          { rule: `media_type is required, one of ${mediaTypes.join(", ")}`, source: publishingReference }
        ],
        [
          params["reply_control"] === undefined || replyControls.includes(params["reply_control"]),
          { rule: `reply_control is one of ${replyControls.join(", ")}`, source: publishingReference }
        ],
        [
          params["is_carousel_item"] === undefined ||
          (params["text"] === undefined && params["reply_control"] === undefined),
          {
            rule: "A carousel item carries no text or reply_control (the carousel container does)",
            source: publishingReference
          }
        ],
        [
          params["link_attachment"] === undefined || params["media_type"] === "TEXT",
          { rule: "link_attachment is for text posts only (media_type TEXT)", source: linksPage }
        ],
        [
          params["link_attachment"] === undefined || isHttpUrl(params["link_attachment"]),
          { rule: "link_attachment is a URL", source: linksPage }
        ]
      ])
      if (broken !== undefined) return metaError(400, `(#100) ${broken}`, 100)
      const links = urlsOf(text)
      if (params["link_attachment"] !== undefined) links.add(params["link_attachment"])
      if (links.size > 5) {
        rules.check(request, false, { rule: "A post carries at most 5 links", source: linkLimitPage })
        return metaError(400, "THREADS_API__LINK_LIMIT_EXCEEDED: a post may contain at most 5 links.", 100)
      }
      if (text.includes("#fail-long") || [...text].length > 500) return tooLong
      if (text.includes("#fail-429")) return rateLimited
      if (text.includes("#fail-500")) return unavailable
      const type = params["media_type"]
      if (type === "TEXT" && text === "") return metaError(400, "The parameter text is required.", 100)
      if (type === "IMAGE" && params["image_url"] === undefined) {
        return metaError(400, "The parameter image_url is required.", 100)
      }
      if (type === "VIDEO" && params["video_url"] === undefined) {
        return metaError(400, "The parameter video_url is required.", 100)
      }
      if (type === "CAROUSEL") {
        const children = (params["children"] ?? "").split(",").filter((c) => c !== "")
        if (children.length < 2 || children.length > 20) {
          return metaError(400, "Carousel must have between 2 and 20 children.", 100)
        }
        for (const child of children) {
          const c = containers.get(child)
          if (c === undefined || c.params["is_carousel_item"] !== "true") {
            return metaError(400, `Invalid child id ${child}.`, 100)
          }
        }
      } else if (type !== "TEXT" && type !== "IMAGE" && type !== "VIDEO") {
        return metaError(400, "Invalid parameter media_type.", 100)
      }
      const reply = params["reply_to_id"]
      if (reply !== undefined && !posts.some((p) => p.id === reply)) {
        return metaError(400, "Invalid reply_to_id: the post does not exist.", 100)
      }
      next += 1n
      const url = params["image_url"] ?? params["video_url"] ?? ""
      const container: Container = {
        id: String(next),
        params,
        pendingPolls: type === "VIDEO" || type === "CAROUSEL" ? fake.videoPolls : fake.imagePolls,
        fails: url.includes("fail-fetch"),
        published: false
      }
      containers.set(container.id, container)
      return { status: 200, body: { id: container.id } }
    }

    if (edge === "threads_publish" && request.method === "POST") {
      const container = containers.get(param(request, "creation_id") ?? "")
      if (container === undefined) return metaError(400, "Invalid creation_id.", 100)
      if (container.pendingPolls > 0 || container.fails) {
        return metaError(400, "The media is not ready for publishing, please wait for a moment.", 9007, {
          subcode: 2207027
        })
      }
      if (container.published) return metaError(400, "The container has already been published.", 100)
      container.published = true
      next += 1n
      const post: Published = {
        id: String(next),
        container,
        shortcode: `C${next.toString(36).toUpperCase()}`,
        createdAt: Date.now()
      }
      posts.push(post)
      return { status: 200, body: { id: post.id } }
    }

    // The user's threads (top-level posts, replies are under /replies), newest first: `since`/`until`
    // (Unix seconds), `limit` (at most 100, 25 by default), cursor `after`.
    // https://developers.facebook.com/docs/threads/threads-media#retrieve-a-list-of-all-a-user-s-threads
    if (edge === "threads" && request.method === "GET") {
      if (target !== userId && target !== "me") return metaError(400, "Unsupported get request.", 100, { subcode: 33 })
      const since = Number(param(request, "since") ?? "-Infinity") * 1000
      const until = Number(param(request, "until") ?? "Infinity") * 1000
      const limit = Math.min(100, Number(param(request, "limit") ?? "25"))
      const offset = Number(param(request, "after") ?? "0")
      const listed = posts
        .filter((p) => p.container.params["reply_to_id"] === undefined)
        .filter((p) => p.createdAt >= since && p.createdAt <= until)
        .sort((a, b) => b.createdAt - a.createdAt)
      const page = listed.slice(offset, offset + limit)
      const more = offset + limit < listed.length
      return {
        status: 200,
        body: {
          data: page.map((p) => ({
            id: p.id,
            media_type: p.container.params["media_type"] === "CAROUSEL"
              ? "CAROUSEL_ALBUM"
              : p.container.params["media_type"] ?? "TEXT",
            ...(p.container.params["text"] === undefined ? {} : { text: p.container.params["text"] }),
            timestamp: metaTime(p.createdAt),
            permalink: `https://www.threads.net/@${username}/post/${p.shortcode}`
          })),
          paging: {
            cursors: { before: String(offset), after: String(offset + page.length) },
            ...(more ? { next: `${fake.server.url}/v1.0/${userId}/threads?after=${offset + page.length}` } : {})
          }
        }
      }
    }

    if (edge === "insights" && request.method === "GET") {
      const post = posts.find((p) => p.id === target)
      if (post === undefined) {
        return metaError(400, `Unsupported get request. Object with ID '${target}' does not exist.`, 100, {
          subcode: 33
        })
      }
      const asked = (param(request, "metric") ?? "").split(",").filter((m) => m !== "")
      const unknown = asked.find((m) => !(m in insights))
      if (asked.length === 0 || unknown !== undefined) {
        return metaError(
          400,
          `(#100) metric[0] must be one of the following values: ${Object.keys(insights).join(", ")}`,
          100
        )
      }
      return {
        status: 200,
        body: {
          data: asked.map((name) => ({
            name,
            period: "lifetime",
            values: [{ value: insights[name] }],
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
          return { status: 200, body: { status: "IN_PROGRESS", id: container.id } }
        }
        if (container.fails) {
          return {
            status: 200,
            body: { status: "ERROR", error_message: "FAILED_DOWNLOADING_VIDEO", id: container.id }
          }
        }
        return { status: 200, body: { status: container.published ? "PUBLISHED" : "FINISHED", id: container.id } }
      }
      const post = posts.find((p) => p.id === target)
      if (post !== undefined && fields.includes("permalink")) {
        return {
          status: 200,
          body: { id: post.id, permalink: `https://www.threads.net/@${username}/post/${post.shortcode}` }
        }
      }
      return metaError(400, `Unsupported get request. Object with ID '${target}' does not exist.`, 100, {
        subcode: 33
      })
    }

    return metaError(400, `Unknown path components: ${request.path}`, 2500)
  }

  const server = await FakeServer.start(handler)
  const fake: ThreadsFake = {
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
    rules,
    videoPolls: 2
  }
  return fake
}
