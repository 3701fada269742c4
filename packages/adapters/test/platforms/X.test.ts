import { describe, expect, it } from "@effect/vitest"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as X from "../../src/platforms/X.js"
import * as FakeServer from "./fakes/FakeServer.js"
import * as XFake from "./fakes/XFake.js"
import { bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = XFake.accessToken

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => XFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  const client = yield* X.make({ apiUrl: fake.server.url, chunkSize: 1000, mediaPollInterval: "5 millis" }).pipe(
    Effect.provide(HttpLive)
  )
  return { fake, client: withFollowUps(client), bare: client }
})

const stored = {
  access_token: token,
  refresh_token: "cmVmcmVzaC10b2tlbi14eXo6MTc2NzIyNTYwMDoxOjE6cnQ6MQ",
  expires_at: "1767232800000",
  user_id: XFake.userId,
  username: XFake.username
}

const xRequest = (main: ReturnType<typeof part>, extra: Partial<Parameters<typeof request>[0]> = {}) =>
  request({ platform: "x", credentials: stored, main, ...extra })

const expectNoSecret = (error: PublishError) => {
  expect(error.message).not.toContain(token)
  expect(error.message).not.toContain(stored.refresh_token)
}

const tweets = (fake: XFake.XFake) => fake.server.requests.filter((r) => r.method === "POST" && r.path === "/2/tweets")

