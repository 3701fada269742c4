/**
 * A Pinterest API v5 fake on api.pinterest.com (reference §12, §13): `/v5/oauth/token` (HTTP Basic
 * client authentication; code and refresh grants), `/v5/user_account`, `/v5/boards` (paged by
 * `bookmark`, `boardsPageSize` per page), `/v5/pins`, and the video flow: `POST /v5/media` returns a
 * loopback `upload_url` with S3-style `upload_parameters`; the upload (multipart, every parameter then
 * `file`) answers 204; `GET /v5/media/{id}` says registered, then processing for `processingPolls` polls,
 * then succeeded. Error bodies are Pinterest's `{code, message}`.
 *
 * Injected by description: `#fail-rate` 429 with Pinterest's rate-limit headers, `#fail-500` a 500,
 * `#fail-url` the media error "Unable to reach the URL". `trial` makes every pin creation answer code 29,
 * as production does for Trial-access apps; `failVideo` makes the media processing fail.
 *
 * Every `/v5` request is checked against Pinterest's published OpenAPI description
 * (`specs/pinterest-openapi.json`, `ApiDescription`), and every answer conforms to its response
 * schemas. The upload to `upload_url` is Amazon S3's POST-policy form, which the description does not
 * carry: every `upload_parameters` field, then `file` last
 * (https://developers.pinterest.com/docs/content/content-creation/#Creating%20video%20Pins).
 */
import { randomBytes } from "node:crypto"
import * as ApiDescription from "./ApiDescription.js"
import * as FakeServer from "./FakeServer.js"

export const description = () => ApiDescription.load({ file: "pinterest-openapi.json", basePath: "/v5" })

const isUpload = (request: FakeServer.Recorded) => request.path === "/s3upload"

export const clientId = "1484365"
export const clientSecret = "pinterest-client-secret-0123456789abcdef"
export const userId = "1070096323605"
export const username = "heraldpins"

export interface Board {
  id: string
  name: string
  privacy: string
}

export interface Pin {
  readonly id: string
  readonly body: Record<string, unknown>
  /** When Pinterest stored it (epoch ms); a test may place a pin made by another client at any time. */
  readonly createdAt: number
}

