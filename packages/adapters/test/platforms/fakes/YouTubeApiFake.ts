/**
 * A YouTube Data API v3 fake on www.googleapis.com (reference §10, §13): the resumable upload
 * (`POST /upload/youtube/v3/videos?uploadType=resumable` answering a loopback session URI in
 * `Location`; `PUT {session}` with `Content-Range: bytes a-b/N` answering `308` + `Range: bytes=0-x`
 * until the last byte, then the video resource; `bytes *\/N` status queries; chunks that are not
 * multiples of 256 KiB refused), and `POST /youtube/v3/commentThreads`. Errors are Google's bodies
 * `{error:{code,message,errors:[{message,domain,reason}],status}}`.
 *
 * Injected by title: `#fail-quota` 403 quotaExceeded, `#fail-uploadlimit` 400 uploadLimitExceeded,
 * `#fail-rate` 403 userRateLimitExceeded, `#fail-title` 400 invalidTitle, `#fail-category` 400
 * invalidCategoryId, `#fail-500` 503 backendError, `#fail-reject` a video answered `rejected`.
 * `interruptNext` keeps only part of the next chunk and answers 503 (the client must ask where the
 * session stands); `expireAfter` makes a later `PUT` find its session gone (404); `failNext` queues a
 * reply for a route (`POST /upload`, `PUT /upload`, `POST /commentThreads`).
 *
 * Requests are checked against Google's description of the Data API (`specs/youtube-openapi.json`,
 * converted from the discovery document): `videos`, `commentThreads` and the upload session's opening
 * `POST` (the `videos.insert` parameters, its JSON metadata against the `Video` schema). The
 * description carries neither the resumable protocol nor the upload's limits; the fake encodes them
 * from Google's pages: https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol
 * (the session, `Content-Range`, 308 with `Range`, chunks in multiples of 256 KiB) and
 * https://developers.google.com/youtube/v3/docs/videos#properties (title at most 100 characters,
 * description at most 5000 bytes, no `<` or `>` in either, tags at most 500 characters in all).
 * A comment thread names its channel and video: without `snippet.channelId` the API answers
 * `channelOrVideoIdMissing` (https://developers.google.com/youtube/v3/docs/commentThreads/insert#errors).
 */
import * as ApiDescription from "./ApiDescription.js"
import * as FakeServer from "./FakeServer.js"

/** The channel the fake's token belongs to (as the OAuth fake's account `g-1`). */
export const channelId = "UCherald0000000000000001"

/** The channel's uploads playlist (`contentDetails.relatedPlaylists.uploads`). */
export const uploadsPlaylistId = `UU${channelId.slice(2)}`

export const description = () => ApiDescription.load({ file: "youtube-openapi.json" })

const isSession = (request: FakeServer.Recorded) =>
  request.path === "/upload/youtube/v3/videos" && request.query.has("upload_id")

/** The description's rules for a request; the upload session's `PUT`s are the fake's own. */
export const problemsOf = (request: FakeServer.Recorded): ReadonlyArray<string> => {
  if (isSession(request)) return []
  if (request.path !== "/upload/youtube/v3/videos") return description().problemsOf(request)
  // The media upload endpoint of `videos.insert`: its parameters, and the metadata as a Video.
  const problems = [
    ...description().problemsOf({
      ...request,
      path: "/youtube/v3/videos",
      headers: { ...request.headers, "content-type": "application/octet-stream" },
      body: Buffer.alloc(0),
      json: undefined
    }).filter((p) => p !== "a request body is required"),
    ...(request.json === undefined
      ? ["the metadata must be JSON"]
      : description().validate("/components/schemas/Video", request.json, "metadata"))
  ]
  for (const header of ["x-upload-content-length", "x-upload-content-type"]) {
    if (request.headers[header] === undefined) problems.push(`header ${header} is required for a resumable session`)
  }
  return problems
}

