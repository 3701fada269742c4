import { describe, expect, it } from "@effect/vitest"
import { SocialAccount } from "@herald/core/domain/Account"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as FacebookOAuth from "../../src/oauth/Facebook.js"
import * as Facebook from "../../src/platforms/Facebook.js"
import * as FacebookOAuthFake from "../oauth/fakes/FacebookOAuthFake.js"
import { metaError } from "../oauth/fakes/MetaFake.js"
import * as FacebookApiFake from "./fakes/FacebookApiFake.js"
import { mp4 } from "./fakes/YouTubeApiFake.js"
import { account, bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = FacebookApiFake.pageToken
const pageId = FacebookApiFake.pageId

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => FacebookApiFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  // Every request must keep the documented rules of the fake's rulebook, whatever the test checks.
  yield* Effect.addFinalizer(() => Effect.sync(() => fake.rules.expectNone()))
  const client = yield* Facebook.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 }).pipe(
    Effect.provide(HttpLive)
  )
  return { fake, client: withFollowUps(client) }
})

const fbRequest = (main: ReturnType<typeof part>, settings: Readonly<Record<string, unknown>> = {}) => ({
  ...request({ platform: "facebook", credentials: { access_token: token, page_id: pageId }, main, settings }),
  account: new SocialAccount({ ...account("facebook"), platformAccountId: pageId })
})

const photo = (options: { readonly url?: string; readonly filename?: string; readonly seed?: number } = {}) =>
  media({
    kind: "image",
    mimeType: "image/jpeg",
    bytes: bytesOf(300, options.seed ?? 1),
    filename: options.filename ?? "photo.jpg",
    ...(options.url === undefined ? {} : { publicUrl: options.url })
  })

const clip = (filename = "clip.mp4", url?: string) =>
  media({
    kind: "video",
    mimeType: "video/mp4",
    bytes: bytesOf(2000, 5),
    filename,
    ...(url === undefined ? {} : { publicUrl: url })
  })

const routes = (fake: FacebookApiFake.FacebookFake) =>
  fake.server.requests.map((r) =>
    `${r.method} ${r.path.replace(/\/[\d_]+(?=\/|$)/g, (s) => s === `/${pageId}` ? "/{page}" : "/{id}")}`
  )

const paramsOf = (r: { form: FormData | undefined }) => {
  const out: Record<string, string> = {}
  r.form?.forEach((v, k) => {
    if (typeof v === "string" && k !== "access_token") out[k] = v
  })
  return out
}

const expectNoSecret = (error: PublishError) => expect(error.message).not.toContain(token)

