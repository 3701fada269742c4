/**
 * A Bluesky fake (reference §2): an entryway (`service`) that creates and refreshes sessions and
 * whose DID document points at a separate PDS, the PDS itself (records, blobs, service auth,
 * handle resolution, profiles), the video service with a job that advances on each poll, and the
 * public AppView's getPosts. Errors use XRPC's `{error, message}` bodies.
 */
import * as FakeServer from "./FakeServer.js"

export interface Account {
  readonly did: string
  handle: string
  password: string
  readonly displayName: string
  readonly avatar: string
}

export interface StoredRecord {
  readonly uri: string
  readonly cid: string
  readonly repo: string
  readonly record: Record<string, unknown>
}

export interface BlueskyFake {
  /** Where sessions are created (the `service`). */
  readonly entryway: FakeServer.FakeServer
  /** The PDS named in the DID document; also serves the video service and the AppView routes. */
  readonly pds: FakeServer.FakeServer
  readonly account: Account
  readonly records: Array<StoredRecord>
  readonly blobs: Array<{ readonly bytes: Uint8Array; readonly mimeType: string; readonly link: string }>
  readonly counts: { logins: number; refreshes: number; polls: number }
  /** Marks an access or refresh JWT as expired. */
  readonly expire: (jwt: string) => void
  /** Replies served, in order, to the next calls of an XRPC method instead of the normal behaviour. */
  readonly failNext: (nsid: string, reply: FakeServer.Reply) => void
  readonly close: () => Promise<void>
  /** false: the AppView has not indexed the account, and getProfile answers 400 "Profile not found". */
  profileIndexed: boolean
  /** Points the DID document's `#atproto_pds` at another endpoint (the fake's own PDS by default). */
  readonly setPdsEndpoint: (url: string) => void
}

export const appPassword = "abcd-efgh-ijkl-mnop"
export const did = "did:plc:heraldtestaccount0001"

const xrpcError = (status: number, error: string, message: string): FakeServer.Reply => ({
  status,
  body: { error, message }
})

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