describe("X adapter against the API v2 fake", () => {
  it.scopedLive("text post: POST /2/tweets with the Bearer token, returns the id and the x.com URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(xRequest(part("Hello from Herald 👋")))
      const id = fake.posts[0]!.id
      expect(result).toEqual({ platformPostId: id, platformPostUrl: `https://x.com/herald_hq/status/${id}` })
      const sent = tweets(fake)
      expect(sent).toHaveLength(1)
      expect(sent[0]!.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(sent[0]!.headers["content-type"]).toContain("application/json")
      expect(sent[0]!.json).toEqual({ text: "Hello from Herald 👋" })
    }))

  it.scopedLive("the URL falls back to the account name, then to /i/web/status", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const { username: _, ...withoutUsername } = stored
      const byName = yield* client.publish(request({ platform: "x", credentials: withoutUsername, main: part("a") }))
      expect(byName.platformPostUrl).toBe(`https://x.com/acct/status/${byName.platformPostId}`)
      expect(X.postUrl(undefined, "42")).toBe("https://x.com/i/web/status/42")
    }))

  it.scopedLive("thread of 3: each part replies to the one before, in order; the result is the first post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        xRequest(part("1/3 start"), { thread: [part("2/3 middle"), part("3/3 end")] })
      )
      const sent = tweets(fake).map((r) => r.json as Record<string, unknown>)
      expect(sent.map((b) => b["text"])).toEqual(["1/3 start", "2/3 middle", "3/3 end"])
      const [first, second, third] = fake.posts
      expect(sent[0]!["reply"]).toBeUndefined()
      expect(sent[1]!["reply"]).toEqual({ in_reply_to_tweet_id: first!.id })
      expect(sent[2]!["reply"]).toEqual({ in_reply_to_tweet_id: second!.id })
      expect(third!.text).toBe("3/3 end")
      expect(result.platformPostId).toBe(first!.id)
    }))

  it.scopedLive("publish sends the main post only; thread parts and the first comment are its follow-ups", () =>
    Effect.gen(function*() {
      const { bare, fake } = yield* setup
      const result = yield* bare.publish(
        xRequest(part("main"), { thread: [part("two")], settings: { firstComment: "see below" } })
      )
      expect(fake.posts.map((p) => p.text)).toEqual(["main"])
      expect(result.followUps).toBeDefined()
      yield* result.followUps!
      expect(fake.posts.map((p) => p.text)).toEqual(["main", "two", "see below"])
      const plain = yield* bare.publish(xRequest(part("alone")))
      expect(plain.followUps).toBeUndefined()
    }))

  it.scopedLive("first comment replies to the main post; reply settings go on the post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(
        xRequest(part("main"), { settings: { firstComment: "link in here", replySettings: "following" } })
      )
      const sent = tweets(fake).map((r) => r.json as Record<string, unknown>)
      expect(sent[0]).toEqual({ text: "main", reply_settings: "following" })
      expect(sent[1]).toEqual({ text: "link in here", reply: { in_reply_to_tweet_id: fake.posts[0]!.id } })
      // "everyone" is X's default: nothing is sent
      yield* client.publish(xRequest(part("second"), { settings: { replySettings: "everyone" } }))
      expect(tweets(fake)[2]!.json).toEqual({ text: "second" })
    }))

  it.scopedLive("image: uploaded as multipart to /2/media/upload, then posted with its media id and alt text", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const bytes = bytesOf(3000, 1)
      yield* client.publish(xRequest(
        part("A picture", [media({ kind: "image", mimeType: "image/png", bytes, filename: "cat.png" })]),
        { settings: { mediaAltText: "A cat on a mat" } }
      ))
      const paths = fake.server.requests.map((r) => `${r.method} ${r.path}`)
      expect(paths).toEqual(["POST /2/media/upload", "POST /2/media/metadata", "POST /2/tweets"])
      const uploadRequest = fake.server.requests[0]!
      expect(uploadRequest.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(uploadRequest.form!.get("media_category")).toBe("tweet_image")
      expect(FakeServer.fileName(uploadRequest.form, "media")).toBe("cat.png")
      expect(yield* Effect.promise(() => FakeServer.fileBytes(uploadRequest.form, "media"))).toEqual(bytes)
      const [medium] = [...fake.media.values()]
      expect(medium!.altText).toBe("A cat on a mat")
      expect(tweets(fake)[0]!.json).toEqual({ text: "A picture", media: { media_ids: [medium!.id] } })
    }))

  it.scopedLive("alt text: each medium's own alt text goes to /2/media/metadata when mediaAltText is not set", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(xRequest(part("Two", [
        { ...media({ kind: "image", mimeType: "image/png", bytes: bytesOf(3000, 1) }), altText: "A red kite" },
        media({ kind: "image", mimeType: "image/png", bytes: bytesOf(3000, 2) })
      ])))
      const metadata = fake.server.requests.filter((r) => r.path === "/2/media/metadata")
      expect(metadata).toHaveLength(1)
      const [first, second] = [...fake.media.values()]
      expect(metadata[0]!.json).toEqual({ id: first!.id, metadata: { alt_text: { text: "A red kite" } } })
      expect(first!.altText).toBe("A red kite")
      expect(second!.altText).toBeUndefined()
    }))

  it.scopedLive("video: chunked initialize/append/finalize, STATUS polls until succeeded, then the post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const bytes = bytesOf(2500, 2)
      yield* client.publish(xRequest(part("A clip", [media({ kind: "video", mimeType: "video/mp4", bytes })])))
      const [medium] = [...fake.media.values()]
      const paths = fake.server.requests.map((r) => `${r.method} ${r.path}`)
      expect(paths).toEqual([
        "POST /2/media/upload/initialize",
        `POST /2/media/upload/${medium!.id}/append`,
        `POST /2/media/upload/${medium!.id}/append`,
        `POST /2/media/upload/${medium!.id}/append`,
        `POST /2/media/upload/${medium!.id}/finalize`,
        "GET /2/media/upload",
        "GET /2/media/upload",
        "GET /2/media/upload",
        "POST /2/tweets"
      ])
      expect(fake.server.requests[0]!.json).toEqual({
        media_type: "video/mp4",
        total_bytes: 2500,
        media_category: "tweet_video"
      })
      expect([...medium!.segments.keys()]).toEqual([0, 1, 2])
      const joined = new Uint8Array([...medium!.segments.values()].flatMap((s) => [...s]))
      expect(joined).toEqual(bytes)
      expect(fake.server.requests[5]!.query.get("command")).toBe("STATUS")
      expect(tweets(fake)[0]!.json).toEqual({ text: "A clip", media: { media_ids: [medium!.id] } })
    }))

  it.scopedLive("video processing failed: a media error, and nothing is posted", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /2/media/upload/{id}/finalize", {
        status: 200,
        body: {
          data: { id: "1", processing_info: { state: "failed" } }
        }
      })
      const error = yield* client.publish(
        xRequest(part("clip"), {
          thread: [part("bad", [media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(10, 3) })])]
        })
      ).pipe(Effect.flip)
      expect(error.kind).toBe("media")
      expect(error.message).toContain("processing failed")
      expect(tweets(fake)).toHaveLength(0)
    }))

  it.scopedLive("media that X cannot take is refused before any call", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const image = () => media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(10, 4) })
      const five = yield* client.publish(xRequest(part("many", [image(), image(), image(), image(), image()]))).pipe(
        Effect.flip
      )
      expect(five.kind).toBe("media")
      const mixed = yield* client.publish(
        xRequest(part("mixed", [image(), media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(10, 5) })]))
      ).pipe(Effect.flip)
      expect(mixed.kind).toBe("media")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("401 (revoked token) is auth, without the token in the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.revoked.add(token)
      const error = yield* client.publish(xRequest(part("hello"))).pipe(Effect.flip)
      expect(error.kind).toBe("auth")
      expect(error.message).toBe("X: Unauthorized")
      expectNoSecret(error)
    }))

  it.scopedLive("429 is rate_limit with the delay until x-rate-limit-reset", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.resetAt = Math.floor(Date.now() / 1000) + 600
      const error = yield* client.publish(xRequest(part("busy #fail-429"))).pipe(Effect.flip)
      expect(error.kind).toBe("rate_limit")
      expect(error.retryable).toBe(true)
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(598)
      expect(error.retryAfterSeconds).toBeLessThanOrEqual(600)
      expect(error.message).toContain("Too Many Requests")
    }))

  it("rate-limit delay: the exhausted 24-hour window wins, then retry-after", () => {
    const now = 1_767_225_600_000
    const nowS = now / 1000
    expect(X.retryAfterSeconds({
      "x-rate-limit-remaining": "5",
      "x-rate-limit-reset": String(nowS + 60),
      "x-user-limit-24hour-remaining": "0",
      "x-user-limit-24hour-reset": String(nowS + 7200)
    }, now)).toBe(7200)
    expect(X.retryAfterSeconds({ "retry-after": "30" }, now)).toBe(30)
    expect(X.retryAfterSeconds({ "x-rate-limit-reset": String(nowS + 90) }, now)).toBe(90)
    expect(X.retryAfterSeconds({}, now)).toBeUndefined()
  })

  it.scopedLive("duplicate content (403) is a non-retryable duplicate, with X's detail", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const error = yield* client.publish(xRequest(part("again #fail-dup"))).pipe(Effect.flip)
      expect(error.kind).toBe("duplicate")
      expect(error.retryable).toBe(false)
      expect(error.message).toContain("duplicate content")
    }))

  it.scopedLive("too long (400 errors[]) is too_long; invalid media ids are media", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const long = yield* client.publish(xRequest(part("x".repeat(281)))).pipe(Effect.flip)
      expect(long.kind).toBe("too_long")
      expect(long.message).toContain("Tweet text is too long")
      const ids = yield* client.publish(xRequest(part("pic #fail-media-ids"))).pipe(Effect.flip)
      expect(ids.kind).toBe("media")
    }))

  it.scopedLive("5xx is transient and retryable", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const error = yield* client.publish(xRequest(part("down #fail-500"))).pipe(Effect.flip)
      expect(error.kind).toBe("transient")
      expect(error.retryable).toBe(true)
    }))

  it.scopedLive("an error body that echoes the token never carries it into the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /2/tweets", problem403WithToken)
      const error = yield* client.publish(xRequest(part("hi"))).pipe(Effect.flip)
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("Unsupported Authentication")
      expectNoSecret(error)
    }))

  it.scopedLive("a thread part refused after the main post is out does not fail the publish", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(xRequest(part("main"), { thread: [part("two #fail-500"), part("three")] }))
      expect(result.platformPostId).toBe(fake.posts[0]!.id)
      expect(fake.posts.map((p) => p.text)).toEqual(["main"])
    }))

  it.scopedLive("a missing access token is auth without any call", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* client.publish(request({ platform: "x", credentials: { username: "a" }, main: part("a") }))
        .pipe(Effect.flip)
      expect(error.kind).toBe("auth")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("metrics: public_metrics of the post", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const published = yield* client.publish(xRequest(part("measured")))
      const metrics = yield* client.metrics!(Redacted.make(stored), published.platformPostId)
      expect(metrics).toMatchObject({ views: 120, impressions: 120, likes: 5, comments: 3, shares: 3, saves: 4 })
      const gone = yield* client.metrics!(Redacted.make(stored), "1").pipe(Effect.flip)
      expect(gone.kind).toBe("permanent")
    }))

  it.scopedLive("a media post without text sends text \"\" (the description's backend refuses an absent text)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(
        xRequest(part("", [media({ kind: "image", mimeType: "image/png", bytes: bytesOf(500, 4) })]))
      )
      const [medium] = [...fake.media.values()]
      expect(tweets(fake)[0]!.json).toEqual({ text: "", media: { media_ids: [medium!.id] } })
    }))

  it.scopedLive("the one-request image upload sends only media and media_category, the type on the file part", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(
        xRequest(part("pic", [media({ kind: "image", mimeType: "image/webp", bytes: bytesOf(700, 5) })]))
      )
      const upload = fake.server.requests.find((r) => r.path === "/2/media/upload")!
      expect([...upload.form!.keys()].sort()).toEqual(["media", "media_category"])
      expect((upload.form!.get("media") as File).type).toBe("image/webp")
    }))

  it.scopedLive("metrics ask post.fields (the description's name, not tweet.fields)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const published = yield* client.publish(xRequest(part("fields")))
      yield* client.metrics!(Redacted.make(stored), published.platformPostId)
      const lookup = fake.server.requests.find((r) => r.method === "GET" && r.path === "/2/tweets")!
      expect(lookup.query.get("post.fields")).toBe("public_metrics")
      expect(lookup.query.has("tweet.fields")).toBe(false)
    }))

  it("metrics read reposts as repost_count (the description) or retweet_count (the older answer)", () => {
    const base = { reply_count: 3, like_count: 5, quote_count: 1, bookmark_count: 4, impression_count: 120 }
    expect(X.metricsOf({ public_metrics: { ...base, repost_count: 7 } }).shares).toBe(8)
    expect(X.metricsOf({ public_metrics: { ...base, retweet_count: 6 } }).shares).toBe(7)
  })

  it.scopedLive("the fake refuses a request that breaks X's description, and the test would fail on it", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const send = (path: string, body: unknown, query = "") =>
        Effect.promise(() =>
          fetch(`${fake.server.url}${path}${query}`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify(body)
          }).then((r) => r.status)
        )
      // An unknown field, a reply_settings value outside the enum, a media_category outside the enum.
      expect(yield* send("/2/tweets", { text: "a", hidden: true })).toBe(400)
      expect(yield* send("/2/tweets", { text: "a", reply_settings: "everyone" })).toBe(400)
      expect(
        yield* send("/2/media/upload/initialize", { media_type: "video/mp4", total_bytes: 1, media_category: "reel" })
      )
        .toBe(400)
      expect(yield* send("/2/tweets", { text: "a" }, "?tweet.fields=id")).toBe(400)
      const violations = fake.server.takeViolations()
      expect(violations).toHaveLength(4)
      expect(violations[0]!.problems.join(" ")).toContain("additional properties")
      expect(violations[1]!.problems.join(" ")).toContain("allowed values")
      expect(violations[3]!.problems.join(" ")).toContain("tweet.fields is not in the description")
      expect(fake.posts).toHaveLength(0)
    }))

  it.scopedLive("metricsBatch: several posts in one GET /2/tweets?ids=, posts not found left out", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const a = yield* client.publish(xRequest(part("first")))
      const b = yield* client.publish(xRequest(part("second")))
      const before = fake.server.requests.length
      const found = yield* client.metricsBatch!(Redacted.make(stored), [a.platformPostId, "1", b.platformPostId])
      expect(fake.server.requests.length - before).toBe(1)
      expect([...found.keys()].sort()).toEqual([a.platformPostId, b.platformPostId].sort())
      expect(found.get(a.platformPostId)).toMatchObject({ views: 120, likes: 5, comments: 3, shares: 3, saves: 4 })
      expect(client.metricsBatchSize).toBe(100)
    }))
})

