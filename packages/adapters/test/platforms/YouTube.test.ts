import { describe, expect, it } from "@effect/vitest"
import { SocialAccount } from "@herald/core/domain/Account"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as YouTubeOAuth from "../../src/oauth/YouTube.js"
import * as YouTube from "../../src/platforms/YouTube.js"
import * as YouTubeOAuthFake from "../oauth/fakes/YouTubeOAuthFake.js"
import * as YouTubeApiFake from "./fakes/YouTubeApiFake.js"
import { account, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = YouTubeApiFake.accessToken
const unit = YouTubeApiFake.chunkUnit

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => YouTubeApiFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  const client = yield* YouTube.make({ apiUrl: fake.server.url, chunkSize: unit, resumeDelay: "5 millis" }).pipe(
    Effect.provide(HttpLive)
  )
  return { fake, client: withFollowUps(client) }
})

/** 2.5 chunks of a landscape 10-minute video unless told otherwise. */
const clip = (options: Partial<Parameters<typeof YouTubeApiFake.mp4>[0]> = {}) => {
  const bytes = YouTubeApiFake.mp4({
    width: 1920,
    height: 1080,
    seconds: 600,
    size: Math.floor(unit * 2.5),
    ...options
  })
  return { bytes, ref: media({ kind: "video", mimeType: "video/mp4", bytes, filename: "clip.mp4" }) }
}

/** A channel account: its platform account id is the channel id (from `channels?mine=true` at connect). */
const channel = new SocialAccount({ ...account("youtube"), platformAccountId: YouTubeApiFake.channelId })

const ytRequest = (
  content: string,
  video: ReturnType<typeof clip>["ref"],
  settings: Readonly<Record<string, unknown>> = { title: "My video" }
) => ({
  ...request({
    platform: "youtube",
    credentials: { access_token: token, refresh_token: "1//refresh" },
    main: part(content, [video]),
    settings
  }),
  account: channel
})

const puts = (fake: YouTubeApiFake.YouTubeFake) =>
  fake.server.requests.filter((r) => r.method === "PUT").map((r) => r.headers["content-range"])

/** Byte equality without vitest's slow element-by-element diff of large arrays. */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))

const expectNoSecret = (error: PublishError) => expect(error.message).not.toContain(token)

