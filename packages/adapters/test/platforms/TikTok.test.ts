import { describe, expect, it } from "@effect/vitest"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as TikTokOAuth from "../../src/oauth/TikTok.js"
import * as TikTok from "../../src/platforms/TikTok.js"
import * as TikTokApiFake from "./fakes/TikTokApiFake.js"
import * as YouTubeApiFake from "./fakes/YouTubeApiFake.js"
import { account, HttpLive, media, part, request } from "./fixtures.js"

const mb = TikTokApiFake.mb

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => TikTokApiFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  // Every request must keep TikTok's documented rules (the fake's rulebook), whatever the test checks.
  yield* Effect.addFinalizer(() => Effect.sync(() => fake.rules.expectNone()))
  const client = yield* TikTok.make({
    apiUrl: fake.server.url,
    chunkSize: 5 * mb,
    pollInterval: "5 millis",
    maxPolls: 10
  })
    .pipe(Effect.provide(HttpLive))
  return { fake, client }
})

const clip = (options: Partial<Parameters<typeof YouTubeApiFake.mp4>[0]> = {}) => {
  const bytes = YouTubeApiFake.mp4({ width: 1080, height: 1920, seconds: 30, size: 4000, ...options })
  return { bytes, ref: media({ kind: "video", mimeType: "video/mp4", bytes, filename: "clip.mp4" }) }
}

const tkRequest = (
  token: string,
  content: string,
  video = clip().ref,
  settings: Readonly<Record<string, unknown>> = {}
) =>
  request({
    platform: "tiktok",
    credentials: { access_token: token },
    main: part(content, [video]),
    settings: { privacyLevel: "PUBLIC_TO_EVERYONE", ...settings }
  })

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))
const expectNoSecret = (error: PublishError, token: string) => expect(error.message).not.toContain(token)

