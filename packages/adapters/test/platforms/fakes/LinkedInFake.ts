/**
 * A LinkedIn REST fake (reference §9, §13): `POST /rest/posts` (201, empty body, URN in `x-restli-id`),
 * image and document `initializeUpload` with loopback `uploadUrl`s, video `initializeUpload` with byte
 * range instructions, part PUTs answering an `ETag`, `finalizeUpload`, and `GET /rest/videos/{urn}`
 * whose `status` advances on each poll; first comments through `socialActions`, and
 * `GET /rest/socialActions/{urn}` with `likesSummary` / `commentsSummary` (`socialCounts`). It refuses `/rest/*`
 * calls without the `LinkedIn-Version` / `X-Restli-Protocol-Version` headers as LinkedIn does, and
 * answers errors as `{status, serviceErrorCode, code, message}`. Failures are injected by text:
 * `#fail-dup`, `#fail-429`, `#fail-500`; or with `failNext` for a route.
 *
 * The documented rules it enforces, with their pages (LinkedIn publishes no machine-readable
 * description): `LinkedIn-Version` on every `/rest/*` call, served per the versioning policy
 * (learn.microsoft.com/linkedin/marketing/versioning, .../integrations/migrations), and
 * `X-Restli-Protocol-Version: 2.0.0` (learn.microsoft.com/linkedin/shared/api-guide/concepts/protocol-version);
 * a post may only name images and documents that are `AVAILABLE`, and images move PROCESSING →
 * AVAILABLE after their upload (learn.microsoft.com/linkedin/marketing/community-management/shares/images-api);
 * videos are finalized with every part's ETag (.../shares/videos-api); multiImage takes 2 to 20 images
 * (.../shares/multiimage-post-api). Rules checked through `rules` (a request breaking one is answered
 * 422 and recorded): an article (`content.article`) has a `source` URL and a `title`, and its optional
 * `thumbnail` is an image URN that is `AVAILABLE`, since LinkedIn reads no page itself
 * (.../shares/posts-api, "Article"); a post carries one kind of content.
 */
import { Rulebook } from "./DocumentedRules.js"
import * as FakeServer from "./FakeServer.js"

const postsApi = "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api"

const accessControl =
  "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/organization-access-control-by-role"
const organizationLookup =
  "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/organization-lookup-api"
const shareStatisticsPage =
  "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/share-statistics"
const protocolVersion = "https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/protocol-version"

export const accessToken =
  "AQVhZmFrZS1saW5rZWRpbi1hY2Nlc3MtdG9rZW4tZm9yLWhlcmFsZC10ZXN0cy0xMjM0NTY3ODkwYWJjZGVmZ2hpamtsbW5vcA"
export const memberId = "yZ2k7Q1aB3"
export const authorUrn = `urn:li:person:${memberId}`
export const memberName = "Ada Herald"
export const clientId = "78herald1inked"
export const clientSecret = "linkedin-client-secret-0123"

/** Every scope Herald may ask for: the member's and the Community Management API's. */
export const allScopes = [
  "openid",
  "profile",
  "w_member_social",
  "w_organization_social",
  "r_organization_social",
  "rw_organization_admin"
]

/** The organization roles and role states of LinkedIn's access-control records (accessControl). */
const roles = [
  "ADMINISTRATOR",
  "DIRECT_SPONSORED_CONTENT_POSTER",
  "RECRUITING_POSTER",
  "LEAD_GEN_FORMS_MANAGER",
  "ANALYST",
  "CURATOR",
  "CONTENT_ADMINISTRATOR",
  "CONTENT_ADMIN"
]
const roleStates = ["APPROVED", "REJECTED", "REQUESTED", "REVOKED"]
/**
 * Who may post (w_organization_social) or read posts (r_organization_social) as an organization: the
 * page roles the Posts API lists (.../shares/posts-api, Permissions).
 */
const contentRoles = ["ADMINISTRATOR", "DIRECT_SPONSORED_CONTENT_POSTER", "CONTENT_ADMIN", "CONTENT_ADMINISTRATOR"]

export interface Organization {
  readonly id: string
  readonly localizedName: string
  readonly vanityName: string
  /** Each member's role on the page. */
  readonly roles: Map<string, { readonly role: string; readonly state: string }>
}

/** The page the default member administers. */
export const organizationId = "2414183"
export const organizationUrn = `urn:li:organization:${organizationId}`

