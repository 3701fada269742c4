import { describe, expect, it } from "@effect/vitest"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as UrlImporter from "../../src/media/UrlImporter.js"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as LinkedIn from "../../src/platforms/LinkedIn.js"
import * as LinkedInPublish from "../../src/platforms/LinkedInPublish.js"
import * as FakeServer from "./fakes/FakeServer.js"
import * as LinkedInFake from "./fakes/LinkedInFake.js"
import { bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = LinkedInFake.accessToken

const setup = (options: Partial<LinkedIn.Options> = {}) =>
  Effect.gen(function*() {
    const fake = yield* Effect.acquireRelease(
      Effect.promise(() => LinkedInFake.start()),
      (f) => Effect.promise(() => f.server.close())
    )
    // Every request must keep the documented rules of the fake's rulebook, whatever the test checks.
    yield* Effect.addFinalizer(() => Effect.sync(() => fake.rules.expectNone()))
    const client = yield* LinkedIn.make({
      apiUrl: fake.server.url,
      mediaGrace: "1 millis",
      mediaPollInterval: "5 millis",
      videoPollInterval: "5 millis",
      ...options
    }).pipe(Effect.provide(HttpLive))
    return { fake, client: withFollowUps(client) }
  })

const stored = {
  access_token: token,
  expires_at: "1772409600000",
  user_id: LinkedInFake.memberId,
  author_urn: LinkedInFake.authorUrn
}

const liRequest = (main: ReturnType<typeof part>, extra: Partial<Parameters<typeof request>[0]> = {}) =>
  request({ platform: "linkedin", credentials: stored, main, ...extra })

const expectNoSecret = (error: PublishError) => expect(error.message).not.toContain(token)

const postsSent = (fake: LinkedInFake.LinkedInFake) =>
  fake.server.requests.filter((r) => r.method === "POST" && r.path === "/rest/posts")

describe("LinkedIn adapter against the Posts API fake", () => {
  it.scopedLive("text post: POST /rest/posts as the member with the version headers; id from x-restli-id", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const result = yield* client.publish(liRequest(part("Hello from Herald 👋")))
      const urn = fake.posts[0]!.urn
      expect(urn).toMatch(/^urn:li:share:\d+$/)
      expect(result).toEqual({ platformPostId: urn, platformPostUrl: `https://www.linkedin.com/feed/update/${urn}/` })
      const [sent] = postsSent(fake)
      expect(sent!.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(sent!.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)
      expect(sent!.headers["x-restli-protocol-version"]).toBe("2.0.0")
      expect(sent!.json).toEqual({
        author: LinkedInFake.authorUrn,
        commentary: "Hello from Herald 👋",
        visibility: "PUBLIC",
        distribution: { feedDistribution: "MAIN_FEED", targetEntities: [], thirdPartyDistributionChannels: [] },
        lifecycleState: "PUBLISHED",
        isReshareDisabledByAuthor: false
      })
    }))

  it.scopedLive("the author falls back to urn:li:person:{user_id}; visibility comes from the settings", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const { author_urn: _, ...withoutUrn } = stored
      yield* client.publish(
        request({
          platform: "linkedin",
          credentials: withoutUrn,
          main: part("by id"),
          settings: { visibility: "CONNECTIONS" }
        })
      )
      const body = postsSent(fake)[0]!.json as Record<string, unknown>
      expect(body["author"]).toBe(LinkedInFake.authorUrn)
      expect(body["visibility"]).toBe("CONNECTIONS")
    }))

  it.scopedLive("commentary is escaped as little text; #tags become hashtags", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      yield* client.publish(liRequest(part("Launch (beta) *now* at <site> #Herald_2 ~ a_b @you [x] {y} | \\")))
      const body = postsSent(fake)[0]!.json as Record<string, unknown>
      expect(body["commentary"]).toBe(
        "Launch \\(beta\\) \\*now\\* at \\<site\\> {hashtag|\\#|Herald\\_2} \\~ a\\_b \\@you \\[x\\] \\{y\\} \\| \\\\"
      )
      expect(LinkedInPublish.escapeLittleText("C# and x#y")).toBe("C\\# and x\\#y")
      const original = "Launch (beta) *now* at <site> #Herald_2 ~ a_b @you [x] {y} | \\ #émoji #"
      expect(LinkedInFake.rendered(LinkedInPublish.escapeLittleText(original))).toBe(original)
    }))

  it.scopedLive("the fake refuses a call without the version header, as LinkedIn does (a permanent error)", () =>
    Effect.gen(function*() {
      const { client } = yield* setup({ version: "202201" })
      const error = yield* client.publish(liRequest(part("old"))).pipe(Effect.flip)
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("Requested version 202201 is not active")
      expect(error.message).toContain("set HERALD_LINKEDIN_VERSION to a current version")
      const { fake } = yield* setup()
      const bare = yield* Effect.promise(() =>
        fetch(`${fake.server.url}/rest/posts`, { method: "POST", headers: { authorization: `Bearer ${token}` } })
      )
      expect(bare.status).toBe(400)
      expect(yield* Effect.promise(() => bare.json())).toMatchObject({ code: "VERSION_MISSING" })
    }))

  it.scopedLive("image: initializeUpload, PUT the bytes to uploadUrl, then the post references the image URN", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const bytes = bytesOf(3000, 1)
      yield* client.publish(
        liRequest(part("A picture", [media({ kind: "image", mimeType: "image/png", bytes, filename: "cat.png" })]))
      )
      const [asset] = [...fake.assets.values()]
      const paths = fake.server.requests.map((r) => `${r.method} ${r.path}${r.query.size > 0 ? `?${r.query}` : ""}`)
      expect(paths[0]).toBe("POST /rest/images?action=initializeUpload")
      expect(paths[1]).toMatch(/^PUT \/dms-uploads\//)
      // Polled until AVAILABLE (PROCESSING once): the post never names an image LinkedIn has not processed.
      expect(paths[2]).toBe(`GET /rest/images/${encodeURIComponent(asset!.urn)}`)
      expect(paths[3]).toBe(`GET /rest/images/${encodeURIComponent(asset!.urn)}`)
      expect(paths[4]).toBe("POST /rest/posts")
      expect(paths).toHaveLength(5)
      expect(fake.server.requests[0]!.json).toEqual({ initializeUploadRequest: { owner: LinkedInFake.authorUrn } })
      expect(fake.server.requests[0]!.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)
      const put = fake.server.requests[1]!
      expect(put.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(new Uint8Array(put.body)).toEqual(bytes)
      expect(asset!.urn).toMatch(/^urn:li:image:/)
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({ media: { id: asset!.urn } })
    }))

  it.scopedLive("several images become a multiImage, in order", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const images = [1, 2, 3].map((seed) => media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(50, seed) }))
      yield* client.publish(liRequest(part("Gallery", images)))
      const urns = [...fake.assets.values()].map((a) => a.urn)
      expect(urns).toHaveLength(3)
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({
        multiImage: { images: urns.map((id) => ({ id })) }
      })
      expect([...fake.assets.values()].map((a) => a.parts.get(0))).toEqual([1, 2, 3].map((s) => bytesOf(50, s)))
    }))

  it.scopedLive("alt text: each image carries its medium's altText, single and in a multiImage", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      yield* client.publish(liRequest(part("One", [
        { ...media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(50, 1) }), altText: "A red kite" }
      ])))
      const [single] = [...fake.assets.values()].map((a) => a.urn)
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({
        media: { id: single, altText: "A red kite" }
      })
      yield* client.publish(liRequest(part("Two", [
        { ...media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(50, 2) }), altText: "Waves at dusk" },
        media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(50, 3) })
      ])))
      const [, first, second] = [...fake.assets.values()].map((a) => a.urn)
      expect((postsSent(fake)[1]!.json as Record<string, unknown>)["content"]).toEqual({
        multiImage: { images: [{ id: first, altText: "Waves at dusk" }, { id: second }] }
      })
    }))

  it.scopedLive("PDF document: documents initializeUpload, then media with a title", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      yield* client.publish(
        liRequest(
          part("Slides", [
            media({ kind: "document", mimeType: "application/pdf", bytes: bytesOf(80, 9), filename: "Deck.pdf" })
          ])
        )
      )
      const [asset] = [...fake.assets.values()]
      expect(asset!.urn).toMatch(/^urn:li:document:/)
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({
        media: { id: asset!.urn, title: "Deck" }
      })
    }))

  it.scopedLive("video: initializeUpload, a PUT per byte range, finalize with the ETags, polls until AVAILABLE", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const bytes = bytesOf(2500, 2)
      const result = yield* client.publish(
        liRequest(part("A clip", [media({ kind: "video", mimeType: "video/mp4", bytes })]))
      )
      const [asset] = [...fake.assets.values()]
      const paths = fake.server.requests.map((r) => `${r.method} ${r.path.replace(/^\/dms-uploads\/.*/, "/upload")}`)
      expect(paths).toEqual([
        "POST /rest/videos",
        "PUT /upload",
        "PUT /upload",
        "PUT /upload",
        "POST /rest/videos",
        `GET /rest/videos/${encodeURIComponent(asset!.urn)}`,
        `GET /rest/videos/${encodeURIComponent(asset!.urn)}`,
        `GET /rest/videos/${encodeURIComponent(asset!.urn)}`,
        "POST /rest/posts"
      ])
      expect(fake.server.requests[0]!.json).toEqual({
        initializeUploadRequest: {
          owner: LinkedInFake.authorUrn,
          fileSizeBytes: 2500,
          uploadCaptions: false,
          uploadThumbnail: false
        }
      })
      const joined = new Uint8Array([0, 1, 2].flatMap((i) => [...asset!.parts.get(i)!]))
      expect(joined).toEqual(bytes)
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({ media: { id: asset!.urn } })
      expect(result.platformPostId).toMatch(/^urn:li:ugcPost:/)
    }))

  it.scopedLive("video PROCESSING_FAILED is a media error, and nothing is posted", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.failVideoProcessing = true
      const video = media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(500, 3) })
      const error = yield* client.publish(liRequest(part("clip", [video]))).pipe(Effect.flip)
      expect(error.kind).toBe("media")
      expect(error.message).toContain("Video format is not supported")
      expect(postsSent(fake)).toHaveLength(0)
    }))

  it.scopedLive("media LinkedIn cannot take is refused before any call", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const image = () => media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(10, 4) })
      const mixed = yield* client.publish(
        liRequest(part("mixed", [image(), media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(10, 5) })]))
      ).pipe(Effect.flip)
      expect(mixed.kind).toBe("media")
      const many = yield* client.publish(liRequest(part("many", Array.from({ length: 21 }, image)))).pipe(Effect.flip)
      expect(many.kind).toBe("media")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("image status: a slow image is polled until AVAILABLE; an unreadable status falls back to the grace pause", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.imagePolls = 3
      const doc = media({ kind: "document", mimeType: "application/pdf", bytes: bytesOf(500, 3), filename: "deck.pdf" })
      yield* client.publish(liRequest(part("deck", [doc])))
      const reads = fake.server.requests.filter((r) => r.method === "GET" && r.path.startsWith("/rest/documents/"))
      expect(reads).toHaveLength(4)
      expect(reads[0]!.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)
      expect(postsSent(fake)).toHaveLength(1)

      fake.imagePolls = 0
      fake.assetReadForbidden = true
      yield* client.publish(
        liRequest(part("pic", [media({ kind: "image", mimeType: "image/png", bytes: bytesOf(10, 8) })]))
      )
      expect(postsSent(fake)).toHaveLength(2)
    }))

  it.scopedLive("an image still processing after mediaMaxPolls is transient, nothing posted", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup({ mediaMaxPolls: 3 })
      fake.imagePolls = 1000
      const error = yield* Effect.flip(
        client.publish(liRequest(part("pic", [media({ kind: "image", mimeType: "image/png", bytes: bytesOf(10, 9) })])))
      )
      expect(error.kind).toBe("transient")
      expect(postsSent(fake)).toHaveLength(0)
    }))

  it.scopedLive("an upload refused by LinkedIn is a media error", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.failNext(
        "POST /rest/images?action=initializeUpload",
        LinkedInFake.error(400, "BAD_REQUEST", "Invalid owner for the image")
      )
      const error = yield* client.publish(
        liRequest(part("pic", [media({ kind: "image", mimeType: "image/png", bytes: bytesOf(10, 6) })]))
      ).pipe(Effect.flip)
      expect(error.kind).toBe("media")
      expect(postsSent(fake)).toHaveLength(0)
    }))

  it.scopedLive("first comment: socialActions/{urn}/comments as the author, on the new post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const result = yield* client.publish(liRequest(part("main"), { settings: { firstComment: "Link: https://x.y" } }))
      const commentCall = fake.server.requests.at(-1)!
      expect(commentCall.path).toBe(`/rest/socialActions/${encodeURIComponent(result.platformPostId)}/comments`)
      expect(commentCall.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)
      expect(fake.comments).toEqual([{
        post: result.platformPostId,
        body: { actor: LinkedInFake.authorUrn, object: result.platformPostId, message: { text: "Link: https://x.y" } }
      }])
    }))

  it.scopedLive("a first comment refused after the post is out does not fail the publish", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.failNext("POST /rest/socialActions/{urn}/comments", LinkedInFake.serverError)
      const result = yield* client.publish(liRequest(part("main"), { settings: { firstComment: "late" } }))
      expect(result.platformPostId).toBe(fake.posts[0]!.urn)
      expect(fake.comments).toHaveLength(0)
    }))

  it.scopedLive("401 (revoked token) is auth, without the token in the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.revoked.add(token)
      const error = yield* client.publish(liRequest(part("hello"))).pipe(Effect.flip)
      expect(error.kind).toBe("auth")
      expect(error.message).toBe("LinkedIn: Invalid access token")
      expectNoSecret(error)
    }))

  it.scopedLive("429 is rate_limit: Retry-After when sent, else until the daily quota resets at midnight UTC", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const daily = yield* client.publish(liRequest(part("busy #fail-429"))).pipe(Effect.flip)
      expect(daily.kind).toBe("rate_limit")
      expect(daily.retryable).toBe(true)
      const now = Date.now()
      const untilMidnight = Math.ceil((86_400_000 - (now % 86_400_000)) / 1000)
      expect(daily.retryAfterSeconds).toBeGreaterThanOrEqual(untilMidnight - 5)
      expect(daily.retryAfterSeconds).toBeLessThanOrEqual(untilMidnight + 5)
      expect(daily.message).toContain("DAY limit")
      fake.failNext("POST /rest/posts", {
        ...LinkedInFake.error(429, "TOO_MANY_REQUESTS", "Too many requests"),
        headers: { "retry-after": "120" }
      })
      const short = yield* client.publish(liRequest(part("busy again"))).pipe(Effect.flip)
      expect(short.kind).toBe("rate_limit")
      expect(short.retryAfterSeconds).toBe(120)
    }))

  it.scopedLive("duplicate content (422 DUPLICATE_POST) is a non-retryable duplicate", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      yield* client.publish(liRequest(part("same words")))
      const error = yield* client.publish(liRequest(part("same words"))).pipe(Effect.flip)
      expect(error.kind).toBe("duplicate")
      expect(error.retryable).toBe(false)
      expect(error.message).toContain("Content is a duplicate of urn:li:share:")
    }))

  it.scopedLive("commentary over 3000 characters (422) is too_long", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const error = yield* client.publish(liRequest(part("x".repeat(3001)))).pipe(Effect.flip)
      expect(error.kind).toBe("too_long")
      expect(error.retryable).toBe(false)
    }))

  it.scopedLive("5xx is transient and retryable", () =>
    Effect.gen(function*() {
      const { client } = yield* setup()
      const error = yield* client.publish(liRequest(part("down #fail-500"))).pipe(Effect.flip)
      expect(error.kind).toBe("transient")
      expect(error.retryable).toBe(true)
      expect(error.message).toContain("Unable to obtain activity")
    }))

  it.scopedLive("an error body that echoes the token never carries it into the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.failNext(
        "POST /rest/posts",
        LinkedInFake.error(401, "EXPIRED_ACCESS_TOKEN", `The token used in the request has expired: ${token}`, 65601)
      )
      const error = yield* client.publish(liRequest(part("hi"))).pipe(Effect.flip)
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("has expired")
      expectNoSecret(error)
    }))

  it.scopedLive("403 ACCESS_DENIED (missing scope) is auth", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.failNext(
        "POST /rest/posts",
        LinkedInFake.error(403, "ACCESS_DENIED", "Not enough permissions to access: partnerApiPostsExternal.CREATE")
      )
      const error = yield* client.publish(liRequest(part("hi"))).pipe(Effect.flip)
      expect(error.kind).toBe("auth")
    }))

  it.scopedLive("missing access token or author is auth without any call", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const noToken = yield* client.publish(
        request({ platform: "linkedin", credentials: { author_urn: LinkedInFake.authorUrn }, main: part("a") })
      ).pipe(Effect.flip)
      expect(noToken.kind).toBe("auth")
      const noAuthor = yield* client.publish(
        request({ platform: "linkedin", credentials: { access_token: token }, main: part("a") })
      ).pipe(Effect.flip)
      expect(noAuthor.kind).toBe("auth")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("metrics: GET /rest/socialActions/{urn}; totalLikes and totalFirstLevelComments, versioned headers", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const { platformPostId } = yield* client.publish(liRequest(part("counted")))
      const metrics = yield* client.metrics!(Redacted.make(stored), platformPostId)
      expect(metrics).toMatchObject({
        likes: LinkedInFake.socialCounts.likes,
        comments: LinkedInFake.socialCounts.comments,
        views: 0,
        shares: 0,
        impressions: 0
      })
      const call = fake.server.requests.find((r) => r.method === "GET" && r.path.startsWith("/rest/socialActions/"))!
      expect(decodeURIComponent(call.path)).toBe(`/rest/socialActions/${platformPostId}`)
      expect(call.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(call.headers["x-restli-protocol-version"]).toBe("2.0.0")
    }))

  it.scopedLive("metrics errors: 403 without r_member_social is auth with the reason, 429 carries Retry-After, 500 transient, 401 scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const { platformPostId } = yield* client.publish(liRequest(part("counted")))
      const credentials = Redacted.make(stored)
      const route = "GET /rest/socialActions/{urn}"

      fake.failNext(
        route,
        LinkedInFake.error(
          403,
          "ACCESS_DENIED",
          "Not enough permissions to access: partnerApiSocialActions.GET.20260101"
        )
      )
      const denied = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(denied.kind).toBe("auth")
      expect(denied.message).toContain("r_member_social")

      fake.failNext(route, {
        ...LinkedInFake.error(429, "TOO_MANY_REQUESTS", "Resource level throttle limit reached"),
        headers: { "retry-after": "120" }
      })
      const limited = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(limited.kind).toBe("rate_limit")
      expect(limited.retryAfterSeconds).toBe(120)

      fake.failNext(route, LinkedInFake.error(500, "INTERNAL_SERVER_ERROR", "Internal Server Error"))
      expect((yield* Effect.flip(client.metrics!(credentials, platformPostId))).kind).toBe("transient")

      expect((yield* Effect.flip(client.metrics!(credentials, "urn:li:share:1"))).kind).toBe("permanent")

      fake.failNext(route, LinkedInFake.error(401, "INVALID_ACCESS_TOKEN", `Invalid access token ${token}`))
      const echoed = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(echoed.kind).toBe("auth")
      expectNoSecret(echoed)
      expect(echoed.message).not.toContain("r_member_social")
    }))
})