describe("TikTok adapter against the Content Posting fake", () => {
  it.scopedLive("metrics: POST /v2/video/query/ with the fields and video_ids; batch of several, publish ids left out", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const first = yield* client.publish(tkRequest(fake.accessToken, "one"))
      const second = yield* client.publish(tkRequest(fake.accessToken, "two"))
      const credentials = Redacted.make({ access_token: fake.accessToken })
      const metrics = yield* client.metrics!(credentials, first.platformPostId)
      expect(metrics).toMatchObject({
        views: 5300,
        likes: 410,
        comments: 37,
        shares: 22,
        impressions: 0,
        saves: 0,
        clicks: 0
      })
      const call = fake.server.requests.find((r) => r.path === "/v2/video/query/")!
      expect(call.method).toBe("POST")
      expect(call.query.get("fields")).toBe("id,view_count,like_count,comment_count,share_count")
      expect(call.json).toEqual({ filters: { video_ids: [first.platformPostId] } })
      expect(call.headers["authorization"]).toBe(`Bearer ${fake.accessToken}`)

      const batch = yield* client.metricsBatch!(credentials, [
        first.platformPostId,
        second.platformPostId,
        "v_pub_file~v2-1.9"
      ])
      expect([...batch.keys()].sort()).toEqual([first.platformPostId, second.platformPostId].sort())
      expect(client.metricsBatchSize).toBe(20)
      const batchCall = fake.server.requests.filter((r) => r.path === "/v2/video/query/")[1]!
      expect(batchCall.json).toEqual({ filters: { video_ids: [first.platformPostId, second.platformPostId] } })

      const noPublicId = yield* Effect.flip(client.metrics!(credentials, "v_pub_file~v2-1.9"))
      expect(noPublicId.kind).toBe("permanent")
      expect((yield* Effect.flip(client.metrics!(credentials, "7400000000000000001"))).kind).toBe("permanent")
    }))

  it.scopedLive("metrics errors: a token from before video.list is auth; 429 with Retry-After; internal_error transient; token scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const { platformPostId } = yield* client.publish(tkRequest(fake.accessToken, "counted"))
      const old = "act.old-connection-token-without-video-list"
      fake.tokens.set(old, ["user.info.basic", "user.info.profile", "video.publish", "video.upload"])
      const missing = yield* Effect.flip(client.metrics!(Redacted.make({ access_token: old }), platformPostId))
      expect(missing.kind).toBe("auth")
      expect(missing.message).toContain("scope_not_authorized")
      expectNoSecret(missing, old)

      const credentials = Redacted.make({ access_token: fake.accessToken })
      fake.videoQueryFailures.push({
        ...TikTokApiFake.tiktokError(429, "rate_limit_exceeded", "API rate limit was exceeded."),
        headers: { "retry-after": "45" }
      })
      const limited = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(limited.kind).toBe("rate_limit")
      expect(limited.retryAfterSeconds).toBe(45)

      fake.videoQueryFailures.push(TikTokApiFake.tiktokError(500, "internal_error", "Something went wrong."))
      expect((yield* Effect.flip(client.metrics!(credentials, platformPostId))).kind).toBe("transient")

      fake.videoQueryFailures.push(
        TikTokApiFake.tiktokError(401, "access_token_invalid", `The access token ${fake.accessToken} is invalid.`)
      )
      const echoed = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(echoed.kind).toBe("auth")
      expectNoSecret(echoed, fake.accessToken)
    }))

  it.scopedLive("connect round trip (the scopes cover username), refresh, then a post with the connected token", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const provider = yield* TikTokOAuth.make({
        clientId: TikTokApiFake.clientKey,
        clientSecret: Redacted.make(TikTokApiFake.clientSecret),
        apiUrl: fake.server.url
      }).pipe(Effect.provide(HttpLive))
      const verifier = "v".repeat(64)
      const challenge = createHash("sha256").update(verifier).digest("base64url")
      const redirectUri = "https://herald.example.com/oauth/callback/tiktok"
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: challenge }))
      const granted = (url.searchParams.get("scope") ?? "").split(",")
      const code = fake.issueCode(granted, challenge)
      const [identity] = yield* provider.exchangeCode({ code, redirectUri, codeVerifier: verifier })
      expect(identity).toMatchObject({
        platformAccountId: TikTokApiFake.openId,
        accountName: `@${TikTokApiFake.username}`
      })

      const renewed = yield* provider.refresh!(Redacted.make(identity!.credentials))
      expect(renewed.credentials["access_token"]).not.toBe(identity!.credentials["access_token"])

      const result = yield* client.publish(tkRequest(renewed.credentials["access_token"]!, "Connected"))
      expect(fake.uploads).toHaveLength(1)
      expect(result.platformPostUrl).toBe(
        `https://www.tiktok.com/@${TikTokApiFake.username}/video/${fake.uploads[0]!.postId}`
      )
    }))

  it.scopedLive("without user.info.profile TikTok refuses the username: the identity call is auth", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const provider = yield* TikTokOAuth.make({
        clientId: TikTokApiFake.clientKey,
        clientSecret: Redacted.make(TikTokApiFake.clientSecret),
        apiUrl: fake.server.url
      }).pipe(Effect.provide(HttpLive))
      const verifier = "w".repeat(64)
      const challenge = createHash("sha256").update(verifier).digest("base64url")
      const code = fake.issueCode(["user.info.basic", "video.publish", "video.upload"], challenge)
      const error = yield* Effect.flip(
        provider.exchangeCode({ code, redirectUri: "https://h.example/cb", codeVerifier: verifier })
      )
      expect(error.kind).toBe("auth")
    }))

  it.scopedLive("creator_info, init with one FILE_UPLOAD chunk, PUT 201, status polled to PUBLISH_COMPLETE; exact 19-digit id", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = clip()
      const result = yield* client.publish(
        tkRequest(fake.accessToken, "My clip #fyp", video.ref, {
          allowComments: true,
          allowDuet: false,
          videoCoverTimestamp: 2500
        })
      )
      const paths = fake.server.requests.map((r) =>
        `${r.method} ${r.path.startsWith("/upload/") ? "/upload/{id}" : r.path}`
      )
      expect(paths).toEqual([
        "POST /v2/post/publish/creator_info/query/",
        "POST /v2/post/publish/video/init/",
        "PUT /upload/{id}",
        "POST /v2/post/publish/status/fetch/",
        "POST /v2/post/publish/status/fetch/",
        "POST /v2/post/publish/status/fetch/"
      ])
      const upload = fake.uploads[0]!
      expect(upload.postInfo).toEqual({
        title: "My clip #fyp",
        privacy_level: "PUBLIC_TO_EVERYONE",
        disable_comment: false,
        disable_duet: true,
        // Not asked for: off, as TikTok's content-sharing guidelines require.
        disable_stitch: true,
        video_cover_timestamp_ms: 2500,
        brand_content_toggle: false,
        brand_organic_toggle: false,
        is_aigc: false
      })
      expect(upload.sourceInfo).toEqual({ video_size: 4000, chunk_size: 4000, total_chunk_count: 1 })
      expect(same(upload.received, video.bytes)).toBe(true)
      expect(upload.postId).toMatch(/^\d{19}$/)
      expect(result).toEqual({
        platformPostId: upload.postId,
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}/video/${upload.postId}`
      })
    }))

  it.scopedLive("a file larger than the chunk size: floor(size/chunk) chunks, the remainder in the last (206, then 201)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const size = 12 * mb + 123
      const video = clip({ size })
      yield* client.publish(tkRequest(fake.accessToken, "big", video.ref))
      const upload = fake.uploads[0]!
      expect(upload.sourceInfo).toEqual({ video_size: size, chunk_size: 5 * mb, total_chunk_count: 2 })
      expect(upload.chunks).toEqual([`bytes 0-${5 * mb - 1}/${size}`, `bytes ${5 * mb}-${size - 1}/${size}`])
      expect(same(upload.received, video.bytes)).toBe(true)
      expect(TikTok.chunkPlan(3 * mb, 5 * mb)).toEqual({ chunkSize: 3 * mb, count: 1 })
      expect(TikTok.chunkPlan(200 * mb, 1)).toEqual({ chunkSize: 5 * mb, count: 40 })
    }))

  it.scopedLive("creator settings win: disabled comments stay disabled; a privacy level the creator lacks is refused before init", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.creator.comment_disabled = true
      yield* client.publish(tkRequest(fake.accessToken, "a", clip().ref, { allowComments: true }))
      expect(fake.uploads[0]!.postInfo["disable_comment"]).toBe(true)
      const error = yield* Effect.flip(
        client.publish(tkRequest(fake.accessToken, "b", clip().ref, { privacyLevel: "FOLLOWER_OF_CREATOR" }))
      )
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY")
      expect(fake.uploads).toHaveLength(1)
    }))

  it.scopedLive("no privacy level: refused before init, naming the creator's options; nothing uploaded", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* Effect.flip(client.publish(request({
        platform: "tiktok",
        credentials: { access_token: fake.accessToken },
        main: part("no level", [clip().ref]),
        settings: { allowComments: true }
      })))
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("settings.privacyLevel is required")
      expect(error.message).toContain("PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY")
      expect(fake.uploads).toHaveLength(0)
      expect(fake.server.requests.map((r) => r.path)).toEqual(["/v2/post/publish/creator_info/query/"])
    }))

  it.scopedLive("interactions only when asked; commercial disclosure and AI flag as brand_*_toggle and is_aigc", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(tkRequest(fake.accessToken, "none asked"))
      expect(fake.uploads[0]!.postInfo).toMatchObject({
        disable_comment: true,
        disable_duet: true,
        disable_stitch: true,
        brand_content_toggle: false,
        brand_organic_toggle: false,
        is_aigc: false
      })
      yield* client.publish(tkRequest(fake.accessToken, "all asked", clip().ref, {
        allowComments: true,
        allowDuet: true,
        allowStitch: true,
        brandContent: true,
        brandOrganic: true,
        aiGenerated: true
      }))
      expect(fake.uploads[1]!.postInfo).toMatchObject({
        disable_comment: false,
        disable_duet: false,
        disable_stitch: false,
        brand_content_toggle: true,
        brand_organic_toggle: true,
        is_aigc: true
      })
    }))

  it("chunk plan: 10,000,000-byte chunks, the remainder in the last; a file over 64 MB is never one chunk", () => {
    expect(TikTok.defaultChunk).toBe(10_000_000)
    // The media transfer guide's own example.
    expect(TikTok.chunkPlan(50_000_123, TikTok.defaultChunk)).toEqual({ chunkSize: 10_000_000, count: 5 })
    expect(TikTok.chunkPlan(100 * mb, TikTok.defaultChunk)).toEqual({ chunkSize: 10_000_000, count: 10 })
    expect(TikTok.chunkPlan(128 * mb - 1, TikTok.defaultChunk).count).toBe(13)
    expect(TikTok.chunkPlan(9_000_000, TikTok.defaultChunk)).toEqual({ chunkSize: 9_000_000, count: 1 })
    expect(TikTok.chunkPlan(200 * mb, 100 * mb)).toEqual({ chunkSize: 64_000_000, count: 3 })
  })

  it.scopedLive("the fake refuses requests that break TikTok's documented rules, naming the page", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const init = (body: unknown, contentType = "application/json; charset=UTF-8") =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/v2/post/publish/video/init/`, {
            method: "POST",
            headers: { authorization: `Bearer ${fake.accessToken}`, "content-type": contentType },
            body: JSON.stringify(body)
          }).then(async (r) => ({
            status: r.status,
            body: await r.json() as { error: { code: string; message: string } }
          }))
        )
      const postInfo = {
        title: "t",
        privacy_level: "SELF_ONLY",
        brand_content_toggle: false,
        brand_organic_toggle: false
      }
      const size = 100_000_000
      // One chunk of a 100 MB file (what a 64 MiB chunk size gave): several are required.
      const single = yield* init({
        post_info: postInfo,
        source_info: { source: "FILE_UPLOAD", video_size: size, chunk_size: size, total_chunk_count: 1 }
      })
      expect(single.status).toBe(400)
      expect(single.body.error.code).toBe("invalid_params")
      expect(single.body.error.message).toContain("content-posting-api-media-transfer-guide")
      const badCount = yield* init({
        post_info: postInfo,
        source_info: { source: "FILE_UPLOAD", video_size: size, chunk_size: 10_000_000, total_chunk_count: 11 }
      })
      expect(badCount.body.error.message).toContain("rounded down")
      const noPrivacy = yield* init({
        post_info: { title: "t", brand_content_toggle: false, brand_organic_toggle: false },
        source_info: { source: "FILE_UPLOAD", video_size: 4000, chunk_size: 4000, total_chunk_count: 1 }
      })
      expect(noPrivacy.body.error.message).toContain("privacy_level is required")
      const plainJson = yield* init({
        post_info: postInfo,
        source_info: { source: "FILE_UPLOAD", video_size: 4000, chunk_size: 4000, total_chunk_count: 1 }
      }, "application/json")
      expect(plainJson.body.error.message).toContain("charset=UTF-8")
      const branded = yield* init({
        post_info: { ...postInfo, brand_content_toggle: true },
        source_info: { source: "FILE_UPLOAD", video_size: 4000, chunk_size: 4000, total_chunk_count: 1 }
      })
      expect(branded.body.error.message).toContain("content-sharing-guidelines")
      expect(fake.rules.violations).toHaveLength(5)
      expect(() => fake.rules.expectNone()).toThrow(/documented platform rules/)
      fake.rules.violations.length = 0
    }))

  it.scopedLive("public id after moderation: published with the publish id; resolvePost gives the video id and URL once TikTok has it", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.moderationPolls = 1000
      const result = yield* client.publish(tkRequest(fake.accessToken, "in review"))
      const upload = fake.uploads[0]!
      expect(result).toEqual({
        platformPostId: upload.publishId,
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}`
      })
      const credentials = Redacted.make({ access_token: fake.accessToken })
      const context = {
        account: { ...account("tiktok"), accountName: `@${TikTokApiFake.username}` },
        publishedAt: DateTime.unsafeMake(0)
      }
      expect(Option.isNone(yield* client.resolvePost!(credentials, upload.publishId, context))).toBe(true)
      fake.moderationPolls = 0
      const resolved = yield* client.resolvePost!(credentials, upload.publishId, context)
      expect(upload.postId).toMatch(/^\d{19}$/)
      expect(Option.getOrThrow(resolved)).toEqual({
        platformPostId: upload.postId,
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}/video/${upload.postId}`
      })
      // A public id needs nothing more: no call.
      const calls = fake.server.requests.length
      expect(Option.isNone(yield* client.resolvePost!(credentials, upload.postId!, context))).toBe(true)
      expect(fake.server.requests).toHaveLength(calls)
    }))

  it.scopedLive("a video longer than max_video_post_duration_sec is a media error before init", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.creator.max_video_post_duration_sec = 60
      const error = yield* Effect.flip(client.publish(tkRequest(fake.accessToken, "long", clip({ seconds: 90 }).ref)))
      expect(error.kind).toBe("media")
      expect(error.message).toContain("60 s")
      expect(fake.uploads).toHaveLength(0)
    }))

  it.scopedLive("an unaudited app: the error says only SELF_ONLY posts are accepted; SELF_ONLY goes out with the profile URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.unaudited = true
      const error = yield* Effect.flip(client.publish(tkRequest(fake.accessToken, "public")))
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("SELF_ONLY")
      const result = yield* client.publish(
        tkRequest(fake.accessToken, "private", clip().ref, { privacyLevel: "SELF_ONLY" })
      )
      // Private posts have no public id: the publish id and the profile.
      expect(result).toEqual({
        platformPostId: fake.uploads[0]!.publishId,
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}`
      })
    }))

  it.scopedLive("errors: 401 auth (token scrubbed), 429 and spam caps rate_limit, internal_error transient, FAILED media", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const fail = (caption: string, token = fake.accessToken) => Effect.flip(client.publish(tkRequest(token, caption)))
      const rate = yield* fail("x #fail-rate")
      expect(rate.kind).toBe("rate_limit")
      expect(rate.retryAfterSeconds).toBe(60)
      expect((yield* fail("x #fail-spam")).kind).toBe("rate_limit")
      expect((yield* fail("x #fail-500")).kind).toBe("transient")
      const failed = yield* fail("x #fail-processing")
      expect(failed.kind).toBe("media")
      expect(failed.message).toContain("file_format_check_failed")
      const bogus = "act.not-a-real-token-0123456789abcdef"
      const auth = yield* fail("x", bogus)
      expect(auth.kind).toBe("auth")
      expectNoSecret(auth, bogus)
    }))

  it.scopedLive("no medium, an image beside a video, or an image without a public URL: a media error before any request", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const post = (medias: ReadonlyArray<ReturnType<typeof media>>) =>
        Effect.flip(client.publish(request({
          platform: "tiktok",
          credentials: { access_token: fake.accessToken },
          main: part("x", medias),
          settings: { privacyLevel: "PUBLIC_TO_EVERYONE" }
        })))
      const none = yield* post([])
      expect(none.kind).toBe("media")
      const mixed = yield* post([photo(1), clip().ref])
      expect(mixed.message).toBe("TikTok: a post is exactly one video, or 1 to 35 images (a photo post)")
      const noUrl = yield* post([media({ kind: "image", mimeType: "image/jpeg", bytes: new Uint8Array(10) })])
      expect(noUrl.kind).toBe("media")
      expect(noUrl.message).toContain("HERALD_MEDIA_PUBLIC_URL")
      const many = yield* post(Array.from({ length: 36 }, (_, i) => photo(i)))
      expect(many.message).toBe("TikTok: a photo post takes at most 35 images, got 36")
      expect(fake.server.requests).toHaveLength(0)
    }))
})

const photo = (n: number) =>
  media({
    kind: "image",
    mimeType: "image/jpeg",
    bytes: new Uint8Array([0xff, 0xd8, 0xff, n]),
    filename: `p${n}.jpg`,
    publicUrl: `https://media.herald.example/m/${n}.jpg?sig=abc`
  })