/** The counts `organizationalEntityShareStatistics` answers for every post of a page. */
export const shareStatistics = {
  impressionCount: 1840,
  uniqueImpressionsCount: 1210,
  clickCount: 96,
  likeCount: 57,
  commentCount: 8,
  shareCount: 4,
  engagement: 0.0899
}
/**
 * LinkedIn's versioning rule (learn.microsoft.com/linkedin/marketing/versioning): monthly versions,
 * each served from its month for at least a year, until the sunset its migrations table publishes
 * (learn.microsoft.com/linkedin/marketing/integrations/migrations; not always the 15th), else the 15th
 * of its month a year on. A version from a month still ahead does not exist yet.
 */
const publishedSunsets: Readonly<Record<string, string>> = {
  "202510": "2026-10-15",
  "202511": "2026-11-16",
  "202601": "2027-01-15",
  "202602": "2027-02-15",
  "202603": "2027-03-16"
}

export const isActiveVersion = (version: string, now: Date = new Date()): boolean => {
  const match = /^(\d{4})(\d{2})(\.\d{2})?$/.exec(version)
  if (match === null) return false
  const year = Number(match[1])
  const month = Number(match[2])
  if (month < 1 || month > 12) return false
  const released = Date.UTC(year, month - 1, 1)
  const published = publishedSunsets[`${match[1]}${match[2]}`]
  const sunset = published !== undefined ? Date.parse(`${published}T00:00:00Z`) : Date.UTC(year + 1, month - 1, 15)
  return released <= now.getTime() && now.getTime() < sunset
}

/** Likes and (other people's) first-level comments every post has, for `GET /rest/socialActions/{urn}`. */
export const socialCounts = { likes: 42, comments: 5 }

export interface Post {
  readonly urn: string
  readonly body: Record<string, unknown>
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  /** When LinkedIn created it (epoch ms); a test may place a post made by another client at any time. */
  readonly createdAt?: number
}

export interface Asset {
  readonly urn: string
  readonly kind: "image" | "video" | "document"
  readonly owner: string
  /** Bytes received, by part index (images and documents: one part). */
  readonly parts: Map<number, Uint8Array>
  readonly size: number
  readonly partSize: number
  readonly uploadToken: string
  finalized: boolean
  /** Status polls answered `PROCESSING` before `AVAILABLE` (or `PROCESSING_FAILED`). */
  pendingPolls: number
  failProcessing: boolean
}

export interface Comment {
  readonly post: string
  readonly body: Record<string, unknown>
}

export interface LinkedInFake {
  readonly server: FakeServer.FakeServer
  readonly posts: Array<Post>
  readonly assets: Map<string, Asset>
  readonly comments: Array<Comment>
  /** Tokens that now answer 401. */
  readonly revoked: Set<string>
  /** Replies served, in order, to the next calls of a route (e.g. `POST /rest/posts`) instead of the normal behaviour. */
  readonly failNext: (route: string, reply: FakeServer.Reply) => void
  /** Bytes per video upload instruction; 1000. */
  videoPartSize: number
  /** Polls a video stays `PROCESSING`; 2. */
  videoPolls: number
  /** Whether new videos end in `PROCESSING_FAILED`. */
  failVideoProcessing: boolean
  /** Polls an uploaded image or document stays `PROCESSING`; 1. A post naming it before is refused. */
  imagePolls: number
  /** Whether `GET /rest/images|documents/{urn}` answers 403, as for a token that may not read assets. */
  assetReadForbidden: boolean
  /** The documented rules checked on the requests, and the requests that broke them. */
  readonly rules: Rulebook
  /** The pages, by id, with each member's role: the default member administers `organizationId`. */
  readonly organizations: Map<string, Organization>
  /** Tokens issued, with their member and granted scopes; `accessToken` holds every scope. */
  readonly tokens: Map<string, { readonly member: string; readonly scopes: ReadonlyArray<string> }>
  /** A code the authorization step would have issued for the default member, granting `scopes`. */
  readonly issueCode: (scopes: ReadonlyArray<string>) => string
}

export const error = (status: number, code: string, message: string, serviceErrorCode = 100): FakeServer.Reply => ({
  status,
  body: { status, serviceErrorCode, code, message }
})

export const unauthorized: FakeServer.Reply = error(401, "INVALID_ACCESS_TOKEN", "Invalid access token", 65600)

export const versionMissing: FakeServer.Reply = error(
  400,
  "VERSION_MISSING",
  "A version must be present. Please specify a version by adding the LinkedIn-Version header."
)

