/**
 * A Facebook Pages fake on graph.facebook.com (reference §5, §6, §13), with the rupload host and
 * graph-video on the same origin: `/{page-id}/feed` (message, link, attached_media), `/{page-id}/photos`
 * (`url` or multipart `source`; `published=false` photos are only attachable), `/{page-id}/videos`,
 * `/{page-id}/video_reels` start/finish with `POST /video-upload/v26.0/{video-id}` in between
 * (`Authorization: OAuth`, `offset`, `file_size`, or `file_url`), `GET /{video-id}?fields=status`
 * answering processing for `videoPolls` polls then ready, `/{post-id}/comments`, and
 * `GET /{post-id}?fields=permalink_url` (relative for videos, as Graph answers).
 *
 * Errors use Meta's body. Injected by text: `#fail-dup` 506, `#fail-rate` code 32 with
 * `X-Business-Use-Case-Usage`, `#fail-fast` 368/1390008, `#fail-policy` 368/1346003, `#fail-perm` 200
 * (permission), `#fail-500` code 2 transient; by photo URL `fail-photo` 100/1366046; by video filename
 * `fail-processing` (processing ends in error); revoked tokens answer 190/460; `failNext` for a route.
 */
import { expiredToken, invalidToken, metaError, param, tokenOf } from "../../oauth/fakes/MetaFake.js"
import { Rulebook } from "./DocumentedRules.js"
import * as FakeServer from "./FakeServer.js"

/** Meta's Reels Publishing API page: the start/upload/finish phases, rupload headers, video_state. */
const reelsPublishing = "https://developers.facebook.com/docs/video-api/guides/reels-publishing"
const videoStates = ["DRAFT", "PUBLISHED", "SCHEDULED"]

export const pageToken = "EAAGfakePageTokenNeverExpiresQWERTYUIOPasdfghjklZXCVBNM1234567890"
export const pageId = "104858372211994"

export interface Photo {
  readonly id: string
  readonly params: Readonly<Record<string, string>>
  readonly bytes: Uint8Array | undefined
  readonly published: boolean
}

export interface Video {
  readonly id: string
  readonly kind: "reel" | "video"
  params: Record<string, string>
  bytes: Uint8Array | undefined
  fileUrl: string | undefined
  pendingPolls: number
  readonly fails: boolean
  finished: boolean
}

export interface Post {
  readonly id: string
  readonly kind: "feed" | "photo" | "video" | "reel"
  readonly params: Readonly<Record<string, string>>
  readonly comments: Array<string>
  /** When Facebook published it (epoch ms); a test may place a post made by another client at any time. */
  readonly createdAt?: number
  /** Engagement the metrics read answers; set by tests. */
  reactions?: number
  shares?: number
}

export interface FacebookFake {
  /** The documented rules checked on reel requests, and the requests that broke them. */
  readonly rules: Rulebook
  readonly server: FakeServer.FakeServer
  readonly photos: Map<string, Photo>
  readonly videos: Map<string, Video>
  readonly posts: Array<Post>
  readonly revoked: Set<string>
  /** Page tokens accepted, with their Page id (e.g. those a Facebook Login fake issued). */
  readonly pages: Map<string, string>
  /** Replies served, in order, to the next calls of a route, e.g. `POST /comments`, `POST /feed`, `GET /{id}`. */
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
  /** Status polls a video answers "processing" before "ready"; 2. */
  videoPolls: number
}

export const duplicate = metaError(400, "Duplicate status message", 506)
export const pageRateLimited: FakeServer.Reply = {
  ...metaError(400, "(#32) Page request limit reached", 32),
  headers: {
    "x-business-use-case-usage": JSON.stringify({
      [pageId]: [{
        type: "pages",
        call_count: 100,
        total_cputime: 12,
        total_time: 40,
        estimated_time_to_regain_access: 5
      }]
    })
  }
}
export const postingTooFast = metaError(
  400,
  "It looks like you were misusing this feature by going too fast. You've been temporarily blocked from using it.",
  368,
  { subcode: 1390008 }
)
export const policyBlocked = metaError(400, "This content isn't allowed on Facebook.", 368, { subcode: 1346003 })
export const noPermission = metaError(
  403,
  "(#200) If posting to a page, requires both pages_read_engagement and pages_manage_posts as an admin with " +
    "sufficient administrative permission",
  200
)
export const unavailable = metaError(500, "An unexpected error has occurred. Please retry your request later.", 2, {
  isTransient: true
})
export const photoRefused = metaError(
  400,
  "Invalid parameter",
  100,
  { subcode: 1366046 }
)