export const accessToken = "ya29.a0fakeYouTubeAccessTokenQWERTYUIOPasdfghjklZXCVBNM0123456789"
export const chunkUnit = 256 * 1024

export interface Session {
  readonly id: string
  readonly metadata: unknown
  readonly total: number
  readonly contentType: string
  received: Uint8Array
  videoId: string | undefined
}

export interface Video {
  readonly id: string
  readonly metadata: unknown
  readonly bytes: Uint8Array
  readonly comments: Array<string>
  /** When YouTube added it to the channel's uploads (epoch ms). */
  readonly createdAt: number
  /** Statistics the `videos?part=statistics` read answers; set by tests. */
  views?: number
  likes?: number
}

export interface YouTubeFake {
  readonly server: FakeServer.FakeServer
  readonly sessions: Map<string, Session>
  readonly videos: Array<Video>
  readonly revoked: Set<string>
  /** Access tokens accepted (e.g. those a Google OAuth fake issued). */
  readonly tokens: Set<string>
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
  /** The next chunk PUT keeps this many of its bytes, then answers 503 (or drops the connection). */
  interruptNext: number | undefined
  /** How `interruptNext` ends the request; 503 Backend Error. */
  interruptWith: "503" | "drop"
  /** An unaudited API project: every upload ends up private, whatever was asked. */
  unaudited: boolean
  /** After this many more PUTs, the next one finds its session gone (404). */
  expireAfter: number | undefined
}

export const googleError = (
  status: number,
  message: string,
  reason: string,
  domain = "global",
  extra: Readonly<Record<string, string>> = {}
): FakeServer.Reply => ({
  status,
  body: {
    error: {
      code: status,
      message,
      errors: [{ message, domain, reason, ...extra }],
      ...(status === 401 ? { status: "UNAUTHENTICATED" } : status === 403 ? { status: "PERMISSION_DENIED" } : {})
    }
  }
})

export const invalidCredentials = googleError(
  401,
  "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid " +
    "authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
  "authError",
  "global",
  { location: "Authorization", locationType: "header" }
)
export const quotaExceeded = googleError(
  403,
  "The request cannot be completed because you have exceeded your <a href=\"/youtube/v3/getting-started#quota\">quota</a>.",
  "quotaExceeded",
  "youtube.quota"
)
export const uploadLimitExceeded = googleError(
  400,
  "The user has exceeded the number of videos they may upload.",
  "uploadLimitExceeded",
  "youtube.video"
)
export const userRateLimited = googleError(403, "User Rate Limit Exceeded", "userRateLimitExceeded", "usageLimits")
export const invalidTitle = googleError(
  400,
  "The request metadata specifies an invalid video title.",
  "invalidTitle",
  "youtube.video"
)
export const invalidCategory = googleError(
  400,
  "The <code>snippet.categoryId</code> property specifies an invalid category ID.",
  "invalidCategoryId",
  "youtube.video"
)
export const backendError = googleError(503, "Backend Error", "backendError")

const bearer = (request: FakeServer.Recorded) => /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]

const titleOf = (metadata: unknown): string => {
  const snippet = (metadata as { snippet?: { title?: unknown } } | undefined)?.snippet
  return typeof snippet?.title === "string" ? snippet.title : ""
}