const problem403WithToken = XFake.problem(
  403,
  "Unsupported Authentication",
  `Authenticating with OAuth 2.0 Application-Only is forbidden for this endpoint. Bearer ${token}`,
  "https://api.twitter.com/2/problems/unsupported-authentication"
)

describe("X findPublished (the user's timeline)", () => {
  const lookup = (content: string, sinceMs: number, untilMs: number) => ({
    account: xRequest(part(content)).account,
    credentials: Redacted.make(stored),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  /** A post another client made at `at`. */
  const other = (fake: XFake.XFake, id: string, text: string, at: number, body: Record<string, unknown> = {}) =>
    fake.posts.push({ id, text, body: { text, ...body }, createdAt: at })

  it.scopedLive("a post in the window is found by its text as sent, though X shows it escaped and with t.co links", () =>
    Effect.gen(function*() {
      const { bare: client, fake } = yield* setup
      const text = "Q&A <today> at example.com/live and https://herald.example/a?b=1"
      const before = Date.now()
      const sent = yield* client.publish(xRequest(part(text)))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup(text, before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: sent.platformPostUrl
      })
      const listed = fake.server.requests.filter((r) => r.path === `/2/users/${XFake.userId}/tweets`)
      expect(listed[0]!.headers["authorization"]).toBe(`Bearer ${token}`)
      expect(listed[0]!.query.get("exclude")).toBe("replies,retweets")
      expect(Date.parse(listed[0]!.query.get("start_time")!)).toBeLessThanOrEqual(before)
      // What the timeline answered really differs from what was sent.
      expect(XFake.shown(fake.posts[0]!)["text"]).not.toBe(text)
      expect(yield* client.findPublished!(lookup("another text", before, after))).toEqual({ _tag: "Absent" })
    }))

  it.scopedLive("a post with media is found though X appends the media link to its text", () =>
    Effect.gen(function*() {
      const { bare: client } = yield* setup
      const before = Date.now()
      const image = media({ kind: "image", mimeType: "image/png", bytes: bytesOf(300, 1) })
      const sent = yield* client.publish(xRequest(part("with a picture", [image])))
      expect(yield* client.findPublished!(lookup("with a picture", before, Date.now()))).toMatchObject({
        _tag: "Found",
        platformPostId: sent.platformPostId
      })
    }))

  it.scopedLive("the same text before the window, or as a reply, is not the attempt's post", () =>
    Effect.gen(function*() {
      const { bare: client, fake } = yield* setup
      const now = Date.now()
      other(fake, "1860000000000000901", "same words", now - 3_600_000)
      other(fake, "1860000000000000902", "same words", now, { reply: { in_reply_to_tweet_id: "1860000000000000901" } })
      expect(yield* client.findPublished!(lookup("same words", now - 120_000, now + 1_000))).toEqual({ _tag: "Absent" })
    }))

  it.scopedLive("pages until X has no more; more posts than it reads cannot be told", () =>
    Effect.gen(function*() {
      const { bare: client, fake } = yield* setup
      const now = Date.now()
      const sent = yield* client.publish(xRequest(part("deep")))
      for (let i = 0; i < 150; i++) other(fake, String(1870000000000000000n + BigInt(i)), `noise ${i}`, now + 30_000)
      expect(yield* client.findPublished!(lookup("deep", now - 1_000, now + 5_000))).toMatchObject({
        _tag: "Found",
        platformPostId: sent.platformPostId
      })
      expect(fake.server.requests.filter((r) => r.path.endsWith("/tweets") && r.method === "GET")).toHaveLength(2)
      for (let i = 150; i < 1_050; i++) {
        other(fake, String(1870000000000000000n + BigInt(i)), `noise ${i}`, now + 30_000)
      }
      expect((yield* client.findPublished!(lookup("absent", now - 1_000, now + 5_000)))._tag).toBe("Unknown")
    }))

  it.scopedLive("a media post without text is Unknown when another text-less post is in the window", () =>
    Effect.gen(function*() {
      const { bare: client, fake } = yield* setup
      const now = Date.now()
      expect(yield* client.findPublished!(lookup("", now - 1_000, now + 1_000))).toEqual({ _tag: "Absent" })
      other(fake, "1860000000000000903", "", now, { media: { media_ids: ["1870000000000000001"] } })
      expect((yield* client.findPublished!(lookup("", now - 1_000, now + 1_000)))._tag).toBe("Unknown")
    }))

  it.scopedLive("a rate limit or an error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { bare: client, fake } = yield* setup
      fake.failNext(`GET /2/users/${XFake.userId}/tweets`, XFake.tooManyRequests(fake.resetAt))
      const limited = yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))
      expect(limited.kind).toBe("rate_limit")
      fake.failNext(`GET /2/users/${XFake.userId}/tweets`, XFake.serviceUnavailable)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("transient")
    }))
})