describe("YouTube adapter against the Data API fake", () => {
  it.scopedLive("connect round trip and refresh: the renewed access token is the one that uploads", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const google = yield* Effect.acquireRelease(
        Effect.promise(() => YouTubeOAuthFake.start()),
        (f) => Effect.promise(() => f.close())
      )
      const provider = yield* YouTubeOAuth.make({
        clientId: YouTubeOAuthFake.clientId,
        clientSecret: Redacted.make(YouTubeOAuthFake.clientSecret),
        authorizeUrl: `${google.server.url}/o/oauth2/v2/auth`,
        tokenUrl: `${google.server.url}/token`,
        apiUrl: google.server.url
      }).pipe(Effect.provide(HttpLive))
      const verifier = "y".repeat(64)
      const challenge = createHash("sha256").update(verifier).digest("base64url")
      const redirectUri = "https://herald.example.com/oauth/callback/youtube"
      const back = new URL(
        google.authorize(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge }))
      )
      const [identity] = yield* provider.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri,
        codeVerifier: verifier
      })
      const renewed = yield* provider.refresh!(Redacted.make(identity!.credentials))
      const renewedToken = renewed.credentials["access_token"]!
      // The Data API fake accepts the tokens Google issued.
      for (const issued of google.accessTokens.keys()) fake.tokens.add(issued)
      yield* client.publish({
        ...ytRequest("", clip({ size: 1000 }).ref),
        credentials: Redacted.make(renewed.credentials)
      })
      expect(fake.server.requests.every((r) => r.headers.authorization === `Bearer ${renewedToken}`)).toBe(true)
      expect(fake.videos).toHaveLength(1)
    }))

  it.scopedLive("resumable upload: metadata, session from Location, 256 KiB chunks with 308 + Range; watch URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = clip()
      const result = yield* client.publish(
        ytRequest("About <this> video", video.ref, {
          title: "My video",
          privacyStatus: "unlisted",
          tags: ["a", "b"],
          categoryId: "22",
          madeForKids: true
        })
      )
      const open = fake.server.requests[0]!
      expect(open.method).toBe("POST")
      expect(open.query.get("uploadType")).toBe("resumable")
      expect(open.query.get("part")).toBe("snippet,status")
      expect(open.headers.authorization).toBe(`Bearer ${token}`)
      expect(open.headers["x-upload-content-length"]).toBe(String(video.bytes.length))
      expect(open.headers["x-upload-content-type"]).toBe("video/mp4")
      expect(open.json).toEqual({
        snippet: { title: "My video", description: "About ‹this› video", tags: ["a", "b"], categoryId: "22" },
        status: { privacyStatus: "unlisted", selfDeclaredMadeForKids: true }
      })
      const total = video.bytes.length
      expect(puts(fake)).toEqual([
        `bytes 0-${unit - 1}/${total}`,
        `bytes ${unit}-${2 * unit - 1}/${total}`,
        `bytes ${2 * unit}-${total - 1}/${total}`
      ])
      const uploaded = fake.videos[0]!
      expect(same(uploaded.bytes, video.bytes)).toBe(true)
      expect(result).toEqual({
        platformPostId: uploaded.id,
        platformPostUrl: `https://www.youtube.com/watch?v=${uploaded.id}`
      })
    }))

  it.scopedLive("defaults: public, not made for kids, no tags or category; the title falls back to the file name", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(ytRequest("desc", clip().ref, {}))
      expect(fake.server.requests[0]!.json).toEqual({
        snippet: { title: "clip", description: "desc" },
        status: { privacyStatus: "public", selfDeclaredMadeForKids: false }
      })
    }))

  it.scopedLive("a vertical video of at most 3 minutes gets the Shorts URL, also when stored rotated", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const vertical = yield* client.publish(ytRequest("", clip({ width: 1080, height: 1920, seconds: 45 }).ref))
      expect(vertical.platformPostUrl).toBe(`https://youtube.com/shorts/${fake.videos[0]!.id}`)
      const rotated = yield* client.publish(
        ytRequest("", clip({ width: 1920, height: 1080, seconds: 30, rotate90: true }).ref)
      )
      expect(rotated.platformPostUrl).toBe(`https://youtube.com/shorts/${fake.videos[1]!.id}`)
      const long = yield* client.publish(ytRequest("", clip({ width: 1080, height: 1920, seconds: 400 }).ref))
      expect(long.platformPostUrl).toContain("watch?v=")
    }))

  it.scopedLive("an interrupted chunk: the client asks bytes */N and resumes from the server's offset", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = clip()
      const total = video.bytes.length
      fake.interruptNext = 1000 // the first chunk: the server keeps 1000 bytes, then answers 503
      yield* client.publish(ytRequest("", video.ref))
      expect(puts(fake)).toEqual([
        `bytes 0-${unit - 1}/${total}`, // interrupted
        `bytes */${total}`, // 308 Range: bytes=0-999
        `bytes 1000-${1000 + unit - 1}/${total}`,
        `bytes ${1000 + unit}-${1000 + 2 * unit - 1}/${total}`,
        `bytes ${1000 + 2 * unit}-${total - 1}/${total}`
      ])
      expect(fake.server.requests.filter((r) => r.method === "POST")).toHaveLength(1)
      expect(same(fake.videos[0]!.bytes, video.bytes)).toBe(true)
    }))

  it.scopedLive("a dropped connection mid-chunk: the same status query, resumed from the server's offset", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = clip()
      const total = video.bytes.length
      fake.failNext("PUT /upload", { status: 0, drop: true }) // the first chunk never arrives
      yield* client.publish(ytRequest("", video.ref))
      fake.interruptWith = "drop"
      fake.interruptNext = 5 // 5 bytes of its first chunk arrive, then the connection drops
      const second = clip({ size: 3 * unit })
      yield* client.publish(ytRequest("", second.ref))
      const ranges = puts(fake)
      expect(ranges.slice(0, 2)).toEqual([`bytes 0-${unit - 1}/${total}`, `bytes */${total}`])
      expect(ranges[2]).toBe(`bytes 0-${unit - 1}/${total}`) // the server had nothing: from byte 0
      expect(same(fake.videos[0]!.bytes, video.bytes)).toBe(true)
      expect(ranges).toContain(`bytes 5-${5 + unit - 1}/${3 * unit}`)
      expect(same(fake.videos[1]!.bytes, second.bytes)).toBe(true)
    }))

  it.scopedLive("a session gone (404) is started again from the first byte", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = clip()
      const total = video.bytes.length
      fake.expireAfter = 1 // the first chunk lands, then the session expires
      yield* client.publish(ytRequest("", video.ref))
      expect(fake.server.requests.filter((r) => r.method === "POST")).toHaveLength(2)
      expect(puts(fake)).toEqual([
        `bytes 0-${unit - 1}/${total}`,
        `bytes ${unit}-${2 * unit - 1}/${total}`, // 404: gone
        `bytes 0-${unit - 1}/${total}`,
        `bytes ${unit}-${2 * unit - 1}/${total}`,
        `bytes ${2 * unit}-${total - 1}/${total}`
      ])
      expect(same(fake.videos[0]!.bytes, video.bytes)).toBe(true)
    }))

  it.scopedLive("a status query that finds the upload complete answers the video", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const small = clip({ size: 5000 })
      // The only chunk arrives, but its answer is lost as a 503.
      fake.failNext("PUT /upload", YouTubeApiFake.backendError)
      const result = yield* client.publish(ytRequest("", small.ref))
      expect(puts(fake)).toEqual([`bytes 0-4999/5000`, `bytes */5000`, `bytes 0-4999/5000`])
      expect(result.platformPostId).toBe(fake.videos[0]!.id)
    }))

  it.scopedLive("an upload YouTube locked to private (unaudited API project) is published, with a warning saying why", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.unaudited = true
      const logs: Array<string> = []
      const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
      const result = yield* client.publish(ytRequest("", clip({ size: 1000 }).ref)).pipe(Effect.provide(capture))
      expect(result.platformPostId).toBe(fake.videos[0]!.id)
      expect(logs.some((l) => l.includes("is private, not public") && l.includes("unaudited"))).toBe(true)
    }))

  it.scopedLive("first comment through commentThreads; its failure never fails the published video", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(
        ytRequest("", clip({ size: 1000 }).ref, { title: "t", firstComment: "Thanks for watching" })
      )
      expect(fake.videos[0]!.comments).toEqual(["Thanks for watching"])
      const comment = fake.server.requests.find((r) => r.path === "/youtube/v3/commentThreads")!
      expect(comment.query.get("part")).toBe("snippet")
      // The channel and the video: without channelId YouTube refuses the thread (channelOrVideoIdMissing).
      expect(comment.json).toEqual({
        snippet: {
          channelId: YouTubeApiFake.channelId,
          videoId: fake.videos[0]!.id,
          topLevelComment: { snippet: { textOriginal: "Thanks for watching" } }
        }
      })
      fake.failNext("POST /commentThreads", YouTubeApiFake.quotaExceeded)
      const result = yield* client.publish(
        ytRequest("", clip({ size: 1000 }).ref, { title: "t", firstComment: "again" })
      )
      expect(result.platformPostId).toBe(fake.videos[1]!.id)
      expect(fake.videos[1]!.comments).toEqual([])
    }))

  it.scopedLive("quotaExceeded and uploadLimitExceeded: rate_limit until midnight Pacific; rate limits, auth, too_long, permanent, transient", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const fail = (title: string) => Effect.flip(client.publish(ytRequest("", clip({ size: 1000 }).ref, { title })))
      const quota = yield* fail("x #fail-quota")
      expect(quota.kind).toBe("rate_limit")
      expect(quota.retryAfterSeconds).toBeGreaterThan(0)
      expect(quota.retryAfterSeconds).toBeLessThanOrEqual(25 * 3600)
      expect(quota.message).toContain("quotaExceeded")
      expect((yield* fail("x #fail-uploadlimit")).kind).toBe("rate_limit")
      expect((yield* fail("x #fail-rate")).kind).toBe("rate_limit")
      expect((yield* fail("x #fail-title")).kind).toBe("too_long")
      expect((yield* fail("x #fail-category")).kind).toBe("permanent")
      expect((yield* fail("x #fail-500")).kind).toBe("transient")
      const rejected = yield* fail("x #fail-reject")
      expect(rejected.kind).toBe("media")
      expect(rejected.message).toContain("duplicate")
      fake.revoked.add(token)
      const auth = yield* fail("x")
      expect(auth.kind).toBe("auth")
      expectNoSecret(auth)
    }))

  it.scopedLive("metrics: views, likes and comments from videos?part=statistics (decimal strings); a gone video is permanent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(ytRequest("", clip({ size: 1000 }).ref, { title: "t", firstComment: "hi" }))
      fake.videos[0]!.views = 1234
      fake.videos[0]!.likes = 56
      const credentials = Redacted.make({ access_token: token })
      expect(yield* client.metrics!(credentials, result.platformPostId)).toMatchObject({
        views: 1234,
        likes: 56,
        comments: 1,
        shares: 0
      })
      expect((yield* Effect.flip(client.metrics!(credentials, "nosuchvideo"))).kind).toBe("permanent")
    }))

  it.scopedLive("an upload interrupted every time is transient after maxInterruptions", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      for (let i = 0; i < 10; i++) fake.failNext("PUT /upload", YouTubeApiFake.backendError)
      const error = yield* Effect.flip(client.publish(ytRequest("", clip({ size: 1000 }).ref)))
      expect(error.kind).toBe("transient")
      expect(fake.videos).toHaveLength(0)
    }))

  it.scopedLive("no video, or more than one medium: a media error before any request; an echoed token is scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const image = media({ kind: "image", mimeType: "image/jpeg", bytes: new Uint8Array(10) })
      const none = yield* Effect.flip(
        client.publish(request({ platform: "youtube", credentials: { access_token: token }, main: part("x", [image]) }))
      )
      expect(none.kind).toBe("media")
      expect(fake.server.requests).toHaveLength(0)
      fake.failNext("POST /upload", YouTubeApiFake.googleError(400, `Bad token ${token}`, "badRequest"))
      const echoed = yield* Effect.flip(client.publish(ytRequest("", clip({ size: 1000 }).ref)))
      expectNoSecret(echoed)
      expect(echoed.message).toContain("[redacted]")
    }))
})