export const start = async (): Promise<YouTubeFake> => {
  const sessions = new Map<string, Session>()
  const videos: Array<Video> = []
  const revoked = new Set<string>()
  const tokens = new Set<string>([accessToken])
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let next = 0

  const resource = (session: Session, id: string) => {
    const metadata = session.metadata as { snippet?: Record<string, unknown>; status?: Record<string, unknown> }
    const rejected = titleOf(metadata).includes("#fail-reject")
    return {
      status: 200,
      body: {
        kind: "youtube#video",
        etag: `etag-${id}`,
        id,
        snippet: { ...metadata.snippet, channelId },
        status: {
          uploadStatus: rejected ? "rejected" : "uploaded",
          ...(rejected ? { rejectionReason: "duplicate" } : {}),
          privacyStatus: fake.unaudited ? "private" : metadata.status?.["privacyStatus"] ?? "public",
          selfDeclaredMadeForKids: metadata.status?.["selfDeclaredMadeForKids"] ?? false
        }
      }
    }
  }

  const append = (session: Session, chunk: Uint8Array) => {
    const out = new Uint8Array(session.received.length + chunk.length)
    out.set(session.received)
    out.set(chunk, session.received.length)
    session.received = out
  }

  const progress = (session: Session): FakeServer.Reply =>
    session.received.length === 0
      ? { status: 308, headers: { "x-guploader-uploadid": session.id } }
      : {
        status: 308,
        headers: { range: `bytes=0-${session.received.length - 1}`, "x-guploader-uploadid": session.id }
      }

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    const token = bearer(request)
    if (token === undefined || !tokens.has(token) || revoked.has(token)) return invalidCredentials
    const upload = request.path === "/upload/youtube/v3/videos"
    const route = upload ? `${request.method} /upload` : `${request.method} ${request.path.replace("/youtube/v3", "")}`
    const queuedReply = queued.get(route)?.shift()
    if (queuedReply !== undefined) return queuedReply

    if (upload && request.method === "POST") {
      if (request.query.get("uploadType") !== "resumable") {
        return googleError(400, "Unsupported upload type", "badRequest")
      }
      const total = Number(request.headers["x-upload-content-length"])
      const contentType = request.headers["x-upload-content-type"]
      if (!Number.isFinite(total) || total <= 0 || typeof contentType !== "string") {
        return googleError(400, "X-Upload-Content-Length and X-Upload-Content-Type are required", "badRequest")
      }
      const title = titleOf(request.json)
      if (title.includes("#fail-quota")) return quotaExceeded
      if (title.includes("#fail-uploadlimit")) return uploadLimitExceeded
      if (title.includes("#fail-rate")) return userRateLimited
      if (title.includes("#fail-title") || title === "" || [...title].length > 100 || /[<>]/.test(title)) {
        return invalidTitle
      }
      const snippet = (request.json as { snippet?: { description?: unknown; tags?: unknown } } | undefined)?.snippet
      const text = typeof snippet?.description === "string" ? snippet.description : ""
      if (Buffer.byteLength(text) > 5000 || /[<>]/.test(text)) {
        return googleError(
          400,
          "The request metadata specifies an invalid video description.",
          "invalidDescription",
          "youtube.video"
        )
      }
      const tags = Array.isArray(snippet?.tags) ? snippet.tags.map(String) : []
      if (tags.reduce((n, t) => n + t.length, 0) > 500) {
        return googleError(
          400,
          "The request metadata specifies invalid video keywords.",
          "invalidTags",
          "youtube.video"
        )
      }
      if (title.includes("#fail-category")) return invalidCategory
      if (title.includes("#fail-500")) return backendError
      const id = `upload-${++next}`
      sessions.set(id, {
        id,
        metadata: request.json,
        total,
        contentType,
        received: new Uint8Array(0),
        videoId: undefined
      })
      return {
        status: 200,
        headers: { location: `${server.url}/upload/youtube/v3/videos?uploadType=resumable&upload_id=${id}` }
      }
    }

    if (upload && request.method === "PUT") {
      const id = request.query.get("upload_id") ?? ""
      if (fake.expireAfter !== undefined) {
        if (fake.expireAfter === 0) sessions.delete(id)
        fake.expireAfter = fake.expireAfter === 0 ? undefined : fake.expireAfter - 1
      }
      const session = sessions.get(id)
      if (session === undefined) return googleError(404, "Not Found", "notFound")
      const range = request.headers["content-range"] ?? ""
      const query = /^bytes \*\/(\d+)$/.exec(range)
      if (query !== null) {
        if (session.videoId !== undefined) return resource(session, session.videoId)
        return progress(session)
      }
      const chunk = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range)
      if (chunk === null) return googleError(400, "Content-Range is required", "badContent")
      const [first, last, total] = [Number(chunk[1]), Number(chunk[2]), Number(chunk[3])]
      if (total !== session.total || last - first + 1 !== request.body.length || last >= total) {
        return googleError(400, "Content-Range does not match the body", "badContent")
      }
      if (first !== session.received.length) {
        return googleError(400, `Expected the upload to continue at byte ${session.received.length}`, "badContent")
      }
      if (last + 1 < total && request.body.length % chunkUnit !== 0) {
        return googleError(400, "Chunks other than the last must be multiples of 256 KiB", "badContent")
      }
      if (fake.interruptNext !== undefined) {
        const keep = fake.interruptNext
        fake.interruptNext = undefined
        append(session, new Uint8Array(request.body.subarray(0, keep)))
        return fake.interruptWith === "drop" ? { status: 0, drop: true } : backendError
      }
      append(session, new Uint8Array(request.body))
      if (session.received.length < session.total) return progress(session)
      const videoId = `vid${String(++next).padStart(8, "0")}`
      session.videoId = videoId
      videos.push({
        id: videoId,
        metadata: session.metadata,
        bytes: session.received,
        comments: [],
        createdAt: Date.now()
      })
      return resource(session, videoId)
    }

    if (request.path === "/youtube/v3/videos" && request.method === "GET") {
      if (request.query.get("part") !== "statistics") return googleError(400, "part must be statistics", "invalidPart")
      const ids = (request.query.get("id") ?? "").split(",")
      return {
        status: 200,
        body: {
          kind: "youtube#videoListResponse",
          items: videos.filter((v) => ids.includes(v.id)).map((v) => ({
            kind: "youtube#video",
            id: v.id,
            statistics: {
              viewCount: String(v.views ?? 0),
              likeCount: String(v.likes ?? 0),
              favoriteCount: "0",
              commentCount: String(v.comments.length)
            }
          })),
          pageInfo: { totalResults: 1, resultsPerPage: 1 }
        }
      }
    }

    if (request.path === "/youtube/v3/channels" && request.method === "GET") {
      if (request.query.get("mine") !== "true" || request.query.get("part") !== "contentDetails") {
        return googleError(400, "only part=contentDetails&mine=true is modelled", "invalidPart")
      }
      return {
        status: 200,
        body: {
          kind: "youtube#channelListResponse",
          items: [{
            kind: "youtube#channel",
            id: channelId,
            contentDetails: { relatedPlaylists: { uploads: uploadsPlaylistId } }
          }],
          pageInfo: { totalResults: 1, resultsPerPage: 1 }
        }
      }
    }

    if (request.path === "/youtube/v3/playlistItems" && request.method === "GET") {
      if (request.query.get("playlistId") !== uploadsPlaylistId) {
        return googleError(
          404,
          "The playlist identified with the request's playlistId parameter cannot be found.",
          "playlistNotFound",
          "youtube.playlistItem"
        )
      }
      const size = Number(request.query.get("maxResults") ?? "5")
      const offset = Number((request.query.get("pageToken") ?? "p0").slice(1))
      const listed = [...videos].sort((a, b) => b.createdAt - a.createdAt)
      const page = listed.slice(offset, offset + size)
      return {
        status: 200,
        body: {
          kind: "youtube#playlistItemListResponse",
          items: page.map((v, i) => {
            const snippet = (v.metadata as { snippet?: { title?: string; description?: string } } | undefined)?.snippet
            return {
              kind: "youtube#playlistItem",
              id: `pli-${v.id}`,
              snippet: {
                publishedAt: new Date(v.createdAt).toISOString(),
                channelId,
                title: snippet?.title ?? "",
                description: snippet?.description ?? "",
                playlistId: uploadsPlaylistId,
                position: offset + i,
                resourceId: { kind: "youtube#video", videoId: v.id }
              }
            }
          }),
          ...(offset + size < listed.length ? { nextPageToken: `p${offset + size}` } : {}),
          pageInfo: { totalResults: listed.length, resultsPerPage: size }
        }
      }
    }

    if (request.path === "/youtube/v3/commentThreads" && request.method === "POST") {
      const snippet = (request.json as {
        snippet?: { channelId?: string; videoId?: string; topLevelComment?: { snippet?: { textOriginal?: string } } }
      })?.snippet
      if (snippet?.channelId === undefined) {
        return googleError(
          400,
          "The comment thread must specify a channelId and a videoId.",
          "channelOrVideoIdMissing",
          "youtube.commentThread"
        )
      }
      if (snippet.channelId !== channelId) {
        return googleError(403, "The comment thread could not be created.", "forbidden", "youtube.commentThread")
      }
      const video = videos.find((v) => v.id === snippet?.videoId)
      if (video === undefined) {
        return googleError(
          404,
          "The video identified by the videoId parameter could not be found.",
          "videoNotFound",
          "youtube.commentThread"
        )
      }
      const text = snippet?.topLevelComment?.snippet?.textOriginal ?? ""
      if (text === "") return googleError(400, "The comment is empty.", "commentTextRequired", "youtube.commentThread")
      video.comments.push(text)
      return {
        status: 200,
        body: { kind: "youtube#commentThread", id: `Ug${++next}`, snippet: { channelId, videoId: video.id } }
      }
    }

    return googleError(404, "Not Found", "notFound")
  }

  const server = await FakeServer.start(handler, {
    check: {
      request: problemsOf,
      ...(description().check.reply === undefined ? {} : { reply: description().check.reply })
    }
  })
  const fake: YouTubeFake = {
    server,
    sessions,
    videos,
    revoked,
    tokens,
    failNext: (route, reply) => {
      const list = queued.get(route) ?? []
      list.push(reply)
      queued.set(route, list)
    },
    interruptNext: undefined,
    interruptWith: "503",
    expireAfter: undefined,
    unaudited: false
  }
  return fake
}