const photoRequest = (
  token: string,
  content: string,
  count: number,
  settings: Readonly<Record<string, unknown>> = {}
) =>
  request({
    platform: "tiktok",
    credentials: { access_token: token },
    main: part(content, Array.from({ length: count }, (_, i) => photo(i))),
    settings: { privacyLevel: "PUBLIC_TO_EVERYONE", ...settings }
  })

describe("TikTok photo posts (content/init, media_type PHOTO, PULL_FROM_URL)", () => {
  it.scopedLive("creator_info, content/init with the images' public URLs and the cover, status polled; the /photo/ URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        photoRequest(fake.accessToken, "Our week in pictures #team", 3, { photoCoverIndex: 1 })
      )
      expect(fake.server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        "POST /v2/post/publish/creator_info/query/",
        "POST /v2/post/publish/content/init/",
        "POST /v2/post/publish/status/fetch/",
        "POST /v2/post/publish/status/fetch/",
        "POST /v2/post/publish/status/fetch/"
      ])
      const init = fake.server.requests[1]!
      expect(init.headers["content-type"]).toBe("application/json; charset=UTF-8")
      expect(init.headers["authorization"]).toBe(`Bearer ${fake.accessToken}`)
      expect(init.json).toEqual({
        media_type: "PHOTO",
        post_mode: "DIRECT_POST",
        post_info: {
          description: "Our week in pictures #team",
          privacy_level: "PUBLIC_TO_EVERYONE",
          // Not asked for: off, as TikTok's content-sharing guidelines require.
          disable_comment: true,
          auto_add_music: false,
          brand_content_toggle: false,
          brand_organic_toggle: false
        },
        source_info: {
          source: "PULL_FROM_URL",
          photo_images: [0, 1, 2].map((n) => `https://media.herald.example/m/${n}.jpg?sig=abc`),
          photo_cover_index: 1
        }
      })
      const post = fake.photos[0]!
      expect(post.publishId).toMatch(/^p_pub_url~/)
      expect(post.postId).toMatch(/^\d{19}$/)
      expect(result).toEqual({
        platformPostId: post.postId,
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}/photo/${post.postId}`
      })
    }))

  it.scopedLive("settings: comments when asked, autoAddMusic, the commercial disclosure; the cover defaults to the first image", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(photoRequest(fake.accessToken, "", 1, {
        allowComments: true,
        autoAddMusic: true,
        brandOrganic: true,
        // Video-only settings have no place in a photo post: not sent.
        allowDuet: true,
        videoCoverTimestamp: 10,
        aiGenerated: true
      }))
      const init = fake.server.requests.find((r) => r.path === "/v2/post/publish/content/init/")!
      expect(init.json).toMatchObject({
        post_info: {
          privacy_level: "PUBLIC_TO_EVERYONE",
          disable_comment: false,
          auto_add_music: true,
          brand_content_toggle: false,
          brand_organic_toggle: true
        },
        source_info: { photo_cover_index: 0 }
      })
      // No text: no description.
      expect((init.json as { post_info: Record<string, unknown> }).post_info).not.toHaveProperty("description")
      // A creator whose comments are off keeps them off.
      fake.creator.comment_disabled = true
      yield* client.publish(photoRequest(fake.accessToken, "x", 1, { allowComments: true }))
      expect(fake.photos[1]!.postInfo["disable_comment"]).toBe(true)
    }))

  it.scopedLive("a privacy level is required, one of the creator's; a cover outside the images is refused; nothing sent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const noPrivacy = yield* Effect.flip(client.publish(request({
        platform: "tiktok",
        credentials: { access_token: fake.accessToken },
        main: part("p", [photo(1)])
      })))
      expect(noPrivacy.message).toContain("settings.privacyLevel is required")
      const notOffered = yield* Effect.flip(
        client.publish(photoRequest(fake.accessToken, "p", 1, { privacyLevel: "FOLLOWER_OF_CREATOR" }))
      )
      expect(notOffered.message).toContain("not available to this account")
      const cover = yield* Effect.flip(client.publish(photoRequest(fake.accessToken, "p", 2, { photoCoverIndex: 2 })))
      expect(cover.kind).toBe("permanent")
      expect(fake.server.requests.filter((r) => r.path === "/v2/post/publish/content/init/")).toHaveLength(0)
    }))

  it.scopedLive("a URL outside the app's verified domains: url_ownership_unverified, permanent, naming HERALD_MEDIA_PUBLIC_URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.verifiedUrlPrefixes.splice(0, 1, "https://cdn.other.example/")
      const error = yield* Effect.flip(client.publish(photoRequest(fake.accessToken, "p", 2)))
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("url_ownership_unverified")
      expect(error.message).toContain("HERALD_MEDIA_PUBLIC_URL")
      expect(fake.photos).toHaveLength(0)
    }))

  it.scopedLive("FAILED photo_pull_failed is a media error; an unaudited app's non-private post is refused as for a video", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const failed = yield* Effect.flip(client.publish(photoRequest(fake.accessToken, "#fail-processing", 1)))
      expect(failed.kind).toBe("media")
      expect(failed.message).toContain("photo_pull_failed")
      fake.unaudited = true
      const unaudited = yield* Effect.flip(client.publish(photoRequest(fake.accessToken, "p", 1)))
      expect(unaudited.message).toContain("SELF_ONLY")
    }))

  it.scopedLive("public id after moderation: resolvePost gives the /photo/ URL of a photo post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.moderationPolls = 1000
      const result = yield* client.publish(photoRequest(fake.accessToken, "in review", 2))
      const post = fake.photos[0]!
      expect(result.platformPostId).toBe(post.publishId)
      fake.moderationPolls = 0
      const context = {
        account: { ...account("tiktok"), accountName: `@${TikTokApiFake.username}` },
        publishedAt: DateTime.unsafeMake(0)
      }
      const resolved = yield* client.resolvePost!(
        Redacted.make({ access_token: fake.accessToken }),
        post.publishId,
        context
      )
      expect(Option.getOrThrow(resolved)).toEqual({
        platformPostId: post.postId,
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}/photo/${post.postId}`
      })
    }))

  it.scopedLive("the fake refuses a photo request that breaks TikTok's documented rules, naming the page", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const init = (body: unknown) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/v2/post/publish/content/init/`, {
            method: "POST",
            headers: { authorization: `Bearer ${fake.accessToken}`, "content-type": "application/json; charset=UTF-8" },
            body: JSON.stringify(body)
          }).then(async (r) => ({
            status: r.status,
            body: await r.json() as { error: { code: string; message: string } }
          }))
        )
      const base = {
        media_type: "PHOTO",
        post_mode: "DIRECT_POST",
        post_info: { privacy_level: "SELF_ONLY" },
        source_info: {
          source: "PULL_FROM_URL",
          photo_images: ["https://media.herald.example/a.jpg"],
          photo_cover_index: 0
        }
      }
      const tooMany = yield* init({
        ...base,
        source_info: {
          ...base.source_info,
          photo_images: Array.from({ length: 36 }, (_, i) => `https://media.herald.example/${i}.jpg`)
        }
      })
      expect([tooMany.status, tooMany.body.error.code]).toEqual([400, "invalid_params"])
      expect(tooMany.body.error.message).toContain("content-posting-api-reference-photo-post")
      const videoField = yield* init({ ...base, post_info: { ...base.post_info, disable_duet: true } })
      expect(videoField.body.error.code).toBe("invalid_params")
      const longTitle = yield* init({ ...base, post_info: { ...base.post_info, title: "t".repeat(91) } })
      expect(longTitle.body.error.code).toBe("invalid_params")
      const fileUpload = yield* init({ ...base, source_info: { ...base.source_info, source: "FILE_UPLOAD" } })
      expect(fileUpload.body.error.code).toBe("invalid_params")
      expect(fake.rules.violations).toHaveLength(4)
      fake.rules.violations.length = 0
    }))
})