describe("LinkedIn findPublished (the author's posts)", () => {
  const lookup = (content: string, sinceMs: number, untilMs: number) => ({
    account: liRequest(part(content)).account,
    credentials: Redacted.make(stored),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  const other = (fake: LinkedInFake.LinkedInFake, n: number, commentary: string, at: number) =>
    fake.posts.push({
      urn: `urn:li:share:73${String(n).padStart(17, "0")}`,
      body: { author: LinkedInFake.authorUrn, commentary, visibility: "PUBLIC" },
      headers: {},
      createdAt: at
    })

  it.scopedLive("a post in the window is found by its commentary as sent (escaped); other text is absent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const before = Date.now()
      const sent = yield* client.publish(liRequest(part("Hiring (2 roles) #jobs")))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup("Hiring (2 roles) #jobs", before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: sent.platformPostUrl
      })
      expect(yield* client.findPublished!(lookup("Hiring", before, after))).toEqual({ _tag: "Absent" })
      const listed = fake.server.requests.filter((r) => r.method === "GET" && r.path === "/rest/posts")
      expect(listed[0]!.query.get("author")).toBe(LinkedInFake.authorUrn)
      expect(listed[0]!.query.get("sortBy")).toBe("CREATED")
    }))

  it.scopedLive("pages until past the window; too many posts in it cannot be told", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      const now = Date.now()
      other(fake, 1, "same words", now - 3_600_000)
      expect(yield* client.findPublished!(lookup("same words", now - 1_000, now + 1_000))).toEqual({ _tag: "Absent" })
      other(fake, 2, "deep", now)
      for (let i = 10; i < 160; i++) other(fake, i, `noise ${i}`, now + 30_000)
      expect((yield* client.findPublished!(lookup("deep", now - 1_000, now + 1_000)))._tag).toBe("Found")
      for (let i = 160; i < 1_100; i++) other(fake, i, `noise ${i}`, now + 30_000)
      expect((yield* client.findPublished!(lookup("absent", now - 1_000, now + 1_000)))._tag).toBe("Unknown")
    }))

  it.scopedLive("a rate limit or an error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup()
      fake.failNext("GET /rest/posts", LinkedInFake.tooManyRequests)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("rate_limit")
      fake.failNext("GET /rest/posts", LinkedInFake.serverError)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("transient")
    }))
})