/** An MP4 with `ftyp`, `moov` (`mvhd` duration, one video `tkhd` size, rotated if asked) and `mdat` padding. */
export const mp4 = (options: {
  readonly width: number
  readonly height: number
  readonly seconds: number
  readonly size: number
  readonly rotate90?: boolean
}): Uint8Array => {
  const box = (type: string, payload: Uint8Array) => {
    const out = new Uint8Array(8 + payload.length)
    const view = new DataView(out.buffer)
    view.setUint32(0, out.length)
    for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
    out.set(payload, 8)
    return out
  }
  const concat = (...parts: Array<Uint8Array>) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }
  const mvhd = new Uint8Array(100)
  new DataView(mvhd.buffer).setUint32(12, 1000)
  new DataView(mvhd.buffer).setUint32(16, Math.round(options.seconds * 1000))
  const tkhd = new Uint8Array(84)
  const t = new DataView(tkhd.buffer)
  const matrix = options.rotate90 === true
    ? [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000]
    : [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000]
  matrix.forEach((v, i) => t.setInt32(40 + i * 4, v))
  t.setUint32(76, options.width * 65536)
  t.setUint32(80, options.height * 65536)
  const audioTkhd = new Uint8Array(84)
  const head = concat(
    box("ftyp", new TextEncoder().encode("isom\0\0\x02\0isomiso2mp41")),
    box("moov", concat(box("mvhd", mvhd), box("trak", box("tkhd", audioTkhd)), box("trak", box("tkhd", tkhd))))
  )
  const padding = Math.max(0, options.size - head.length - 8)
  const mdat = new Uint8Array(padding)
  for (let i = 0; i < padding; i++) mdat[i] = (i * 13 + 7) % 251
  return concat(head, box("mdat", mdat))
}