const paramsOf = (request: FakeServer.Recorded): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of request.query) out[key] = value
  request.form?.forEach((value, key) => {
    if (typeof value === "string") out[key] = value
  })
  delete out["access_token"]
  return out
}

const injected = (text: string): FakeServer.Reply | undefined =>
  text.includes("#fail-dup")
    ? duplicate
    : text.includes("#fail-rate")
    ? pageRateLimited
    : text.includes("#fail-fast")
    ? postingTooFast
    : text.includes("#fail-policy")
    ? policyBlocked
    : text.includes("#fail-perm")
    ? noPermission
    : text.includes("#fail-500")
    ? unavailable
    : undefined

export const start = async (): Promise<FacebookFake> => {
  const rules = new Rulebook()
  const photos = new Map<string, Photo>()
  const videos = new Map<string, Video>()
  const posts: Array<Post> = []
  const revoked = new Set<string>()
  const pages = new Map<string, string>([[pageToken, pageId]])
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let next = 122000000000000n
  const nextId = () => String(++next)

  const handler = async (request: FakeServer.Recorded): Promise<FakeServer.Reply> => {
    const token = tokenOf(request)
    if (token === undefined) return metaError(400, "An active access token must be used.", 2500)
    if (revoked.has(token)) return expiredToken
    const page = pages.get(token)
    if (page === undefined) return invalidToken

    const upload = /^\/video-upload\/v26\.0\/(\d+)$/.exec(request.path)
    if (upload !== null && request.method === "POST") {
      const video = videos.get(upload[1]!)
      if (video === undefined) {
        return {
          status: 400,
          body: { debug_info: { retriable: false, type: "NotFoundError", message: "Video not found" } }
        }
      }
      if (!/^OAuth /.test(request.headers.authorization ?? "")) {
        rules.check(request, false, {
          rule: "The upload carries Authorization: OAuth {page-access-token}",
          source: reelsPublishing
        })
        return {
          status: 401,
          body: { debug_info: { retriable: false, type: "AuthError", message: "Invalid OAuth header" } }
        }
      }
      const fileUrl = request.headers["file_url"]
      const headersBroken = rules.first(request, [
        [
          typeof fileUrl === "string" ||
          (request.headers["offset"] === "0" && request.headers["file_size"] === String(request.body.length)),
          {
            rule: "A byte upload carries offset (0) and file_size (the file's bytes) headers; a hosted one file_url",
            source: reelsPublishing
          }
        ]
      ])
      if (headersBroken !== undefined) {
        return {
          status: 400,
          body: { debug_info: { retriable: false, type: "ProcessingFailedError", message: headersBroken } }
        }
      }
      if (typeof fileUrl === "string") {
        video.fileUrl = fileUrl
      } else {
        if (request.headers["offset"] !== "0" || request.headers["file_size"] !== String(request.body.length)) {
          return {
            status: 400,
            body: {
              debug_info: { retriable: false, type: "ProcessingFailedError", message: "offset or file_size mismatch" }
            }
          }
        }
        video.bytes = new Uint8Array(request.body)
      }
      return { status: 200, body: { success: true } }
    }

    const match = /^\/v26\.0\/([^/]+)(?:\/(feed|photos|videos|video_reels|comments|posts))?$/.exec(request.path)
    if (match === null) return metaError(404, `Unknown path components: ${request.path}`, 2500)
    const [, target, edge] = match
    const route = edge === undefined ? `${request.method} /{id}` : `${request.method} /${edge}`
    const queuedReply = queued.get(route)?.shift()
    if (queuedReply !== undefined) return queuedReply
    const params = paramsOf(request)
    const onPage = target === page

    if (request.method === "POST" && edge === "feed") {
      if (!onPage) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const message = params["message"] ?? ""
      const failure = injected(message)
      if (failure !== undefined) return failure
      if (message.length > 63206) return metaError(400, "(#100) Message is too long", 100)
      const attached = params["attached_media"]
      if (attached !== undefined) {
        const ids = (JSON.parse(attached) as Array<{ media_fbid: string }>).map((m) => m.media_fbid)
        for (const id of ids) {
          const photo = photos.get(id)
          if (photo === undefined || photo.published) return metaError(400, `(#100) Invalid media_fbid ${id}`, 100)
        }
        if (params["link"] !== undefined) {
          return metaError(400, "(#100) link and attached_media cannot be combined", 100)
        }
      } else if (message === "" && params["link"] === undefined) {
        return metaError(400, "(#100) Missing message or attachment", 100)
      }
      const post: Post = { id: `${page}_${nextId()}`, kind: "feed", params, comments: [], createdAt: Date.now() }
      posts.push(post)
      return { status: 200, body: { id: post.id } }
    }

    // The Page's own posts (`/posts`: text and photo posts, `message`) or its videos and reels
    // (`/videos`, `description`), newest first; `since` (Unix seconds), `limit` (25 by default), cursor `after`.
    // https://developers.facebook.com/docs/graph-api/reference/page/feed
    if (request.method === "GET" && (edge === "posts" || edge === "videos")) {
      if (!onPage) return metaError(400, "Unsupported get request.", 100, { subcode: 33 })
      const since = Number(param(request, "since") ?? "-Infinity") * 1000
      const limit = Math.min(100, Number(param(request, "limit") ?? "25"))
      const offset = Number(param(request, "after") ?? "0")
      const videoKinds = ["video", "reel"]
      const listed = posts
        .filter((p) => videoKinds.includes(p.kind) === (edge === "videos"))
        .filter((p) => (p.createdAt ?? 0) >= since)
        .sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0))
      const page = listed.slice(offset, offset + limit)
      const more = offset + limit < listed.length
      const time = (p: Post) => new Date(p.createdAt ?? 0).toISOString().replace(/\.\d{3}Z$/, "+0000")
      return {
        status: 200,
        body: {
          data: page.map((p) =>
            edge === "videos"
              ? {
                id: p.id,
                description: p.params["description"] ?? "",
                created_time: time(p),
                permalink_url: `/reel/${p.id}/`
              }
              : {
                id: p.id,
                ...(p.params["message"] ?? p.params["caption"]) === undefined
                  ? {}
                  : { message: p.params["message"] ?? p.params["caption"] },
                created_time: time(p),
                permalink_url: `https://www.facebook.com/${p.id.replace("_", "/posts/")}`
              }
          ),
          paging: {
            cursors: { before: String(offset), after: String(offset + page.length) },
            ...(more ? { next: `${fake.server.url}/v26.0/${pageId}/${edge}?after=${offset + page.length}` } : {})
          }
        }
      }
    }

    if (request.method === "POST" && edge === "photos") {
      if (!onPage) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const failure = injected(params["caption"] ?? "")
      if (failure !== undefined) return failure
      const source = await FakeServer.fileBytes(request.form, "source")
      const url = params["url"]
      if (source === undefined && url === undefined) return metaError(400, "(#324) Requires upload file", 324)
      if (url?.includes("fail-photo") === true) return photoRefused
      const published = params["published"] !== "false"
      const photo: Photo = { id: nextId(), params, bytes: source, published }
      photos.set(photo.id, photo)
      if (!published) return { status: 200, body: { id: photo.id } }
      const post: Post = { id: `${page}_${nextId()}`, kind: "photo", params, comments: [], createdAt: Date.now() }
      posts.push(post)
      return { status: 200, body: { id: photo.id, post_id: post.id } }
    }

    if (request.method === "POST" && edge === "videos") {
      if (!onPage) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const failure = injected(params["description"] ?? "")
      if (failure !== undefined) return failure
      const source = await FakeServer.fileBytes(request.form, "source")
      const fileUrl = params["file_url"]
      if (source === undefined && fileUrl === undefined) return metaError(400, "(#324) Requires upload file", 324)
      const name = FakeServer.fileName(request.form, "source") ?? fileUrl ?? ""
      const video: Video = {
        id: nextId(),
        kind: "video",
        params,
        bytes: source,
        fileUrl,
        pendingPolls: fake.videoPolls,
        fails: name.includes("fail-processing"),
        finished: true
      }
      videos.set(video.id, video)
      posts.push({ id: video.id, kind: "video", params, comments: [], createdAt: Date.now() })
      return { status: 200, body: { id: video.id } }
    }

    if (request.method === "POST" && edge === "video_reels") {
      if (!onPage) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const phase = params["upload_phase"]
      if (phase === "start") {
        const video: Video = {
          id: nextId(),
          kind: "reel",
          params: {},
          bytes: undefined,
          fileUrl: undefined,
          pendingPolls: fake.videoPolls,
          fails: false,
          finished: false
        }
        videos.set(video.id, video)
        return {
          status: 200,
          body: { video_id: video.id, upload_url: `${server.url}/video-upload/v26.0/${video.id}` }
        }
      }
      if (phase === "finish") {
        const video = videos.get(params["video_id"] ?? "")
        if (video === undefined || video.kind !== "reel") return metaError(400, "(#100) Invalid video_id", 100)
        if (video.bytes === undefined && video.fileUrl === undefined) {
          return metaError(400, "(#100) The video has not been uploaded", 100)
        }
        const failure = injected(params["description"] ?? "")
        if (failure !== undefined) return failure
        const stateBroken = rules.check(request, videoStates.includes(params["video_state"] ?? ""), {
          rule: `finish takes video_state, one of ${videoStates.join(", ")}`,
          source: reelsPublishing
        })
        if (stateBroken !== undefined) return metaError(400, `(#100) ${stateBroken}`, 100)
        video.params = params
        video.finished = true
        posts.push({ id: video.id, kind: "reel", params, comments: [], createdAt: Date.now() })
        return { status: 200, body: { success: true } }
      }
      rules.check(request, false, { rule: "upload_phase is one of start, transfer, finish", source: reelsPublishing })
      return metaError(400, "(#100) upload_phase must be one of start, transfer, finish", 100)
    }

    if (request.method === "POST" && edge === "comments") {
      const post = posts.find((p) => p.id === target)
      if (post === undefined) return metaError(400, "Unsupported post request.", 100, { subcode: 33 })
      const message = params["message"] ?? ""
      if (message === "") return metaError(400, "(#100) Missing message", 100)
      post.comments.push(message)
      return { status: 200, body: { id: `${post.id.split("_").pop()}_${nextId()}` } }
    }

    if (request.method === "GET" && edge === undefined) {
      const fields = param(request, "fields") ?? ""
      const video = videos.get(target!)
      if (video !== undefined && fields.includes("status")) {
        if (!video.finished) {
          return {
            status: 200,
            body: {
              id: video.id,
              status: {
                video_status: "upload_complete",
                uploading_phase: { status: "complete" },
                processing_phase: { status: "not_started" },
                publishing_phase: { status: "not_started" }
              }
            }
          }
        }
        if (video.pendingPolls > 0) {
          video.pendingPolls--
          return {
            status: 200,
            body: {
              id: video.id,
              status: {
                video_status: "processing",
                uploading_phase: { status: "complete" },
                processing_phase: { status: "in_progress" },
                publishing_phase: { status: "not_started" }
              }
            }
          }
        }
        if (video.fails) {
          return {
            status: 200,
            body: {
              id: video.id,
              status: {
                video_status: "error",
                uploading_phase: { status: "complete" },
                processing_phase: {
                  status: "error",
                  error: { message: "The video file you selected is in a format that we don't support." }
                },
                publishing_phase: { status: "not_started" }
              }
            }
          }
        }
        return {
          status: 200,
          body: {
            id: video.id,
            status: {
              video_status: "ready",
              uploading_phase: { status: "complete" },
              processing_phase: { status: "complete" },
              publishing_phase: { status: "complete", publish_status: "published" }
            }
          }
        }
      }
      const post = posts.find((p) => p.id === target)
      if (post !== undefined && fields.includes("reactions")) {
        if (fields.includes("shares") && (post.kind === "video" || post.kind === "reel")) {
          return metaError(400, "(#100) Tried accessing nonexisting field (shares) on node type (Video)", 100)
        }
        return {
          status: 200,
          body: {
            id: post.id,
            reactions: { data: [], summary: { total_count: post.reactions ?? 0, viewer_reaction: "NONE" } },
            comments: { data: [], summary: { order: "ranked", total_count: post.comments.length, can_comment: true } },
            ...(post.kind === "video" || post.kind === "reel" || post.shares === undefined
              ? {}
              : { shares: { count: post.shares } })
          }
        }
      }
      if (post !== undefined && fields.includes("permalink_url")) {
        const permalink = post.kind === "reel"
          ? `/reel/${post.id}/`
          : post.kind === "video"
          ? `/${page}/videos/${post.id}/`
          : `https://www.facebook.com/${page}/posts/pfbid0${post.id.split("_")[1]}`
        return { status: 200, body: { id: post.id, permalink_url: permalink } }
      }
      return metaError(400, `Unsupported get request. Object with ID '${target}' does not exist.`, 100, { subcode: 33 })
    }

    return metaError(400, `Unknown path components: ${request.path}`, 2500)
  }

  const server = await FakeServer.start(handler)
  const fake: FacebookFake = {
    rules,
    server,
    photos,
    videos,
    posts,
    revoked,
    pages,
    failNext: (route, reply) => {
      const list = queued.get(route) ?? []
      list.push(reply)
      queued.set(route, list)
    },
    videoPolls: 2
  }
  return fake
}