describe("Facebook Pages adapter against the Graph fake", () => {
  it.scopedLive("connect round trip: a Page connected through Facebook Login publishes with what the connection stores", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const login = yield* Effect.acquireRelease(
        Effect.promise(() => FacebookOAuthFake.start()),
        (f) => Effect.promise(() => f.close())
      )
      const provider = yield* FacebookOAuth.make({
        clientId: login.clientId,
        clientSecret: Redacted.make(login.clientSecret),
        authorizeUrl: `${login.server.url}/v26.0/dialog/oauth`,
        apiUrl: login.server.url
      }).pipe(Effect.provide(HttpLive))
      const redirectUri = "https://herald.example.com/oauth/callback/facebook"
      const back = new URL(login.authorize(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "c" })))
      const identities = yield* provider.exchangeCode({
        code: back.searchParams.get("code")!,
        redirectUri,
        codeVerifier: "v"
      })
      // The Graph fake accepts the Page tokens Facebook Login issued.
      for (const [pageToken, issued] of login.pageTokens) fake.pages.set(pageToken, issued.pageId)
      const identity = identities[0]!
      const result = yield* client.publish({
        ...request({ platform: "facebook", credentials: identity.credentials, main: part("Connected") }),
        account: new SocialAccount({ ...account("facebook"), platformAccountId: identity.platformAccountId })
      })
      expect(result.platformPostId.startsWith(`${identity.platformAccountId}_`)).toBe(true)
      expect(fake.posts.map((p) => p.params["message"])).toEqual(["Connected"])
    }))

  it.scopedLive("text with a link: /feed with message and link, the Page token; permalink_url as the URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(fbRequest(part("Read this"), { link: "https://example.com/article" }))
      const post = fake.posts[0]!
      expect(post.kind).toBe("feed")
      expect(post.params).toMatchObject({
        message: "Read this",
        link: "https://example.com/article",
        published: "true"
      })
      expect(post.id).toMatch(new RegExp(`^${pageId}_\\d+$`))
      expect(result).toEqual({
        platformPostId: post.id,
        platformPostUrl: `https://www.facebook.com/${pageId}/posts/pfbid0${post.id.split("_")[1]}`
      })
      expect(routes(fake)).toEqual(["POST /v26.0/{page}/feed", "GET /v26.0/{id}"])
      expect(fake.server.requests[0]!.form?.get("access_token")).toBe(token)
    }))

  it.scopedLive("one photo by public URL: /photos with url and caption; the post_id is the post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        fbRequest(part("A photo", [photo({ url: "https://media.example.com/p.jpg" })]))
      )
      expect(paramsOf(fake.server.requests[0]!)).toEqual({
        caption: "A photo",
        published: "true",
        url: "https://media.example.com/p.jpg"
      })
      expect(result.platformPostId).toBe(fake.posts[0]!.id)
      expect(fake.posts[0]!.kind).toBe("photo")
    }))

  it.scopedLive("alt text: a photo carries its medium's alt text as alt_text_custom, by URL and by bytes", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(fbRequest(part("Album", [
        { ...photo({ url: "https://media.example.com/1.jpg" }), altText: "A red kite" },
        { ...photo({ seed: 2, filename: "b.jpg" }), altText: "Waves at dusk" }
      ])))
      expect(paramsOf(fake.server.requests[0]!)["alt_text_custom"]).toBe("A red kite")
      expect([...fake.photos.values()][1]!.params["alt_text_custom"]).toBe("Waves at dusk")
      yield* client.publish(fbRequest(part("Plain", [photo({ url: "https://media.example.com/2.jpg" })])))
      const plain = paramsOf(fake.server.requests.filter((r) => r.path.endsWith("/photos")).at(-1)!)
      expect(plain["url"]).toBe("https://media.example.com/2.jpg")
      expect(plain["alt_text_custom"]).toBeUndefined()
    }))

  it.scopedLive("one photo without a public URL: its bytes as the multipart source", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(fbRequest(part("Bytes", [photo({ seed: 9 })])))
      const sent = [...fake.photos.values()][0]!
      expect(sent.bytes).toEqual(bytesOf(300, 9))
      expect(sent.params["caption"]).toBe("Bytes")
    }))

  it.scopedLive("several photos: each unpublished, then /feed with attached_media in order; a link goes in the text", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        fbRequest(
          part("Album", [photo({ url: "https://media.example.com/1.jpg" }), photo({ seed: 2, filename: "b.jpg" })]),
          { link: "https://example.com/x" }
        )
      )
      expect(routes(fake)).toEqual([
        "POST /v26.0/{page}/photos",
        "POST /v26.0/{page}/photos",
        "POST /v26.0/{page}/feed",
        "GET /v26.0/{id}"
      ])
      const ids = [...fake.photos.values()].map((p) => p.id)
      expect([...fake.photos.values()].every((p) => !p.published)).toBe(true)
      const feed = paramsOf(fake.server.requests[2]!)
      expect(JSON.parse(feed["attached_media"]!)).toEqual(ids.map((id) => ({ media_fbid: id })))
      expect(feed["message"]).toBe("Album\n\nhttps://example.com/x")
      expect(feed["link"]).toBeUndefined()
      expect(result.platformPostId).toBe(fake.posts[0]!.id)
    }))

  it.scopedLive("a video defaults to a reel: start, rupload with OAuth/offset/file_size, finish PUBLISHED, processing polled", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(fbRequest(part("My reel", [clip()])))
      expect(routes(fake)).toEqual([
        "POST /v26.0/{page}/video_reels",
        "POST /video-upload/v26.0/{id}",
        "POST /v26.0/{page}/video_reels",
        "GET /v26.0/{id}", // processing
        "GET /v26.0/{id}", // processing
        "GET /v26.0/{id}", // ready
        "GET /v26.0/{id}" // permalink
      ])
      const upload = fake.server.requests[1]!
      expect(upload.headers.authorization).toBe(`OAuth ${token}`)
      expect(upload.headers["offset"]).toBe("0")
      expect(upload.headers["file_size"]).toBe("2000")
      const reel = [...fake.videos.values()][0]!
      expect(reel.bytes).toEqual(bytesOf(2000, 5))
      expect(reel.params).toMatchObject({ upload_phase: "finish", video_state: "PUBLISHED", description: "My reel" })
      expect(result).toEqual({ platformPostId: reel.id, platformPostUrl: `https://www.facebook.com/reel/${reel.id}/` })
    }))

  it.scopedLive("a reel with a public URL sends file_url instead of the bytes", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(fbRequest(part("By URL", [clip("clip.mp4", "https://media.example.com/v.mp4")])))
      const reel = [...fake.videos.values()][0]!
      expect(reel.fileUrl).toBe("https://media.example.com/v.mp4")
      expect(fake.server.requests[1]!.body.length).toBe(0)
    }))

  it.scopedLive("videoType video: /videos with the multipart source, processing polled, absolute permalink", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(fbRequest(part("Long form", [clip()]), { videoType: "video" }))
      const video = [...fake.videos.values()][0]!
      expect(video.kind).toBe("video")
      expect(video.bytes).toEqual(bytesOf(2000, 5))
      expect(video.params).toMatchObject({ description: "Long form", published: "true" })
      expect(routes(fake).filter((r) => r === "GET /v26.0/{id}")).toHaveLength(4)
      expect(result.platformPostUrl).toBe(`https://www.facebook.com/${pageId}/videos/${video.id}/`)
    }))

  it.scopedLive("without videoType: a vertical short video is a reel, a landscape or long one a video; reel when asked only if it can be", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const file = (width: number, height: number, seconds: number) =>
        media({ kind: "video", mimeType: "video/mp4", bytes: mp4({ width, height, seconds, size: 3000 }) })
      yield* client.publish(fbRequest(part("vertical", [file(1080, 1920, 30)])))
      yield* client.publish(fbRequest(part("landscape", [file(1920, 1080, 30)])))
      yield* client.publish(fbRequest(part("long", [file(1080, 1920, 300)])))
      yield* client.publish(fbRequest(part("asked", [file(1080, 1920, 60)]), { videoType: "reel" }))
      expect(fake.posts.map((p) => `${p.kind} ${p.params["description"]}`)).toEqual([
        "reel vertical",
        "video landscape",
        "video long",
        "reel asked"
      ])
      // A reel asked for a video that cannot be one: a clear media error before any upload.
      const before = fake.server.requests.length
      for (const [width, height, seconds] of [[1920, 1080, 30], [1080, 1920, 300]] as const) {
        const error = yield* Effect.flip(
          client.publish(fbRequest(part("not a reel", [file(width, height, seconds)]), { videoType: "reel" }))
        )
        expect(error.kind).toBe("media")
        expect(error.message).toContain("cannot be a reel")
        expect(error.message).toContain("settings.videoType to video")
      }
      expect(fake.server.requests).toHaveLength(before)
    }))

  it.scopedLive("metrics: reactions, comments and shares of a post; a video without shares; 190 is auth", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const post = yield* client.publish(fbRequest(part("Count me"), { firstComment: "one" }))
      fake.posts[0]!.reactions = 12
      fake.posts[0]!.shares = 3
      const credentials = Redacted.make({ access_token: token, page_id: pageId })
      expect(yield* client.metrics!(credentials, post.platformPostId)).toMatchObject({
        likes: 12,
        comments: 1,
        shares: 3,
        views: 0
      })
      const reel = yield* client.publish(fbRequest(part("reel", [clip()])))
      expect(yield* client.metrics!(credentials, reel.platformPostId)).toMatchObject({
        likes: 0,
        comments: 0,
        shares: 0
      })
      fake.revoked.add(token)
      expect((yield* Effect.flip(client.metrics!(credentials, post.platformPostId))).kind).toBe("auth")
    }))

  it.scopedLive("a video that fails processing is a media error with Facebook's reason", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const error = yield* Effect.flip(
        client.publish(fbRequest(part("bad", [clip("fail-processing.mp4")]), { videoType: "video" }))
      )
      expect(error.kind).toBe("media")
      expect(error.message).toContain("format that we don't support")
    }))

  it.scopedLive("a video still processing after the last poll is reported published (it is out)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.videoPolls = 50
      const result = yield* client.publish(fbRequest(part("slow", [clip()])))
      expect(result.platformPostId).toBe([...fake.videos.values()][0]!.id)
    }))

  it.scopedLive("first comment: /{post-id}/comments after the post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(fbRequest(part("main"), { firstComment: "first!" }))
      expect(fake.posts[0]!.comments).toEqual(["first!"])
    }))

  it.scopedLive("a failing first comment or permalink read never fails the published post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /comments", FacebookApiFake.unavailable)
      fake.failNext("GET /{id}", FacebookApiFake.unavailable)
      const result = yield* client.publish(fbRequest(part("main"), { firstComment: "hi" }))
      expect(result).toMatchObject({
        platformPostId: fake.posts[0]!.id,
        platformPostUrl: `https://www.facebook.com/${fake.posts[0]!.id}`
      })
    }))

  it.scopedLive("errors: 190 auth, 200 auth, 506 duplicate, 32 rate_limit with the BUC delay, 368/1390008 rate_limit, 368/1346003 permanent, 1366046 media, code 2 transient", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const fail = (text: string, media: ReturnType<typeof photo> | undefined = undefined) =>
        Effect.flip(client.publish(fbRequest(part(text, media === undefined ? [] : [media]))))
      expect((yield* fail("x #fail-dup")).kind).toBe("duplicate")
      const rate = yield* fail("x #fail-rate")
      expect(rate.kind).toBe("rate_limit")
      expect(rate.retryAfterSeconds).toBe(300)
      expect((yield* fail("x #fail-fast")).kind).toBe("rate_limit")
      expect((yield* fail("x #fail-policy")).kind).toBe("permanent")
      expect((yield* fail("x #fail-perm")).kind).toBe("auth")
      expect((yield* fail("x #fail-500")).kind).toBe("transient")
      expect((yield* fail("x", photo({ url: "https://media.example.com/fail-photo.jpg" }))).kind).toBe("media")
      expect(fake.posts).toHaveLength(0)
      fake.revoked.add(token)
      const auth = yield* fail("x")
      expect(auth.kind).toBe("auth")
      expectNoSecret(auth)
    }))

  it.scopedLive("a message too long is too_long; documents and mixed video are refused before any call", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /feed", metaError(400, "(#100) Name parameter too long", 100))
      expect((yield* Effect.flip(client.publish(fbRequest(part("x"))))).kind).toBe("too_long")
      const before = fake.server.requests.length
      const doc = media({ kind: "document", mimeType: "application/pdf", bytes: bytesOf(10, 1) })
      expect((yield* Effect.flip(client.publish(fbRequest(part("x", [doc]))))).kind).toBe("media")
      expect((yield* Effect.flip(client.publish(fbRequest(part("x", [clip(), photo()]))))).kind).toBe("media")
      expect(fake.server.requests.length).toBe(before)
    }))

  it.scopedLive("an error body that echoes the token is scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /feed", metaError(400, `Malformed access token ${token}`, 190))
      const error = yield* Effect.flip(client.publish(fbRequest(part("hi"))))
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
      expect(error.message).toContain("[redacted]")
    }))

  it.scopedLive("the fake refuses a reel request that breaks Meta's documented rules, naming the page", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const started = yield* Effect.promise(() =>
        fetch(`${fake.server.url}/v26.0/${FacebookApiFake.pageId}/video_reels`, {
          method: "POST",
          body: new URLSearchParams({ upload_phase: "start", access_token: FacebookApiFake.pageToken })
        }).then((r) => r.json() as Promise<{ video_id: string; upload_url: string }>)
      )
      const upload = yield* Effect.promise(() =>
        fetch(started.upload_url, {
          method: "POST",
          headers: { authorization: `OAuth ${FacebookApiFake.pageToken}`, offset: "0", file_size: "999" },
          body: new Uint8Array(10)
        }).then(async (r) => ({ status: r.status, body: await r.json() as { debug_info: { message: string } } }))
      )
      expect(upload.status).toBe(400)
      expect(upload.body.debug_info.message).toContain("reels-publishing")
      expect(fake.rules.violations).toHaveLength(1)
      fake.rules.violations.length = 0
    }))
})