describe("TikTok findPublished (the account's public videos, video/list)", () => {
  const lookup = (token: string, content: string, sinceMs: number, untilMs: number) => ({
    account: account("tiktok"),
    credentials: Redacted.make({ access_token: token }),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  /** A public video another client posted at `atMs`. */
  const other = (fake: TikTokApiFake.TikTokFake, id: string, caption: string, atMs: number) =>
    fake.listed.push({
      id,
      create_time: Math.floor(atMs / 1000),
      video_description: caption,
      title: "",
      share_url: `https://www.tiktok.com/@${TikTokApiFake.username}/video/${id}?utm_campaign=tt4d_open_api`
    })
  const listCalls = (fake: TikTokApiFake.TikTokFake) => fake.server.requests.filter((r) => r.path === "/v2/video/list/")

  it.scopedLive("a video or photo post in the window is found by its caption, with its id and URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const before = Date.now()
      const video = yield* client.publish(tkRequest(fake.accessToken, "Launch day & friends"))
      const photo = yield* client.publish(photoRequest(fake.accessToken, "Our week in pictures", 2))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup(fake.accessToken, "Launch day & friends", before, after))).toEqual({
        _tag: "Found",
        platformPostId: video.platformPostId,
        platformPostUrl: video.platformPostUrl
      })
      expect(yield* client.findPublished!(lookup(fake.accessToken, "Our week in pictures", before, after))).toEqual({
        _tag: "Found",
        platformPostId: photo.platformPostId,
        platformPostUrl: photo.platformPostUrl
      })
      const call = listCalls(fake)[0]!
      expect(call.method).toBe("POST")
      expect(call.query.get("fields")).toBe("id,create_time,video_description,title,share_url")
      expect(call.headers["authorization"]).toBe(`Bearer ${fake.accessToken}`)
      const body = call.json as { cursor: number; max_count: number }
      expect(body.max_count).toBe(20)
      // Paged from the window's end (widened by the clock allowance), not from the newest video.
      expect(body.cursor).toBeGreaterThanOrEqual(after)
      expect(body.cursor).toBeLessThanOrEqual(after + 120_000)
    }))

  it.scopedLive("nothing in the window carries the caption: Unknown (a video in moderation or private is not listed), never Absent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Date.now()
      other(fake, "7400000000000000001", "same words", now - 3_600_000)
      other(fake, "7400000000000000002", "other words", now)
      const answer = yield* client.findPublished!(lookup(fake.accessToken, "same words", now - 1_000, now + 1_000))
      expect(answer._tag).toBe("Unknown")
      expect(answer._tag === "Unknown" && answer.reason).toContain("moderation")
      // The page held a video older than the window: no further page was asked for.
      expect(listCalls(fake)).toHaveLength(1)

      // A private post is never listed: TikTok gives it no public id.
      yield* client.publish(tkRequest(fake.accessToken, "only me", clip().ref, { privacyLevel: "SELF_ONLY" }))
      expect((yield* client.findPublished!(lookup(fake.accessToken, "only me", now - 1_000, Date.now())))._tag).toBe(
        "Unknown"
      )
    }))

  it.scopedLive("pages back by create_time across pages until the window is covered; a bounded number of pages", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Math.floor(Date.now() / 1000) * 1000
      other(fake, "7400000000000000100", "deep", now - 30_000)
      for (let i = 0; i < 20; i++) {
        other(fake, String(7400000000000000200n + BigInt(i)), `noise ${i}`, now - 20_000 + i * 1_000)
      }
      expect(yield* client.findPublished!(lookup(fake.accessToken, "deep", now - 40_000, now))).toEqual({
        _tag: "Found",
        platformPostId: "7400000000000000100",
        platformPostUrl: `https://www.tiktok.com/@${TikTokApiFake.username}/video/7400000000000000100`
      })
      const calls = listCalls(fake)
      expect(calls).toHaveLength(2)
      const [first, second] = calls.map((c) => c.json as { cursor: number })
      // The second page starts where the first ended (TikTok's cursor: the last video's create_time, in ms).
      expect(second!.cursor).toBe(now - 20_000)
      expect(second!.cursor).toBeLessThan(first!.cursor)

      for (let i = 0; i < 100; i++) {
        other(fake, String(7400000000000000300n + BigInt(i)), `older ${i}`, now - 100_000 - i * 1_000)
      }
      const tooMany = yield* client.findPublished!(lookup(fake.accessToken, "absent", now - 400_000, now))
      expect(tooMany._tag).toBe("Unknown")
      expect(tooMany._tag === "Unknown" && tooMany.reason).toContain("more than 100 videos")
      expect(listCalls(fake)).toHaveLength(2 + TikTok.lookupMaxPages)
    }))

  it.scopedLive("an account connected without video.list cannot be asked: Unknown, as TikTok refuses the scope", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const old = "act.old-connection-token-without-video-list"
      fake.tokens.set(old, ["user.info.basic", "user.info.profile", "video.publish", "video.upload"])
      const answer = yield* client.findPublished!(lookup(old, "anything", 0, Date.now()))
      expect(answer._tag).toBe("Unknown")
      expect(answer._tag === "Unknown" && answer.reason).toContain("video.list")
      expect(answer._tag === "Unknown" && answer.reason).not.toContain(old)
    }))

  it.scopedLive("a rate limit or a server error fails the lookup (never an answer); the token is scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.videoListFailures.push({
        ...TikTokApiFake.tiktokError(429, "rate_limit_exceeded", "API rate limit was exceeded."),
        headers: { "retry-after": "30" }
      })
      const limited = yield* Effect.flip(client.findPublished!(lookup(fake.accessToken, "x", 0, Date.now())))
      expect(limited.kind).toBe("rate_limit")
      expect(limited.retryAfterSeconds).toBe(30)
      fake.videoListFailures.push(TikTokApiFake.tiktokError(500, "internal_error", "Something went wrong."))
      expect((yield* Effect.flip(client.findPublished!(lookup(fake.accessToken, "x", 0, Date.now())))).kind).toBe(
        "transient"
      )
      fake.videoListFailures.push({ status: 503, body: "upstream unavailable" })
      const unavailable = yield* Effect.flip(client.findPublished!(lookup(fake.accessToken, "x", 0, Date.now())))
      expect(unavailable.kind).toBe("transient")
      expectNoSecret(unavailable, fake.accessToken)
    }))

  it.scopedLive("a post without a caption cannot be told apart: Unknown without asking", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      expect((yield* client.findPublished!(lookup(fake.accessToken, "  ", 0, Date.now())))._tag).toBe("Unknown")
      expect(listCalls(fake)).toHaveLength(0)
    }))
})
