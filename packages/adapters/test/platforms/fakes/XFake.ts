/**
 * An X API v2 fake (reference §1, §13), checked against X's published OpenAPI description
 * (`specs/x-openapi.json`, `ApiDescription`): every request is validated against it and every answer
 * conforms to its response schemas. Beyond the description: `POST /2/tweets`, the v2 media upload (simple, chunked with
 * `processing_info` that advances on each `STATUS` poll), alt-text metadata and post lookup, with
 * X's error bodies (problem JSON `{title, detail, type, status}` and `{errors:[…]}`) and rate-limit
 * headers. Failures are injected by text: `#fail-dup`, `#fail-long`, `#fail-429`, `#fail-500`,
 * `#fail-media-ids`; or with `failNext` for a route.
 *
 * The user's timeline (`GET /2/users/{id}/tweets`) answers from the posts received, newest first, as X
 * shows them: `&`, `<`, `>` escaped, every link replaced by a `t.co` link (its `entities.urls` entry
 * carrying the link as sent in `expanded_url`, a bare domain with `http://` put in front), and a post
 * with media ending in a `t.co` link to the media; `start_time`/`end_time`, `exclude`,
 * `max_results` (5–100, default 10) and `pagination_token` as the description says.
 */
import * as ApiDescription from "./ApiDescription.js"
import * as FakeServer from "./FakeServer.js"

export const description = () => ApiDescription.load({ file: "x-openapi.json" })

export const accessToken = "ZmFrZS14LWFjY2Vzcy10b2tlbi1hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejoxNzY3MjI1NjAwOjE6MTphdDox"
export const username = "herald_hq"
export const userId = "1450000000000000001"

export interface Post {
  readonly id: string
  readonly text: string | undefined
  readonly body: Record<string, unknown>
  /** When X stored it (epoch ms); a test may place a post written by another client at any time. */
  readonly createdAt: number
}

const linkPattern = /\b((?:https?:\/\/)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?:\/[^\s]*)?)/gi