describe("Facebook findPublished (the Page's posts and videos)", () => {
  const lookup = (content: string, sinceMs: number, untilMs: number) => ({
    account: fbRequest(part(content)).account,
    credentials: Redacted.make({ access_token: token, page_id: pageId }),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })

  it.scopedLive("a text post, a photo with an appended link and a video are found; other text is absent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const before = Date.now()
      const text = yield* client.publish(fbRequest(part("Opening hours")))
      const linked = yield* client.publish(
        fbRequest(part("New menu", [photo({ url: "https://cdn.example/m.jpg" })]), { link: "https://menu.example/" })
      )
      const clip = mp4({ width: 1920, height: 1080, seconds: 600, size: 4000 })
      const video = yield* client.publish(
        fbRequest(
          part("Kitchen tour", [media({ kind: "video", mimeType: "video/mp4", bytes: clip, filename: "tour.mp4" })])
        )
      )
      const after = Date.now()
      for (const [content, sent] of [["Opening hours", text], ["New menu", linked], ["Kitchen tour", video]] as const) {
        expect(yield* client.findPublished!(lookup(content, before, after))).toMatchObject({
          _tag: "Found",
          platformPostId: sent.platformPostId
        })
      }
      expect(yield* client.findPublished!(lookup("Closed today", before, after))).toEqual({ _tag: "Absent" })
      const listed = fake.server.requests.filter((r) => r.method === "GET" && r.path === `/v26.0/${pageId}/posts`)
      expect(Number(listed[0]!.query.get("since"))).toBeLessThanOrEqual(before / 1000)
    }))

  it.scopedLive("a rate limit or an error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("GET /posts", metaError(400, "(#32) Page request limit reached", 32))
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("rate_limit")
      fake.failNext("GET /videos", FacebookApiFake.unavailable)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("transient")
    }))
})