export const inactiveVersion = (version: string): FakeServer.Reply =>
  error(426, "NONEXISTENT_VERSION", `Requested version ${version} is not active`)

export const protocolMissing: FakeServer.Reply = error(
  400,
  "ILLEGAL_ARGUMENT",
  "X-Restli-Protocol-Version header is required and must be 2.0.0"
)

export const duplicate = (of: string): FakeServer.Reply => ({
  status: 422,
  body: {
    status: 422,
    serviceErrorCode: 100,
    code: "UNPROCESSABLE_ENTITY",
    message: `Content is a duplicate of ${of}`,
    errorDetailType: "com.linkedin.common.error.BadRequest",
    errorDetails: { inputErrors: [{ code: "DUPLICATE_POST", description: `Content is a duplicate of ${of}` }] }
  }
})

export const tooLong: FakeServer.Reply = {
  status: 422,
  body: {
    status: 422,
    serviceErrorCode: 100,
    code: "UNPROCESSABLE_ENTITY",
    message: "ERROR :: /commentary :: length exceeds maximum of 3000",
    errorDetails: {
      inputErrors: [{
        code: "ERROR_FIELD_LENGTH_TOO_LONG",
        description: "/commentary :: length exceeds maximum of 3000",
        input: { inputPath: { fieldPath: "/commentary" } }
      }]
    }
  }
}

export const tooManyRequests: FakeServer.Reply = error(
  429,
  "TOO_MANY_REQUESTS",
  "Resource level throttle APPLICATION DAY limit for calls to this resource is reached.",
  101
)

export const serverError: FakeServer.Reply = error(500, "INTERNAL_SERVER_ERROR", "Unable to obtain activity")