describe("YouTube quota reset", () => {
  it("is the next midnight in America/Los_Angeles, daylight saving included", () => {
    // 2026-07-01T20:00:00Z is 13:00 PDT: 11 hours to midnight.
    expect(YouTube.secondsUntilQuotaReset(Date.parse("2026-07-01T20:00:00Z"))).toBe(11 * 3600)
    // 2026-01-15T07:30:00Z is 23:30 PST: 30 minutes to midnight.
    expect(YouTube.secondsUntilQuotaReset(Date.parse("2026-01-15T07:30:00Z"))).toBe(1800)
  })

  it.scopedLive("the fake refuses what breaks the Data API description", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}${path}`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
            body: JSON.stringify(body)
          }).then((r) => r.status)
        )
      // commentThreads.insert without its required part; a video whose privacyStatus is outside the enum;
      // an upload session without X-Upload-Content-Length.
      expect(yield* post("/youtube/v3/commentThreads", { snippet: { channelId: "UC1", videoId: "v" } })).toBe(400)
      expect(
        yield* post(
          "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status",
          { snippet: { title: "t" }, status: { privacyStatus: "friends" } },
          { "x-upload-content-length": "10", "x-upload-content-type": "video/mp4" }
        )
      ).toBe(400)
      expect(yield* post("/upload/youtube/v3/videos?uploadType=resumable&part=snippet", { snippet: { title: "t" } }))
        .toBe(400)
      const problems = fake.server.takeViolations().map((v) => v.problems.join(" "))
      expect(problems[0]).toContain("query parameter part is required")
      expect(problems[1]).toContain("metadata/status/privacyStatus must be equal to one of the allowed values")
      expect(problems[2]).toContain("x-upload-content-length is required")
      expect(fake.sessions.size).toBe(0)
    }))
})

describe("YouTube findPublished (the channel's uploads)", () => {
  const credentials = { access_token: token, refresh_token: "1//refresh" }
  const lookup = (content: string, sinceMs: number, untilMs: number) => ({
    account: channel,
    credentials: Redacted.make(credentials),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  /** A video another client uploaded at `at`. */
  const other = (fake: YouTubeApiFake.YouTubeFake, id: string, description: string, at: number) =>
    fake.videos.push({
      id,
      metadata: { snippet: { title: "other", description } },
      bytes: new Uint8Array(0),
      comments: [],
      createdAt: at
    })

  it.scopedLive("an upload in the window is found by its description as sent (angle brackets replaced)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const before = Date.now()
      const sent = yield* client.publish(ytRequest("Launch <day> & more", clip().ref))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup("Launch <day> & more", before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: `https://www.youtube.com/watch?v=${sent.platformPostId}`
      })
      expect(yield* client.findPublished!(lookup("Launch day", before, after))).toEqual({ _tag: "Absent" })
      const items = fake.server.requests.filter((r) => r.path === "/youtube/v3/playlistItems")
      expect(items[0]!.query.get("playlistId")).toBe(YouTubeApiFake.uploadsPlaylistId)
      expect(items[0]!.headers["authorization"]).toBe(`Bearer ${token}`)
    }))

  it.scopedLive("pages back until past the window; an older upload with the same description is not the attempt's", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Date.now()
      other(fake, "old00000001", "same words", now - 3_600_000)
      expect(yield* client.findPublished!(lookup("same words", now - 1_000, now + 1_000))).toEqual({ _tag: "Absent" })
      for (let i = 0; i < 120; i++) other(fake, `new${String(i).padStart(8, "0")}`, `noise ${i}`, now + 30_000)
      other(fake, "ours0000001", "deep", now)
      expect(yield* client.findPublished!(lookup("deep", now - 1_000, now + 1_000))).toMatchObject({
        _tag: "Found",
        platformPostId: "ours0000001"
      })
      for (let i = 120; i < 600; i++) other(fake, `new${String(i).padStart(8, "0")}`, `noise ${i}`, now + 30_000)
      expect((yield* client.findPublished!(lookup("deep", now - 1_000, now + 1_000)))._tag).toBe("Unknown")
    }))

  it.scopedLive("a video without description is Unknown when another such upload is in the window", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Date.now()
      expect(yield* client.findPublished!(lookup("", now - 1_000, now + 1_000))).toEqual({ _tag: "Absent" })
      other(fake, "bare0000001", "", now)
      expect((yield* client.findPublished!(lookup("", now - 1_000, now + 1_000)))._tag).toBe("Unknown")
    }))

  it.scopedLive("a quota refusal or a backend error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("GET /playlistItems", YouTubeApiFake.quotaExceeded)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("rate_limit")
      fake.failNext("GET /channels", YouTubeApiFake.backendError)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("transient")
    }))
})