describe("LinkedIn article card (content.article) for a post whose text carries a link", () => {
  const thumb = bytesOf(3000, 4)
  const page = `<!doctype html><html><head><title>Fallback</title>
<meta property="og:title" content="Herald &amp; the Posts API">
<meta property="og:description" content="Scheduling, one API">
<meta property="og:image" content="/card.png"></head><body>hi</body></html>`

  const site = (options: { readonly image?: boolean; readonly title?: boolean } = {}) =>
    FakeServer.scoped((r) =>
      r.path === "/card.png"
        ? { status: 200, headers: { "content-type": "image/png" }, body: Buffer.from(thumb) }
        : {
          status: 200,
          headers: { "content-type": "text/html; charset=utf-8" },
          body:
            (options.title === false ? page.replace(/<title>.*<\/title>|<meta property="og:title"[^>]*>/g, "") : page)
              .replace(options.image === false ? /<meta property="og:image"[^>]*>/ : /$^/, "")
        }
    )

  // The page server is on loopback: the guard is opened for it, as HERALD_MEDIA_ALLOW_PRIVATE does.
  const withCards = () => setup({ linkCards: UrlImporter.make({ allowPrivate: true }) })

  it.scopedLive("the page's title, description and image: the image uploaded through the Images API as the thumbnail", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* withCards()
      const pages = yield* site()
      const link = `${pages.url}/notes/launch`
      yield* client.publish(liRequest(part(`We launched: ${link} #herald`)))
      const [asset] = [...fake.assets.values()]
      expect(asset!.kind).toBe("image")
      expect(asset!.parts.get(0)).toEqual(thumb)
      expect(fake.server.requests[0]!.json).toEqual({ initializeUploadRequest: { owner: LinkedInFake.authorUrn } })
      const body = postsSent(fake)[0]!.json as Record<string, unknown>
      expect(body["content"]).toEqual({
        article: {
          source: link,
          title: "Herald & the Posts API",
          description: "Scheduling, one API",
          thumbnail: asset!.urn
        }
      })
      // The link stays in the commentary, escaped as little text.
      expect(LinkedInFake.rendered(body["commentary"] as string)).toBe(`We launched: ${link} #herald`)
    }))

  it.scopedLive("no image on the page: a card without thumbnail; no title: the host; media or no link: no card", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* withCards()
      const plain = yield* site({ image: false })
      yield* client.publish(liRequest(part(`See ${plain.url}/a`)))
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({
        article: { source: `${plain.url}/a`, title: "Herald & the Posts API", description: "Scheduling, one API" }
      })
      const untitled = yield* site({ title: false, image: false })
      yield* client.publish(liRequest(part(`Also ${untitled.url}/b`)))
      expect((postsSent(fake)[1]!.json as Record<string, unknown>)["content"]).toEqual({
        article: { source: `${untitled.url}/b`, title: "127.0.0.1", description: "Scheduling, one API" }
      })
      const before = plain.requests.length
      yield* client.publish(
        liRequest(part(`Pic ${plain.url}/c`, [media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(40, 1) })]))
      )
      expect(plain.requests.length).toBe(before)
      expect((postsSent(fake)[2]!.json as Record<string, unknown>)["content"]).toHaveProperty("media")
      yield* client.publish(liRequest(part("No link at all")))
      expect(postsSent(fake)[3]!.json).not.toHaveProperty("content")
    }))

  it.scopedLive("a page the guard refuses (private address) or cannot read gives a plain text post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup({ linkCards: UrlImporter.make({ allowPrivate: false }) })
      const pages = yield* site()
      yield* client.publish(liRequest(part(`Private ${pages.url}/x`)))
      expect(pages.requests).toHaveLength(0)
      expect(postsSent(fake)[0]!.json).not.toHaveProperty("content")
    }))

  it.scopedLive("a thumbnail LinkedIn refuses leaves the card without it; the post still goes out", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* withCards()
      const pages = yield* site()
      fake.failNext(
        "POST /rest/images?action=initializeUpload",
        LinkedInFake.error(400, "BAD_REQUEST", "Invalid image")
      )
      yield* client.publish(liRequest(part(`Read ${pages.url}/y`)))
      expect((postsSent(fake)[0]!.json as Record<string, unknown>)["content"]).toEqual({
        article: { source: `${pages.url}/y`, title: "Herald & the Posts API", description: "Scheduling, one API" }
      })
    }))

  it("the live clients fetch article cards: platformOptionsFromEnv gives LinkedIn a link card fetcher", () => {
    expect(ConnectionsConfig.platformOptionsFromEnv({}).linkedin?.linkCards).toBeDefined()
  })

  it.scopedLive("the fake refuses an article without a title or with a thumbnail that is not an available image", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup()
      const post = (content: unknown) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/rest/posts`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              "linkedin-version": LinkedIn.defaultVersion,
              "x-restli-protocol-version": "2.0.0",
              "content-type": "application/json"
            },
            body: JSON.stringify({
              author: LinkedInFake.authorUrn,
              commentary: "x",
              visibility: "PUBLIC",
              distribution: { feedDistribution: "MAIN_FEED" },
              lifecycleState: "PUBLISHED",
              content
            })
          }).then(async (r) => ({ status: r.status, body: await r.json() as { message: string } }))
        )
      const untitled = yield* post({ article: { source: "https://example.com/a" } })
      expect(untitled.status).toBe(422)
      expect(untitled.body.message).toContain("posts-api")
      const badThumb = yield* post({
        article: { source: "https://example.com/a", title: "A", thumbnail: "urn:li:image:nope" }
      })
      expect(badThumb.status).toBe(422)
      expect(fake.rules.violations).toHaveLength(2)
      fake.rules.violations.length = 0
    }))
})