/** The text LinkedIn shows for a little-text commentary: hashtag templates as `#tag`, escapes removed. */
export const rendered = (commentary: string): string =>
  commentary.replace(/\{hashtag\|\\#\|((?:\\.|[^}])*)\}/g, "#$1").replace(/\\(.)/g, "$1")

export interface StartOptions {
  /** Which bearer tokens the API accepts; only `accessToken` unless given. */
  readonly acceptsToken?: (token: string) => boolean
}

export const start = async (options: StartOptions = {}): Promise<LinkedInFake> => {
  const accepts = options.acceptsToken ?? ((token: string) => token === accessToken)
  const rules = new Rulebook()
  const posts: Array<Post> = []
  const assets = new Map<string, Asset>()
  const comments: Array<Comment> = []
  const revoked = new Set<string>()
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let nextPost = 7400000000000000000n
  let nextAsset = 1
  let nextComment = 7400000000000001000n

  const newAsset = (kind: Asset["kind"], owner: string, size: number, partSize: number): Asset => {
    const id = `D4E${String(nextAsset++).padStart(8, "0")}AbC`
    const asset: Asset = {
      urn: `urn:li:${kind}:${id}`,
      kind,
      owner,
      parts: new Map(),
      size,
      partSize,
      uploadToken: kind === "video" ? `upload-token-${id}` : "",
      finalized: kind !== "video",
      pendingPolls: 0,
      failProcessing: false
    }
    assets.set(asset.urn, asset)
    return asset
  }

  const uploadUrl = (asset: Asset, part: number) =>
    `${server.url}/dms-uploads/${encodeURIComponent(asset.urn)}/${part}?ca=vector_feedshare&sig=abc`

  const ready = (urn: unknown): boolean => {
    const asset = typeof urn === "string" ? assets.get(urn) : undefined
    if (asset === undefined || asset.parts.size === 0 || !asset.finalized) return false
    return asset.pendingPolls === 0 && !asset.failProcessing
  }

  const tokens = new Map<string, { readonly member: string; readonly scopes: ReadonlyArray<string> }>()
  const codes = new Map<string, ReadonlyArray<string>>()
  let nextToken = 1
  const organizations = new Map<string, Organization>()
  const addOrganization = (id: string, localizedName: string, role: string, state: string) =>
    organizations.set(id, {
      id,
      localizedName,
      vanityName: localizedName.toLowerCase().replace(/\s+/g, "-"),
      roles: new Map([[authorUrn, { role, state }]])
    })
  addOrganization(organizationId, "Herald Labs", "ADMINISTRATOR", "APPROVED")
  addOrganization("5590021", "Herald Research", "ADMINISTRATOR", "APPROVED")
  addOrganization("7700001", "Analytics Only Inc", "ANALYST", "APPROVED")
  addOrganization("8800002", "Pending Admin Ltd", "ADMINISTRATOR", "REQUESTED")

  const grantOf = (token: string) =>
    tokens.get(token) ?? (accepts(token) ? { member: authorUrn, scopes: allScopes } : undefined)

  /** The member's approved role on the page an organization URN names. */
  const roleOn = (member: string, urn: unknown): string | undefined => {
    const id = typeof urn === "string" ? /^urn:li:organization:(\d+)$/.exec(urn)?.[1] : undefined
    const held = id === undefined ? undefined : organizations.get(id)?.roles.get(member)
    return held?.state === "APPROVED" ? held.role : undefined
  }

  /** Whether the token may post (or upload) as `author`: its member with w_member_social, or a page it may post for. */
  const mayActAs = (grant: { member: string; scopes: ReadonlyArray<string> }, author: unknown, scope: "w" | "r") =>
    author === grant.member
      ? scope === "r" || grant.scopes.includes("w_member_social")
      : grant.scopes.includes(`${scope}_organization_social`) &&
        contentRoles.includes(roleOn(grant.member, author) ?? "")

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    const path = request.path
    if (path === "/oauth/v2/accessToken" && request.method === "POST") {
      const form = request.form
      if (form?.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) {
        return { status: 401, body: { error: "invalid_client", error_description: "Client authentication failed" } }
      }
      const scopes = codes.get(String(form.get("code")))
      if (form.get("grant_type") !== "authorization_code" || scopes === undefined) {
        return { status: 400, body: { error: "invalid_grant", error_description: "Unable to retrieve access token" } }
      }
      codes.delete(String(form.get("code")))
      const issued = `AQV-issued-${nextToken++}-${"x".repeat(40)}`
      tokens.set(issued, { member: authorUrn, scopes })
      return { status: 200, body: { access_token: issued, expires_in: 5184000, scope: scopes.join(",") } }
    }
    const auth = request.headers["authorization"] ?? ""
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : ""
    const grant = grantOf(token)
    if (grant === undefined || revoked.has(token)) return unauthorized
    if (path === "/v2/userinfo" && request.method === "GET") {
      return {
        status: 200,
        body: {
          sub: grant.member.replace("urn:li:person:", ""),
          name: memberName,
          picture: "https://media.licdn.com/ada.jpg"
        }
      }
    }
    const action = request.query.get("action")
    const route = `${request.method} ${
      path.replace(/^\/rest\/socialActions\/[^/]+(\/|$)/, "/rest/socialActions/{urn}$1")
    }${action === null ? "" : `?action=${action}`}`

    if (path.startsWith("/rest/")) {
      const version = request.headers["linkedin-version"]
      if (typeof version !== "string" || version === "") return versionMissing
      if (!isActiveVersion(version)) return inactiveVersion(version)
      if (request.headers["x-restli-protocol-version"] !== "2.0.0") return protocolMissing
    }

    const injected = queued.get(route)?.shift()
    if (injected !== undefined) return injected

    if (route === "POST /rest/posts") {
      const body = (request.json ?? {}) as Record<string, unknown>
      const commentary = typeof body["commentary"] === "string" ? body["commentary"] : ""
      const text = rendered(commentary)
      if (!mayActAs(grant, body["author"], "w")) {
        return error(403, "ACCESS_DENIED", `Not enough permissions to create a post as ${String(body["author"])}`)
      }
      if (body["lifecycleState"] !== "PUBLISHED" || typeof body["visibility"] !== "string") {
        return error(422, "UNPROCESSABLE_ENTITY", "ERROR :: /lifecycleState :: field is required but not found")
      }
      const same = posts.find((p) => p.body["commentary"] === commentary && commentary !== "")
      if (text.includes("#fail-dup") || same !== undefined) {
        return duplicate(same?.urn ?? "urn:li:share:7399999999999999999")
      }
      if ([...text].length > 3000) return tooLong
      if (text.includes("#fail-429")) return tooManyRequests
      if (text.includes("#fail-500")) return serverError
      const content = body["content"] as
        | {
          media?: { id?: string }
          multiImage?: { images?: Array<{ id?: string }> }
          article?: { source?: unknown; title?: unknown; description?: unknown; thumbnail?: unknown }
        }
        | undefined
      const article = content?.article
      const broken = rules.first(request, [
        [
          content === undefined || Object.keys(content).length === 1,
          { rule: "content is one of media, multiImage, article (and a few others), never several", source: postsApi }
        ],
        [
          article === undefined || (typeof article.source === "string" && /^https?:\/\/\S+$/.test(article.source)),
          { rule: "content.article.source is the article's URL (required)", source: postsApi }
        ],
        [
          article === undefined || (typeof article.title === "string" && article.title !== ""),
          { rule: "content.article.title is required: LinkedIn does not read the page", source: postsApi }
        ],
        [
          article?.description === undefined || typeof article.description === "string",
          { rule: "content.article.description is a string", source: postsApi }
        ],
        [
          article?.thumbnail === undefined ||
          (typeof article.thumbnail === "string" && article.thumbnail.startsWith("urn:li:image:") &&
            ready(article.thumbnail)),
          { rule: "content.article.thumbnail is an uploaded image URN (Images API), available", source: postsApi }
        ]
      ])
      if (broken !== undefined) return error(422, "UNPROCESSABLE_ENTITY", `ERROR :: /content :: ${broken}`)
      const ids = content?.media !== undefined
        ? [content.media.id]
        : content?.multiImage !== undefined
        ? (content.multiImage.images ?? []).map((i) => i.id)
        : []
      if (content?.multiImage !== undefined && (ids.length < 2 || ids.length > 20)) {
        return error(422, "UNPROCESSABLE_ENTITY", "ERROR :: /content/multiImage/images :: must have 2 to 20 items")
      }
      const missing = ids.find((id) => !ready(id))
      if (missing !== undefined) {
        return error(422, "UNPROCESSABLE_ENTITY", `ERROR :: /content :: ${String(missing)} is not available`)
      }
      nextPost += 1n
      const urn = ids.some((id) => String(id).startsWith("urn:li:video:"))
        ? `urn:li:ugcPost:${nextPost}`
        : `urn:li:share:${nextPost}`
      posts.push({ urn, body, headers: request.headers, createdAt: Date.now() })
      return { status: 201, headers: { "x-restli-id": urn, "x-linkedin-id": urn } }
    }

    // The author's posts: `q=author`, `author` (URN), `sortBy` CREATED or LAST_MODIFIED, `start`/`count`
    // (at most 100). https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api#find-posts-by-authors
    if (route === "GET /rest/posts") {
      if (request.query.get("q") !== "author") return error(400, "ILLEGAL_ARGUMENT", "q must be author")
      if (!mayActAs(grant, request.query.get("author"), "r")) {
        return error(
          403,
          "ACCESS_DENIED",
          `Not enough permissions to read the posts of ${String(request.query.get("author"))}`
        )
      }
      const start = Number(request.query.get("start") ?? "0")
      const count = Math.min(100, Number(request.query.get("count") ?? "10"))
      const listed = [...posts].sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0))
      return {
        status: 200,
        body: {
          elements: listed.slice(start, start + count).map((p) => ({
            id: p.urn,
            author: p.body["author"],
            commentary: p.body["commentary"] ?? "",
            visibility: p.body["visibility"],
            lifecycleState: "PUBLISHED",
            createdAt: p.createdAt ?? 0,
            publishedAt: p.createdAt ?? 0,
            lastModifiedAt: p.createdAt ?? 0
          })),
          paging: { start, count, total: listed.length, links: [] }
        }
      }
    }

    if (
      route === "POST /rest/images?action=initializeUpload" || route === "POST /rest/documents?action=initializeUpload"
    ) {
      const body = request.json as { initializeUploadRequest?: { owner?: string } } | undefined
      const owner = body?.initializeUploadRequest?.owner
      if (owner === undefined || !mayActAs(grant, owner, "w")) {
        return error(403, "ACCESS_DENIED", `Not enough permissions to upload as ${String(owner)}`)
      }
      const kind = route.includes("images") ? "image" : "document"
      const asset = newAsset(kind, owner, 0, 0)
      return {
        status: 200,
        body: {
          value: {
            uploadUrlExpiresAt: Date.now() + 86_400_000,
            uploadUrl: uploadUrl(asset, 0),
            [kind]: asset.urn
          }
        }
      }
    }

    if (route === "POST /rest/videos?action=initializeUpload") {
      const body = request.json as
        | { initializeUploadRequest?: { owner?: string; fileSizeBytes?: number } }
        | undefined
      const owner = body?.initializeUploadRequest?.owner
      const size = body?.initializeUploadRequest?.fileSizeBytes
      if (owner === undefined || !mayActAs(grant, owner, "w")) {
        return error(403, "ACCESS_DENIED", `Not enough permissions to upload as ${String(owner)}`)
      }
      if (typeof size !== "number" || size <= 0) {
        return error(422, "UNPROCESSABLE_ENTITY", "ERROR :: /initializeUploadRequest/fileSizeBytes :: required")
      }
      const asset = newAsset("video", owner, size, fake.videoPartSize)
      const uploadInstructions = []
      for (let first = 0, part = 0; first < size; first += asset.partSize, part++) {
        uploadInstructions.push({
          uploadUrl: uploadUrl(asset, part),
          firstByte: first,
          lastByte: Math.min(size, first + asset.partSize) - 1
        })
      }
      return {
        status: 200,
        body: {
          value: {
            uploadUrlsExpireAt: Date.now() + 86_400_000,
            video: asset.urn,
            uploadInstructions,
            uploadToken: asset.uploadToken
          }
        }
      }
    }

    if (route === "POST /rest/videos?action=finalizeUpload") {
      const body = request.json as
        | { finalizeUploadRequest?: { video?: string; uploadToken?: string; uploadedPartIds?: Array<string> } }
        | undefined
      const asset = assets.get(body?.finalizeUploadRequest?.video ?? "")
      if (asset === undefined) return error(404, "NOT_FOUND", "Video not found")
      const etags = [...asset.parts.keys()].sort((a, b) => a - b).map((i) => `"etag-${asset.urn}-${i}"`)
      const received = [...asset.parts.values()].reduce((n, p) => n + p.byteLength, 0)
      if (
        body?.finalizeUploadRequest?.uploadToken !== asset.uploadToken || received !== asset.size ||
        JSON.stringify(body.finalizeUploadRequest.uploadedPartIds) !== JSON.stringify(etags)
      ) {
        return error(400, "BAD_REQUEST", "Upload verification failed: part ids or size do not match")
      }
      asset.finalized = true
      asset.pendingPolls = fake.videoPolls
      asset.failProcessing = fake.failVideoProcessing
      return { status: 200, body: {} }
    }

    // The pages a member holds a role on: the roleAssignee finder, filtered by role and state.
    if (route === "GET /rest/organizationAcls") {
      const role = request.query.get("role")
      const state = request.query.get("state")
      const broken = rules.first(request, [
        [request.query.get("q") === "roleAssignee", {
          rule: "q=roleAssignee finds the authenticated member's roles",
          source: accessControl
        }],
        [role === null || roles.includes(role), { rule: `role is one of ${roles.join(", ")}`, source: accessControl }],
        [state === null || roleStates.includes(state), {
          rule: `state is one of ${roleStates.join(", ")}`,
          source: accessControl
        }]
      ])
      if (broken !== undefined) return error(400, "ILLEGAL_ARGUMENT", broken)
      if (!grant.scopes.includes("rw_organization_admin") && !grant.scopes.includes("r_organization_admin")) {
        return error(
          403,
          "ACCESS_DENIED",
          "Not enough permissions to access: organizationAcls.FINDER-roleAssignee.20240101"
        )
      }
      const all = [...organizations.values()].flatMap((o) => {
        const held = o.roles.get(grant.member)
        return held === undefined || (role !== null && held.role !== role) || (state !== null && held.state !== state)
          ? []
          : [{
            roleAssignee: grant.member,
            role: held.role,
            state: held.state,
            organization: `urn:li:organization:${o.id}`
          }]
      })
      const start = Number(request.query.get("start") ?? "0")
      const count = Math.min(100, Number(request.query.get("count") ?? "10"))
      return {
        status: 200,
        body: { elements: all.slice(start, start + count), paging: { start, count, total: all.length, links: [] } }
      }
    }

    // Organizations by id (BATCH_GET): `ids=List(1,2)`, full records for the pages the member administers.
    if (route === "GET /rest/organizations") {
      const raw = /[?&]ids=([^&]*)/.exec(request.target)?.[1] ?? ""
      const listed = /^List\(([\d,]+)\)$/.exec(raw)
      const broken = rules.first(request, [
        [listed !== null, {
          rule: "ids=List(id,…): Rest.li 2.0 list syntax, its parentheses and commas not URL-encoded",
          source: protocolVersion
        }]
      ])
      if (broken !== undefined || listed === null) return error(400, "ILLEGAL_ARGUMENT", broken ?? "")
      if (!grant.scopes.includes("rw_organization_admin")) {
        rules.check(request, false, {
          rule: "Looking organizations up needs rw_organization_admin",
          source: organizationLookup
        })
        return error(403, "ACCESS_DENIED", "Not enough permissions to access: organizations.BATCH_GET.20240101")
      }
      const results: Record<string, unknown> = {}
      const statuses: Record<string, number> = {}
      for (const id of listed[1]!.split(",")) {
        const o = organizations.get(id)
        if (o === undefined) {
          statuses[id] = 404
          continue
        }
        statuses[id] = 200
        results[id] = {
          id: Number(o.id),
          localizedName: o.localizedName,
          vanityName: o.vanityName,
          name: { localized: { en_US: o.localizedName }, preferredLocale: { country: "US", language: "en" } },
          primaryOrganizationType: "NONE"
        }
      }
      return { status: 200, body: { results, statuses, errors: {} } }
    }

    // A page's post statistics: lifetime counts of the posts named by `shares=List(…)` or `ugcPosts=List(…)`.
    if (route === "GET /rest/organizationalEntityShareStatistics") {
      const entity = request.query.get("organizationalEntity")
      const rawShares = /[?&]shares=([^&]*)/.exec(request.target)?.[1]
      const rawUgcPosts = /[?&]ugcPosts=([^&]*)/.exec(request.target)?.[1]
      const listOf = (raw: string | undefined) => {
        const inner = raw === undefined ? undefined : /^List\(([^()]*)\)$/.exec(raw)?.[1]
        return inner === undefined ? undefined : inner.split(",").map((item) => decodeURIComponent(item))
      }
      const shares = listOf(rawShares)
      const ugcPosts = listOf(rawUgcPosts)
      const encodedItems = [rawShares, rawUgcPosts].every((raw) => raw === undefined || !/urn:li:/.test(raw))
      const broken = rules.first(request, [
        [request.query.get("q") === "organizationalEntity", {
          rule: "q=organizationalEntity",
          source: shareStatisticsPage
        }],
        [
          typeof entity === "string" && /^urn:li:organization:\d+$/.test(entity),
          { rule: "organizationalEntity is the organization URN", source: shareStatisticsPage }
        ],
        [
          (rawShares === undefined || shares !== undefined) && (rawUgcPosts === undefined || ugcPosts !== undefined) &&
          encodedItems,
          {
            rule: "shares and ugcPosts are List(…) with each URN URL-encoded and the parentheses not",
            source: protocolVersion
          }
        ],
        [
          (shares ?? []).every((u) => u.startsWith("urn:li:share:")) &&
          (ugcPosts ?? []).every((u) => u.startsWith("urn:li:ugcPost:")),
          { rule: "shares names urn:li:share URNs, ugcPosts urn:li:ugcPost URNs", source: shareStatisticsPage }
        ]
      ])
      if (broken !== undefined) return error(400, "ILLEGAL_ARGUMENT", broken)
      if (!grant.scopes.includes("rw_organization_admin") || roleOn(grant.member, entity) !== "ADMINISTRATOR") {
        return error(
          403,
          "ACCESS_DENIED",
          "Not enough permissions to access: organizationalEntityShareStatistics.FINDER-organizationalEntity"
        )
      }
      const named = [
        ...(shares ?? []).map((urn) => ["share", urn] as const),
        ...(ugcPosts ?? []).map((urn) => ["ugcPost", urn] as const)
      ]
      const foreign = named.find(([, urn]) => !posts.some((p) => p.urn === urn && p.body["author"] === entity))
      if (foreign !== undefined) {
        return error(
          403,
          "ACCESS_DENIED",
          "Unpermitted fields present in PARAMETER: Data Processing Exception while processing fields [/shares[0]]"
        )
      }
      const elements = named.length === 0
        ? [{ organizationalEntity: entity, totalShareStatistics: shareStatistics }]
        : named.map(([key, urn]) => ({
          [key]: urn,
          organizationalEntity: entity,
          totalShareStatistics: shareStatistics
        }))
      return { status: 200, body: { elements, paging: { start: 0, count: 10, links: [] } } }
    }

    const assetGet = /^\/rest\/(images|documents)\/([^/]+)$/.exec(path)
    if (request.method === "GET" && assetGet !== null) {
      if (fake.assetReadForbidden) return error(403, "ACCESS_DENIED", "Not enough permissions to access: images.GET")
      const asset = assets.get(decodeURIComponent(assetGet[2]!))
      if (asset === undefined) return error(404, "NOT_FOUND", "Asset not found")
      const status = asset.parts.size === 0 ? "WAITING_UPLOAD" : asset.pendingPolls > 0 ? "PROCESSING" : "AVAILABLE"
      if (asset.pendingPolls > 0) asset.pendingPolls--
      return { status: 200, body: { id: asset.urn, owner: asset.owner, status } }
    }

    const videoGet = /^\/rest\/videos\/([^/]+)$/.exec(path)
    if (request.method === "GET" && videoGet !== null) {
      const asset = assets.get(decodeURIComponent(videoGet[1]!))
      if (asset === undefined) return error(404, "NOT_FOUND", "Video not found")
      const status = !asset.finalized
        ? "WAITING_UPLOAD"
        : asset.pendingPolls > 0
        ? "PROCESSING"
        : asset.failProcessing
        ? "PROCESSING_FAILED"
        : "AVAILABLE"
      if (asset.pendingPolls > 0) asset.pendingPolls--
      return {
        status: 200,
        body: {
          id: asset.urn,
          owner: asset.owner,
          status,
          ...(status === "PROCESSING_FAILED" ? { processingFailureReason: "Video format is not supported" } : {})
        }
      }
    }

    const upload = /^\/dms-uploads\/([^/]+)\/(\d+)$/.exec(path)
    if (request.method === "PUT" && upload !== null) {
      const asset = assets.get(decodeURIComponent(upload[1]!))
      if (asset === undefined) return { status: 404, body: "Not Found" }
      const part = Number(upload[2])
      asset.parts.set(part, new Uint8Array(request.body))
      // Images and documents are processed once their bytes arrive (Images API: PROCESSING, then AVAILABLE).
      if (asset.kind !== "video") asset.pendingPolls = fake.imagePolls
      return { status: 201, headers: asset.kind === "video" ? { etag: `"etag-${asset.urn}-${part}"` } : {} }
    }

    const socialActions = /^\/rest\/socialActions\/([^/]+)$/.exec(path)
    if (request.method === "GET" && socialActions !== null) {
      const post = decodeURIComponent(socialActions[1]!)
      const found = posts.find((p) => p.urn === post)
      if (found === undefined) return error(404, "NOT_FOUND", `Activity ${post} not found`)
      if (
        String(found.body["author"]).startsWith("urn:li:organization:") && !mayActAs(grant, found.body["author"], "r")
      ) {
        return error(403, "ACCESS_DENIED", "Not enough permissions to access: socialActions.GET")
      }
      const firstLevel = comments.filter((c) => c.post === post).length + socialCounts.comments
      return {
        status: 200,
        body: {
          $URN: `urn:li:socialActions:${post}`,
          target: post,
          likesSummary: {
            selectedLikes: [],
            aggregatedTotalLikes: socialCounts.likes,
            likedByCurrentUser: false,
            totalLikes: socialCounts.likes
          },
          commentsSummary: {
            selectedComments: [],
            totalFirstLevelComments: firstLevel,
            commentsState: "OPEN",
            aggregatedTotalComments: firstLevel + 2
          }
        }
      }
    }

    const commentRoute = /^\/rest\/socialActions\/([^/]+)\/comments$/.exec(path)
    if (request.method === "POST" && commentRoute !== null) {
      const post = decodeURIComponent(commentRoute[1]!)
      const body = (request.json ?? {}) as Record<string, unknown>
      if (!posts.some((p) => p.urn === post) || body["object"] !== post) {
        return error(404, "NOT_FOUND", `Activity ${post} not found`)
      }
      nextComment += 1n
      comments.push({ post, body })
      const id = String(nextComment)
      return {
        status: 201,
        headers: { "x-restli-id": id },
        body: { ...body, id, commentUrn: `urn:li:comment:(${post},${id})`, created: { actor: body["actor"] } }
      }
    }

    return error(404, "NOT_FOUND", `No resource found for ${request.method} ${path}`)
  }

  const server = await FakeServer.start(handler)
  const fake: LinkedInFake = {
    server,
    posts,
    assets,
    comments,
    revoked,
    failNext: (route, reply) => {
      const list = queued.get(route) ?? []
      list.push(reply)
      queued.set(route, list)
    },
    videoPartSize: 1000,
    videoPolls: 2,
    imagePolls: 1,
    assetReadForbidden: false,
    failVideoProcessing: false,
    rules,
    organizations,
    tokens,
    issueCode: (scopes) => {
      const code = `code-${nextToken++}`
      codes.set(code, scopes)
      return code
    }
  }
  return fake
}