let jwtCounter = 0
const jwt = (scope: string, sub: string) => {
  jwtCounter++
  return `eyJ${b64({ typ: scope, alg: "ES256K" }).slice(3)}.${b64({ scope, sub, n: jwtCounter })}.sig${jwtCounter}`
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" })

export const start = async (): Promise<BlueskyFake> => {
  const account: Account = {
    did,
    handle: "herald.bsky.social",
    password: appPassword,
    displayName: "Herald",
    avatar: "https://cdn.bsky.app/img/avatar/plain/did:plc:heraldtestaccount0001/bafkreiavatar@jpeg"
  }
  const otherHandles: Record<string, string> = {
    "alice.bsky.social": "did:plc:alice000000000000000001",
    "bob.test": "did:plc:bob00000000000000000002"
  }
  const access = new Map<string, { expired: boolean }>()
  const refresh = new Map<string, { expired: boolean }>()
  const serviceTokens = new Set<string>()
  const records: Array<StoredRecord> = []
  const blobs: Array<{ bytes: Uint8Array; mimeType: string; link: string }> = []
  const jobs = new Map<string, { polls: number; failed: boolean; blob: Record<string, unknown> }>()
  const counts = { logins: 0, refreshes: 0, polls: 0 }
  const queued = new Map<string, Array<FakeServer.Reply>>()
  let pdsUrl = ""
  let rkey = 0

  const newSession = () => {
    const accessJwt = jwt("com.atproto.access", account.did)
    const refreshJwt = jwt("com.atproto.refresh", account.did)
    access.set(accessJwt, { expired: false })
    refresh.set(refreshJwt, { expired: false })
    return {
      did: account.did,
      handle: account.handle,
      accessJwt,
      refreshJwt,
      active: true,
      didDoc: {
        "@context": ["https://www.w3.org/ns/did/v1"],
        id: account.did,
        alsoKnownAs: [`at://${account.handle}`],
        service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: pdsUrl }]
      }
    }
  }

  const bearer = (request: FakeServer.Recorded) => {
    const header = request.headers["authorization"]
    return typeof header === "string" && header.startsWith("Bearer ") ? header.slice(7) : undefined
  }

  /** Checks the access JWT; returns an error reply when it does not pass. */
  const checkAccess = (request: FakeServer.Recorded): FakeServer.Reply | undefined => {
    const token = bearer(request)
    if (token === undefined) return xrpcError(401, "AuthMissing", "Authentication Required")
    const session = access.get(token)
    if (session === undefined) return xrpcError(400, "InvalidToken", "Token could not be verified")
    if (session.expired) return xrpcError(400, "ExpiredToken", "Token has expired")
    return undefined
  }

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    const nsid = request.path.replace(/^\/xrpc\//, "")
    const injected = queued.get(nsid)?.shift()
    if (injected !== undefined) return injected
    const body = (request.json ?? {}) as Record<string, unknown>
    switch (nsid) {
      case "com.atproto.server.createSession": {
        counts.logins++
        const identifier = String(body["identifier"] ?? "").toLowerCase()
        const known = identifier === account.handle || identifier === account.did
        if (!known || body["password"] !== account.password) {
          return xrpcError(401, "AuthenticationRequired", "Invalid identifier or password")
        }
        return { status: 200, body: newSession() }
      }
      case "com.atproto.server.refreshSession": {
        counts.refreshes++
        const token = bearer(request)
        const entry = token === undefined ? undefined : refresh.get(token)
        if (token === undefined) return xrpcError(401, "AuthMissing", "Authentication Required")
        if (entry === undefined) return xrpcError(400, "InvalidToken", "Token could not be verified")
        if (entry.expired) return xrpcError(400, "ExpiredToken", "Token has expired")
        // Refresh tokens rotate: the old one stops working.
        refresh.delete(token)
        const session = newSession()
        return { status: 200, body: session }
      }
      case "com.atproto.identity.resolveHandle": {
        const handle = request.query.get("handle") ?? ""
        const resolved = handle === account.handle ? account.did : otherHandles[handle]
        return resolved === undefined
          ? xrpcError(400, "InvalidRequest", "Unable to resolve handle")
          : { status: 200, body: { did: resolved } }
      }
      case "app.bsky.actor.getProfile": {
        const denied = checkAccess(request)
        if (denied) return denied
        if (!fake.profileIndexed) return xrpcError(400, "InvalidRequest", "Profile not found")
        return {
          status: 200,
          body: {
            did: account.did,
            handle: account.handle,
            displayName: account.displayName,
            avatar: account.avatar,
            followersCount: 10,
            followsCount: 2,
            postsCount: records.length
          }
        }
      }
      case "com.atproto.repo.uploadBlob": {
        const denied = checkAccess(request)
        if (denied) return denied
        if (request.body.length > 1_000_000) {
          return xrpcError(400, "BlobTooLarge", "This file is too large. It is 1.2MB but the maximum size is 976.56KB.")
        }
        const link = `bafkrei${String(blobs.length).padStart(4, "0")}fake`
        const mimeType = String(request.headers["content-type"] ?? "application/octet-stream")
        blobs.push({ bytes: new Uint8Array(request.body), mimeType, link })
        return {
          status: 200,
          body: { blob: { $type: "blob", ref: { $link: link }, mimeType, size: request.body.length } }
        }
      }
      case "com.atproto.repo.createRecord": {
        const denied = checkAccess(request)
        if (denied) return denied
        if (body["repo"] !== account.did) return xrpcError(400, "InvalidRequest", "Invalid repo")
        const record = body["record"] as Record<string, unknown>
        const text = String(record["text"] ?? "")
        if ([...segmenter.segment(text)].length > 300) {
          return xrpcError(
            400,
            "InvalidRequest",
            "Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes"
          )
        }
        rkey++
        const uri = `at://${account.did}/app.bsky.feed.post/3lfake${String(rkey).padStart(6, "0")}`
        const cid = `bafyreifakecid${rkey}`
        records.push({ uri, cid, repo: String(body["repo"]), record })
        return {
          status: 200,
          body: { uri, cid, commit: { cid: `bafyreicommit${rkey}`, rev: `rev${rkey}` }, validationStatus: "valid" }
        }
      }
      case "com.atproto.repo.listRecords": {
        // Newest first (the PDS orders by record key, which grows with creation), paged by cursor.
        const denied = checkAccess(request)
        if (denied) return denied
        const repo = request.query.get("repo")
        const collection = request.query.get("collection")
        const limit = Math.min(100, Number(request.query.get("limit") ?? "50"))
        const start = Number(request.query.get("cursor") ?? "0")
        const all = records
          .filter((r) => r.repo === repo && r.uri.includes(`/${collection}/`))
          .reverse()
        const page = all.slice(start, start + limit)
        return {
          status: 200,
          body: {
            records: page.map((r) => ({ uri: r.uri, cid: r.cid, value: r.record })),
            ...(start + limit < all.length ? { cursor: String(start + limit) } : {})
          }
        }
      }
      case "com.atproto.server.getServiceAuth": {
        const denied = checkAccess(request)
        if (denied) return denied
        const token = jwt(`service:${request.query.get("lxm")}`, account.did)
        serviceTokens.add(token)
        return { status: 200, body: { token } }
      }
      case "app.bsky.video.uploadVideo": {
        const token = bearer(request)
        if (token === undefined || !serviceTokens.has(token)) {
          return xrpcError(401, "Unauthorized", "Invalid service auth token")
        }
        const jobId = `job${jobs.size + 1}`
        const link = `bafkreivideo${jobs.size + 1}`
        blobs.push({ bytes: new Uint8Array(request.body), mimeType: "video/mp4", link })
        jobs.set(jobId, {
          polls: 0,
          failed: (request.query.get("name") ?? "").startsWith("bad"),
          blob: { $type: "blob", ref: { $link: link }, mimeType: "video/mp4", size: request.body.length }
        })
        return { status: 200, body: { jobId, did: request.query.get("did"), state: "JOB_STATE_CREATED" } }
      }
      case "app.bsky.video.getJobStatus": {
        counts.polls++
        const jobId = request.query.get("jobId") ?? ""
        const job = jobs.get(jobId)
        if (job === undefined) return xrpcError(400, "InvalidRequest", "Job not found")
        job.polls++
        const state = job.polls < 3 ? "JOB_STATE_ENCODING" : job.failed ? "JOB_STATE_FAILED" : "JOB_STATE_COMPLETED"
        return {
          status: 200,
          body: {
            jobStatus: {
              jobId,
              did: account.did,
              state,
              progress: Math.min(100, job.polls * 40),
              ...(state === "JOB_STATE_COMPLETED" ? { blob: job.blob } : {}),
              ...(state === "JOB_STATE_FAILED" ? { error: "Video is too long" } : {})
            }
          }
        }
      }
      case "app.bsky.feed.getPosts": {
        const uris = request.query.getAll("uris")
        return {
          status: 200,
          body: {
            posts: records
              .filter((r) => uris.includes(r.uri))
              .map((r) => ({
                uri: r.uri,
                cid: r.cid,
                author: { did: account.did, handle: account.handle },
                record: r.record,
                likeCount: 12,
                repostCount: 3,
                replyCount: 4,
                quoteCount: 1,
                indexedAt: "2026-01-01T00:00:00.000Z"
              }))
          }
        }
      }
      default:
        return xrpcError(501, "MethodNotImplemented", "Method Not Implemented")
    }
  }

  const entryway = await FakeServer.start(handler)
  const pds = await FakeServer.start(handler)
  pdsUrl = pds.url
  const fake: BlueskyFake = {
    profileIndexed: true,
    setPdsEndpoint: (url) => {
      pdsUrl = url
    },
    entryway,
    pds,
    account,
    records,
    blobs,
    counts,
    expire: (token) => {
      const entry = access.get(token) ?? refresh.get(token)
      if (entry !== undefined) entry.expired = true
    },
    failNext: (nsid, reply) => {
      const list = queued.get(nsid) ?? []
      list.push(reply)
      queued.set(nsid, list)
    },
    close: async () => {
      await entryway.close()
      await pds.close()
    }
  }
  return fake
}