/** A post as the timeline shows it (see the module comment). */
export const shown = (post: Post): Record<string, unknown> => {
  const urls: Array<Record<string, unknown>> = []
  let n = 0
  const tco = () => `https://t.co/${post.id.slice(-6)}${String.fromCharCode(97 + n++)}`
  let text = (post.text ?? "").replace(linkPattern, (link: string) => {
    const url = tco()
    urls.push({ url, expanded_url: /^https?:\/\//i.test(link) ? link : `http://${link}`, display_url: link })
    return url
  })
  const mediaIds = ((post.body["media"] as { media_ids?: Array<string> } | undefined)?.media_ids) ?? []
  if (mediaIds.length > 0) {
    const url = tco()
    urls.push({
      url,
      expanded_url: `https://x.com/${username}/status/${post.id}/photo/1`,
      media_key: `3_${mediaIds[0]}`
    })
    text = text === "" ? url : `${text} ${url}`
  }
  // Indices count code points of the text as shown.
  const withIndices = urls.map((u) => {
    const start = [...text.slice(0, text.indexOf(String(u["url"])))].length
    return { ...u, start, end: start + [...String(u["url"])].length }
  })
  return {
    id: post.id,
    text: text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    created_at: new Date(post.createdAt).toISOString(),
    edit_history_post_ids: [post.id],
    ...(withIndices.length > 0 ? { entities: { urls: withIndices } } : {})
  }
}

export interface Medium {
  readonly id: string
  readonly category: string
  readonly mimeType: string
  readonly totalBytes: number
  /** Bytes received, by segment for chunked uploads. */
  readonly segments: Map<number, Uint8Array>
  finalized: boolean
  /** STATUS polls answered `in_progress` before `succeeded` (or `failed`). */
  pendingPolls: number
  failProcessing: boolean
  altText: string | undefined
}

export interface XFake {
  readonly server: FakeServer.FakeServer
  readonly posts: Array<Post>
  readonly media: Map<string, Medium>
  /** Tokens that now answer 401. */
  readonly revoked: Set<string>
  /** Replies served, in order, to the next calls of a route (e.g. `POST /2/tweets`) instead of the normal behaviour. */
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
  /** Polls a chunked video stays `in_progress`; 2. */
  videoPolls: number
  /** Epoch seconds the fake's 429 windows reset at. */
  resetAt: number
  /** How long `POST /2/tweets` waits after storing a post before it answers (a slow platform); 0. */
  createDelayMs: number
}

export const problem = (status: number, title: string, detail: string, type = "about:blank"): FakeServer.Reply => ({
  status,
  body: { title, detail, type, status }
})

export const unauthorized: FakeServer.Reply = problem(401, "Unauthorized", "Unauthorized")

export const duplicate: FakeServer.Reply = problem(
  403,
  "Forbidden",
  "You are not allowed to create a Tweet with duplicate content."
)

export const tooLong: FakeServer.Reply = {
  status: 400,
  body: {
    errors: [{ parameters: { text: ["…"] }, message: "Tweet text is too long." }],
    title: "Invalid Request",
    detail: "One or more parameters to your request was invalid.",
    type: "https://api.twitter.com/2/problems/invalid-request"
  }
}

export const mediaIdsInvalid: FakeServer.Reply = {
  status: 400,
  body: {
    errors: [{ parameters: { "media.media_ids": ["1"] }, message: "Your media IDs are invalid." }],
    title: "Invalid Request",
    detail: "One or more parameters to your request was invalid.",
    type: "https://api.twitter.com/2/problems/invalid-request"
  }
}

export const serviceUnavailable: FakeServer.Reply = {
  status: 503,
  body: { title: "Service Unavailable", detail: "Service Unavailable", type: "about:blank", status: 503 }
}

export const tooManyRequests = (resetAt: number, remaining = "0"): FakeServer.Reply => ({
  status: 429,
  headers: {
    "x-rate-limit-limit": "100",
    "x-rate-limit-remaining": remaining,
    "x-rate-limit-reset": String(resetAt)
  },
  body: { title: "Too Many Requests", detail: "Too Many Requests", type: "about:blank", status: 429 }
})

const created = (status: number, data: Record<string, unknown>): FakeServer.Reply => ({ status, body: { data } })

export interface StartOptions {
  /** Which bearer tokens the API accepts; only `accessToken` unless given (e.g. the OAuth fake's tokens). */
  readonly acceptsToken?: (token: string) => boolean
}

export const start = async (options: StartOptions = {}): Promise<XFake> => {
  const accepts = options.acceptsToken ?? ((token: string) => token === accessToken)
  const posts: Array<Post> = []
  const media = new Map<string, Medium>()
  const revoked = new Set<string>()
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let nextPost = 1860000000000000000n
  let nextMedia = 1870000000000000000n

  const mediaData = (m: Medium, extra: Record<string, unknown> = {}) => ({
    id: m.id,
    media_key: `${m.category === "tweet_video" ? 7 : m.category === "tweet_gif" ? 16 : 3}_${m.id}`,
    size: m.totalBytes,
    expires_after_secs: 86400,
    ...extra
  })

  const processing = (m: Medium) =>
    m.pendingPolls > 0
      ? { state: "in_progress", check_after_secs: 1, progress_percent: 50 }
      : m.failProcessing
      ? { state: "failed", error: { code: 1, name: "InvalidMedia", message: "Unsupported video format" } }
      : { state: "succeeded", progress_percent: 100 }

  const handler = async (request: FakeServer.Recorded): Promise<FakeServer.Reply> => {
    const auth = request.headers["authorization"] ?? ""
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : ""
    if (!accepts(token) || revoked.has(token)) return unauthorized
    const path = request.path
    const route = `${request.method} ${path.replace(/\/2\/media\/upload\/\d+\//, "/2/media/upload/{id}/")}`
    const injected = queued.get(route)?.shift()
    if (injected !== undefined) return injected

    if (route === "POST /2/tweets") {
      const body = (request.json ?? {}) as Record<string, unknown>
      const text = typeof body["text"] === "string" ? body["text"] : undefined
      const ids = ((body["media"] as { media_ids?: Array<string> } | undefined)?.media_ids) ?? []
      // The description defaults `text` to "" "so it is always sent: the backend's `tweet_text` variable
      // is non-null and rejects an absent value" (CreatePostsRequest.text).
      if (text === undefined) {
        return {
          status: 400,
          body: {
            errors: [{ message: "Requires the field text (an empty string with media)" }],
            title: "Invalid Request",
            detail: "One or more parameters to your request was invalid.",
            type: "https://api.twitter.com/2/problems/invalid-request"
          }
        }
      }
      if (text?.includes("#fail-dup") || posts.some((p) => text !== undefined && p.text === text)) return duplicate
      if (text?.includes("#fail-long") || (text !== undefined && [...text].length > 280)) return tooLong
      if (text?.includes("#fail-429")) return tooManyRequests(fake.resetAt)
      if (text?.includes("#fail-500")) return serviceUnavailable
      if (text?.includes("#fail-media-ids")) return mediaIdsInvalid
      if (ids.length > 4 || ids.some((id) => media.get(id)?.finalized !== true)) return mediaIdsInvalid
      const reply = (body["reply"] as { in_reply_to_tweet_id?: string } | undefined)?.in_reply_to_tweet_id
      if (reply !== undefined && !posts.some((p) => p.id === reply)) {
        return {
          status: 400,
          body: {
            errors: [{ message: "Your Tweet cannot be a reply to a Tweet that was deleted or is not visible to you." }],
            title: "Invalid Request",
            detail: "One or more parameters to your request was invalid.",
            type: "https://api.twitter.com/2/problems/invalid-request"
          }
        }
      }
      nextPost += 1n
      const id = String(nextPost)
      posts.push({ id, text, body, createdAt: Date.now() })
      if (fake.createDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.createDelayMs))
      return {
        ...created(201, { id, text: text ?? "", edit_history_tweet_ids: [id] }),
        headers: {
          "x-rate-limit-limit": "100",
          "x-rate-limit-remaining": "99",
          "x-rate-limit-reset": String(fake.resetAt),
          "x-user-limit-24hour-limit": "17",
          "x-user-limit-24hour-remaining": "16",
          "x-user-limit-24hour-reset": String(fake.resetAt + 86400)
        }
      }
    }

    if (route === "POST /2/media/upload") {
      const file = request.form?.get("media")
      if (file === undefined || file === null || typeof file === "string") {
        return problem(
          400,
          "Invalid Request",
          "The `media` field is required.",
          "https://api.twitter.com/2/problems/invalid-request"
        )
      }
      const bytes = new Uint8Array(await file.arrayBuffer())
      nextMedia += 1n
      const m: Medium = {
        id: String(nextMedia),
        category: String(request.form?.get("media_category") ?? "tweet_image"),
        mimeType: file.type,
        totalBytes: bytes.byteLength,
        segments: new Map([[0, bytes]]),
        finalized: true,
        pendingPolls: 0,
        failProcessing: false,
        altText: undefined
      }
      media.set(m.id, m)
      return created(200, mediaData(m))
    }

    if (route === "POST /2/media/upload/initialize") {
      const body = (request.json ?? {}) as Record<string, unknown>
      nextMedia += 1n
      const m: Medium = {
        id: String(nextMedia),
        category: String(body["media_category"]),
        mimeType: String(body["media_type"]),
        totalBytes: Number(body["total_bytes"]),
        segments: new Map(),
        finalized: false,
        pendingPolls: 0,
        failProcessing: false,
        altText: undefined
      }
      media.set(m.id, m)
      return created(200, { id: m.id, media_key: `7_${m.id}`, expires_after_secs: 86400 })
    }

    const idMatch = /^\/2\/media\/upload\/(\d+)\/(append|finalize)$/.exec(path)
    if (idMatch !== null) {
      const m = media.get(idMatch[1]!)
      if (m === undefined) return problem(400, "Invalid Request", "Media id not found")
      if (idMatch[2] === "append") {
        const file = request.form?.get("media")
        const index = Number(request.form?.get("segment_index"))
        if (file === undefined || file === null || typeof file === "string" || !Number.isInteger(index)) {
          return problem(400, "Invalid Request", "segment_index and media are required")
        }
        m.segments.set(index, new Uint8Array(await file.arrayBuffer()))
        return { status: 200, body: { data: { expires_at: 1767312000 } } }
      }
      const received = [...m.segments.values()].reduce((n, s) => n + s.byteLength, 0)
      if (received !== m.totalBytes) {
        return problem(400, "Invalid Request", `File size mismatch: expected ${m.totalBytes}, got ${received}`)
      }
      m.finalized = true
      if (m.category === "tweet_image") return created(200, mediaData(m))
      m.pendingPolls = fake.videoPolls
      return created(200, mediaData(m, { processing_info: { state: "pending", check_after_secs: 1 } }))
    }

    if (route === "GET /2/media/upload" && request.query.get("command") === "STATUS") {
      const m = media.get(request.query.get("media_id") ?? "")
      if (m === undefined) return problem(400, "Invalid Request", "Media id not found")
      const info = processing(m)
      if (m.pendingPolls > 0) m.pendingPolls--
      return created(200, mediaData(m, { processing_info: info }))
    }

    if (route === "POST /2/media/metadata") {
      const body = (request.json ?? {}) as { id?: string; metadata?: { alt_text?: { text?: string } } }
      const m = media.get(body.id ?? "")
      if (m === undefined) return problem(400, "Invalid Request", "Media id not found")
      m.altText = body.metadata?.alt_text?.text
      return created(200, { id: m.id, associated_metadata: { alt_text: { text: m.altText ?? "" } } })
    }

    if (route === "GET /2/tweets") {
      const ids = (request.query.get("ids") ?? "").split(",")
      const data = posts.filter((p) => ids.includes(p.id)).map((p) => ({
        id: p.id,
        text: p.text ?? "",
        edit_history_tweet_ids: [p.id],
        public_metrics: {
          repost_count: 2,
          reply_count: 3,
          like_count: 5,
          quote_count: 1,
          bookmark_count: 4,
          impression_count: 120
        }
      }))
      return data.length > 0
        ? { status: 200, body: { data } }
        : {
          status: 200,
          body: {
            errors: [{
              value: ids[0],
              detail: `Could not find tweet with ids: [${ids[0]}].`,
              title: "Not Found Error",
              resource_type: "tweet",
              parameter: "ids",
              resource_id: ids[0],
              type: "https://api.x.com/2/problems/resource-not-found"
            }]
          }
        }
    }

    const timeline = /^\/2\/users\/(\d+)\/tweets$/.exec(path)
    if (request.method === "GET" && timeline !== null) {
      if (timeline[1] !== userId) {
        return problem(404, "Not Found Error", `Could not find user with id: [${timeline[1]}].`)
      }
      const start = Date.parse(request.query.get("start_time") ?? "") || -Infinity
      const end = Date.parse(request.query.get("end_time") ?? "") || Infinity
      const exclude = (request.query.get("exclude") ?? "").split(",")
      const size = Number(request.query.get("max_results") ?? "10")
      const offset = Number(request.query.get("pagination_token") ?? "0")
      const listed = [...posts]
        .sort((a, b) => b.createdAt - a.createdAt)
        .filter((p) => p.createdAt >= start && p.createdAt <= end)
        .filter((p) => !(exclude.includes("replies") && p.body["reply"] !== undefined))
      const page = listed.slice(offset, offset + size).map(shown)
      const more = offset + size < listed.length
      return {
        status: 200,
        body: {
          ...(page.length > 0 ? { data: page } : {}),
          meta: {
            result_count: page.length,
            ...(page.length > 0 ? { newest_id: page[0]!["id"], oldest_id: page[page.length - 1]!["id"] } : {}),
            ...(more ? { next_token: String(offset + size) } : {})
          }
        }
      }
    }

    return problem(404, "Not Found Error", `No route for ${request.method} ${path}`)
  }

  const server = await FakeServer.start(handler, { check: description().check })
  const fake: XFake = {
    server,
    posts,
    media,
    revoked,
    failNext: (route, reply) => {
      const list = queued.get(route) ?? []
      list.push(reply)
      queued.set(route, list)
    },
    videoPolls: 2,
    resetAt: Math.floor(Date.now() / 1000) + 900,
    createDelayMs: 0
  }
  return fake
}