/** A pin as Pinterest answers it. */
const pinOf = (pin: Pin) => {
  const type = (pin.body["media_source"] as Record<string, unknown> | undefined)?.["source_type"]
  return {
    id: pin.id,
    created_at: new Date(pin.createdAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
    board_id: pin.body["board_id"],
    title: pin.body["title"] ?? "",
    description: typeof pin.body["description"] === "string" ? pin.body["description"] : "",
    link: pin.body["link"] ?? null,
    media: {
      media_type: type === "video_id" ? "video" : type?.toString().startsWith("multiple") ? "multiple_images" : "image"
    }
  }
}

export interface VideoUpload {
  readonly mediaId: string
  readonly parameters: Record<string, string>
  /** The form field names in the order they arrived. */
  fields: Array<string>
  received: Uint8Array | undefined
  polls: number
}

export interface PinterestFake {
  readonly server: FakeServer.FakeServer
  readonly pins: Array<Pin>
  readonly uploads: Array<VideoUpload>
  readonly tokens: Set<string>
  /** A code the authorize step would have issued. */
  readonly issueCode: () => string
  readonly accessToken: string
  boards: Array<Board>
  boardsPageSize: number
  trial: boolean
  failVideo: boolean
  processingPolls: number
  /** What `/v5/pins/{id}/analytics` reports as lifetime metrics. */
  analytics: Record<string, number>
  /** Replies served, in order, to the next calls of a route (e.g. `GET /v5/pins`) instead of the normal behaviour. */
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
}

export const pinterestError = (status: number, code: number, message: string, headers?: Record<string, string>) => ({
  status,
  ...(headers === undefined ? {} : { headers }),
  body: { code, message }
})

export const authFailed = pinterestError(401, 2, "Authentication failed.")

export const start = async (): Promise<PinterestFake> => {
  const pins: Array<Pin> = []
  const uploads: Array<VideoUpload> = []
  const tokens = new Set<string>()
  const refreshTokens = new Set<string>()
  const codes = new Set<string>()
  let next = 1070096323605000000n

  const issueTokens = () => {
    const access = `pina_${randomBytes(24).toString("hex").toUpperCase()}`
    const refresh = `pinr.${randomBytes(24).toString("hex")}`
    tokens.add(access)
    refreshTokens.add(refresh)
    return {
      access_token: access,
      refresh_token: refresh,
      response_type: "authorization_code",
      token_type: "bearer",
      expires_in: 2592000,
      refresh_token_expires_in: 31536000,
      scope: "boards:read,boards:write,pins:read,pins:write,user_accounts:read"
    }
  }

  const queued = new Map<string, Array<FakeServer.Reply>>()

  const handler = (request: FakeServer.Recorded): FakeServer.Reply | Promise<FakeServer.Reply> => {
    const injected = queued.get(`${request.method} ${request.path}`)?.shift()
    if (injected !== undefined) return injected
    if (request.path === "/v5/oauth/token" && request.method === "POST") {
      const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`
      if (request.headers.authorization !== basic) return pinterestError(401, 1, "Client authentication failed.")
      const form = request.form
      if (form?.get("grant_type") === "refresh_token") {
        if (!refreshTokens.has(String(form.get("refresh_token")))) {
          return pinterestError(400, 1, "Invalid refresh token.")
        }
        const { refresh_token: _, ...rest } = issueTokens()
        return { status: 200, body: rest }
      }
      const code = String(form?.get("code") ?? "")
      if (form?.get("grant_type") !== "authorization_code" || !codes.delete(code)) {
        return pinterestError(400, 1, "Invalid authorization code.")
      }
      return { status: 200, body: issueTokens() }
    }

    if (request.path === "/s3upload" && request.method === "POST") {
      const form = request.form
      const key = String(form?.get("key") ?? "")
      const target = uploads.find((u) => u.parameters["key"] === key)
      if (target === undefined || form === undefined) {
        return {
          status: 403,
          headers: { "content-type": "application/xml" },
          body: "<Error><Code>AccessDenied</Code></Error>"
        }
      }
      const fields = [...form.keys()]
      const missing = Object.entries(target.parameters).some(([k, v]) => form.get(k) !== v)
      if (missing || fields[fields.length - 1] !== "file") {
        return {
          status: 400,
          headers: { "content-type": "application/xml" },
          body: "<Error><Code>InvalidArgument</Code><Message>Missing policy field</Message></Error>"
        }
      }
      target.fields = fields
      return FakeServer.fileBytes(form, "file").then((file) => {
        target.received = file
        return { status: 204 }
      })
    }

    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
    if (token === undefined || !tokens.has(token)) return authFailed

    if (request.path === "/v5/user_account" && request.method === "GET") {
      return {
        status: 200,
        body: {
          account_type: "BUSINESS",
          id: userId,
          username,
          profile_image: "https://i.pinimg.com/600x600_R/heraldpins.jpg",
          website_url: "https://herald.example.com"
        }
      }
    }

    if (request.path === "/v5/boards" && request.method === "GET") {
      const start = Number(request.query.get("bookmark") ?? "0")
      const page = fake.boards.slice(start, start + fake.boardsPageSize)
      const more = start + fake.boardsPageSize < fake.boards.length
      return {
        status: 200,
        body: { items: page, bookmark: more ? String(start + fake.boardsPageSize) : null }
      }
    }

    if (request.path === "/v5/media" && request.method === "POST") {
      if ((request.json as { media_type?: string } | undefined)?.media_type !== "video") {
        return pinterestError(400, 1, "Invalid parameters: media_type must be video")
      }
      const mediaId = String(++next)
      const parameters = {
        "x-amz-date": "20261123T000000Z",
        "x-amz-signature": randomBytes(16).toString("hex"),
        "x-amz-security-token": randomBytes(12).toString("hex"),
        "x-amz-algorithm": "AWS4-HMAC-SHA256",
        key: `uploads/${mediaId}/video.mp4`,
        policy: Buffer.from(`{"expiration":"2026-11-24T00:00:00Z","id":"${mediaId}"}`).toString("base64"),
        "x-amz-credential": "AKIAFAKE/20261123/us-east-1/s3/aws4_request",
        "Content-Type": "multipart/form-data"
      }
      uploads.push({ mediaId, parameters, fields: [], received: undefined, polls: 0 })
      return {
        status: 201,
        body: {
          media_id: mediaId,
          media_type: "video",
          upload_url: `${server.url}/s3upload`,
          upload_parameters: parameters
        }
      }
    }

    const mediaStatus = /^\/v5\/media\/(\d+)$/.exec(request.path)
    if (mediaStatus !== null && request.method === "GET") {
      const target = uploads.find((u) => u.mediaId === mediaStatus[1])
      if (target === undefined) return pinterestError(404, 4, "Media not found.")
      const status = target.received === undefined
        ? "registered"
        : target.polls++ < fake.processingPolls
        ? "processing"
        : fake.failVideo
        ? "failed"
        : "succeeded"
      return { status: 200, body: { media_id: target.mediaId, media_type: "video", status } }
    }

    const analytics = /^\/v5\/pins\/(\d+)\/analytics$/.exec(request.path)
    if (analytics !== null && request.method === "GET") {
      if (!pins.some((p) => p.id === analytics[1])) return pinterestError(404, 50, "Pin not found.")
      const [start, end] = [request.query.get("start_date"), request.query.get("end_date")]
      if (start === null || end === null || !/^\d{4}-\d{2}-\d{2}$/.test(start) || !/^\d{4}-\d{2}-\d{2}$/.test(end)) {
        return pinterestError(400, 1, "Invalid parameters: start_date and end_date are required")
      }
      if ((Date.parse(end) - Date.parse(start)) / 86_400_000 > 90) {
        return pinterestError(400, 1, "Invalid parameters: date range may not exceed 90 days")
      }
      const types = (request.query.get("metric_types") ?? "").split(",")
      const lifetime = Object.fromEntries(Object.entries(fake.analytics).filter(([k]) => types.includes(k)))
      return { status: 200, body: { all: { daily_metrics: [], lifetime_metrics: lifetime } } }
    }

    if (request.path === "/v5/pins" && request.method === "POST") {
      const body = (request.json ?? {}) as Record<string, unknown>
      const description = typeof body["description"] === "string" ? body["description"] : ""
      if (fake.trial) {
        return pinterestError(
          403,
          29,
          "Apps with Trial access may not create Pins in production https://api.pinterest.com - use API Sandbox https://api-sandbox.pinterest.com instead."
        )
      }
      if (description.includes("#fail-rate")) {
        return pinterestError(429, 8, "Rate limit exceeded. Please check your rate limits and try again later.", {
          "x-ratelimit-limit": "100, 100;w=1",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset": "42"
        })
      }
      if (description.includes("#fail-500")) return pinterestError(500, 5, "Internal server error.")
      if (description.includes("#fail-url")) {
        return pinterestError(400, 1, "Unable to reach the URL: https://example.com/x.jpg")
      }
      if (!fake.boards.some((b) => b.id === body["board_id"])) return pinterestError(400, 1, "Board not found.")
      const source = body["media_source"] as Record<string, unknown> | undefined
      const type = source?.["source_type"]
      if (type === "multiple_image_base64" || type === "multiple_image_urls") {
        const items = source?.["items"]
        if (!Array.isArray(items) || items.length < 2 || items.length > 5) {
          return pinterestError(400, 1, "Invalid parameters: media_source.items constraint: maxItems=5, minItems=2")
        }
      } else if (type === "video_id") {
        const target = uploads.find((u) => u.mediaId === source?.["media_id"])
        if (target === undefined) return pinterestError(400, 1, "Invalid media_id")
        if (source?.["cover_image_url"] === undefined && source?.["cover_image_key_frame_time"] === undefined) {
          return pinterestError(400, 1, "Invalid parameters: cover_image_url or cover_image_content_type is required")
        }
      } else if (type !== "image_base64" && type !== "image_url") {
        return pinterestError(400, 1, "Invalid parameters: media_source")
      }
      const id = String(++next)
      const pin: Pin = { id, body, createdAt: Date.now() }
      pins.push(pin)
      return { status: 201, body: pinOf(pin) }
    }

    // The account's pins, newest first, `page_size` (1–250, default 25) at a time; `bookmark` is the
    // cursor of the next page.
    if (request.path === "/v5/pins" && request.method === "GET") {
      const size = Number(request.query.get("page_size") ?? "25")
      const offset = Number(request.query.get("bookmark") ?? "0")
      const listed = [...pins].sort((a, b) => b.createdAt - a.createdAt)
      return {
        status: 200,
        body: {
          items: listed.slice(offset, offset + size).map(pinOf),
          bookmark: offset + size < listed.length ? String(offset + size) : null
        }
      }
    }

    return pinterestError(404, 404, `Unknown path ${request.path}`)
  }

  const checked = ApiDescription.load({ file: "pinterest-openapi.json", basePath: "/v5", outside: isUpload })
  const server = await FakeServer.start(handler, { check: checked.check })
  const fake: PinterestFake = {
    server,
    pins,
    uploads,
    tokens,
    issueCode: () => {
      const code = `code-${randomBytes(8).toString("hex")}`
      codes.add(code)
      return code
    },
    accessToken: issueTokens().access_token,
    boards: [
      { id: "1070096254886001", name: "Recipes", privacy: "PUBLIC" },
      { id: "1070096254886002", name: "Travel", privacy: "PUBLIC" },
      { id: "1070096254886003", name: "Drafts", privacy: "SECRET" }
    ],
    boardsPageSize: 250,
    trial: false,
    failVideo: false,
    processingPolls: 2,
    analytics: { IMPRESSION: 1200, SAVE: 31, PIN_CLICK: 40, OUTBOUND_CLICK: 7, VIDEO_MRC_VIEW: 0 },
    failNext: (route, reply) => {
      const list = queued.get(route) ?? []
      list.push(reply)
      queued.set(route, list)
    }
  }
  return fake
}
