import { describe, expect, it } from "@effect/vitest"
import { SocialAccount } from "@herald/core/domain/Account"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Threads from "../../src/platforms/Threads.js"
import { metaError } from "../oauth/fakes/MetaFake.js"
import * as ThreadsApiFake from "./fakes/ThreadsApiFake.js"
import { account, bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = ThreadsApiFake.accessToken

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => ThreadsApiFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  // Every request must keep the documented rules of the fake's rulebook, whatever the test checks.
  yield* Effect.addFinalizer(() => Effect.sync(() => fake.rules.expectNone()))
  const client = yield* Threads.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 }).pipe(
    Effect.provide(HttpLive)
  )
  return { fake, client: withFollowUps(client) }
})

const stored = {
  access_token: token,
  user_id: ThreadsApiFake.userId,
  username: ThreadsApiFake.username,
  expires_at: "1767232800000"
}

const threadsRequest = (main: ReturnType<typeof part>, extra: Partial<Parameters<typeof request>[0]> = {}) => ({
  ...request({ platform: "threads", credentials: stored, main, ...extra }),
  account: new SocialAccount({ ...account("threads"), platformAccountId: ThreadsApiFake.userId })
})

const image = (url: string | undefined) =>
  media({
    kind: "image",
    mimeType: "image/jpeg",
    bytes: bytesOf(100, 1),
    filename: "photo.jpg",
    ...(url === undefined ? {} : { publicUrl: url })
  })

const routes = (fake: ThreadsApiFake.ThreadsFake) =>
  fake.server.requests.map((r) =>
    `${r.method} ${r.path.replace(/\/\d+/g, (s) => s === `/${ThreadsApiFake.userId}` ? "/{user}" : "/{id}")}`
  )

const sentParams = (r: { form: FormData | undefined }) => {
  const out: Record<string, string> = {}
  r.form?.forEach((v, k) => {
    if (typeof v === "string" && k !== "access_token") out[k] = v
  })
  return out
}

const expectNoSecret = (error: PublishError) => expect(error.message).not.toContain(token)

describe("Threads adapter against the Threads API fake", () => {
  it.scopedLive("text post: TEXT container, polled until FINISHED, published; id and permalink", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(threadsRequest(part("Hello from Herald 👋")))
      const post = fake.posts[0]!
      expect(result).toEqual({
        platformPostId: post.id,
        platformPostUrl: `https://www.threads.net/@herald_threads/post/${post.shortcode}`
      })
      expect(routes(fake)).toEqual([
        "POST /v1.0/{user}/threads",
        "GET /v1.0/{id}", // IN_PROGRESS
        "GET /v1.0/{id}", // FINISHED
        "POST /v1.0/{user}/threads_publish",
        "GET /v1.0/{id}"
      ])
      const create = fake.server.requests[0]!
      expect(sentParams(create)).toEqual({ media_type: "TEXT", text: "Hello from Herald 👋" })
      expect(create.form?.get("access_token")).toBe(token)
      expect(fake.server.requests[3]!.form?.get("creation_id")).toBe(post.container.id)
    }))

  it.scopedLive("image with a public URL: IMAGE container with image_url and the text", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(threadsRequest(part("A picture", [image("https://media.example.com/m/1.jpg")])))
      expect(sentParams(fake.server.requests[0]!)).toEqual({
        media_type: "IMAGE",
        image_url: "https://media.example.com/m/1.jpg",
        text: "A picture"
      })
      expect(fake.posts).toHaveLength(1)
    }))

  it.scopedLive("link preview: a text post with a link carries its first link as link_attachment; media or no link, none", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(threadsRequest(part("Read https://herald.example.com/notes?id=1, then herald.dev too.")))
      expect(sentParams(fake.server.requests[0]!)).toEqual({
        media_type: "TEXT",
        text: "Read https://herald.example.com/notes?id=1, then herald.dev too.",
        link_attachment: "https://herald.example.com/notes?id=1"
      })
      // A bare domain is a link too (read as https), as on Bluesky.
      yield* client.publish(threadsRequest(part("Docs at herald.dev/start")))
      const creates = () => fake.server.requests.filter((r) => r.method === "POST" && r.path.endsWith("/threads"))
      expect(sentParams(creates()[1]!)["link_attachment"]).toBe("https://herald.dev/start")
      yield* client.publish(
        threadsRequest(part("A picture of https://herald.example.com", [image("https://media.example.com/m/2.jpg")]))
      )
      expect(sentParams(creates()[2]!)).not.toHaveProperty("link_attachment")
      yield* client.publish(threadsRequest(part("No link here.")))
      expect(sentParams(creates()[3]!)).not.toHaveProperty("link_attachment")
    }))

  it.scopedLive("the fake refuses link_attachment on a media post and more than 5 links, as Threads documents", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const post = (params: Record<string, string>) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/v1.0/${ThreadsApiFake.userId}/threads`, {
            method: "POST",
            body: new URLSearchParams({ ...params, access_token: token })
          }).then(async (r) => ({ status: r.status, body: await r.json() as { error: { message: string } } }))
        )
      const onImage = yield* post({
        media_type: "IMAGE",
        image_url: "https://m.example.com/1.jpg",
        link_attachment: "https://a.example.com"
      })
      expect(onImage.status).toBe(400)
      expect(onImage.body.error.message).toContain("threads/posts#links")
      const many = yield* post({
        media_type: "TEXT",
        text: [1, 2, 3, 4, 5].map((n) => `https://l${n}.example.com`).join(" "),
        link_attachment: "https://l6.example.com"
      })
      expect(many.body.error.message).toContain("THREADS_API__LINK_LIMIT_EXCEEDED")
      expect(fake.rules.violations.map((v) => v.rule)).toEqual([
        "link_attachment is for text posts only (media_type TEXT)",
        "A post carries at most 5 links"
      ])
      fake.rules.violations.length = 0
    }))

  it.scopedLive("media without a public URL is refused before any request, naming HERALD_MEDIA_PUBLIC_URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* Effect.flip(client.publish(threadsRequest(part("A picture", [image(undefined)]))))
      expect(error.kind).toBe("media")
      expect(error.message).toContain("HERALD_MEDIA_PUBLIC_URL")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("carousel: children with is_carousel_item, each awaited, then a CAROUSEL container", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = media({
        kind: "video",
        mimeType: "video/mp4",
        bytes: bytesOf(100, 2),
        publicUrl: "https://media.example.com/m/2.mp4"
      })
      yield* client.publish(threadsRequest(part("Two things", [image("https://media.example.com/m/1.jpg"), video])))
      const creates = fake.server.requests.filter((r) => r.path.endsWith("/threads")).map(sentParams)
      const [first, second, parent] = [...fake.containers.values()]
      expect(creates).toEqual([
        { media_type: "IMAGE", image_url: "https://media.example.com/m/1.jpg", is_carousel_item: "true" },
        { media_type: "VIDEO", video_url: "https://media.example.com/m/2.mp4", is_carousel_item: "true" },
        { media_type: "CAROUSEL", children: `${first!.id},${second!.id}`, text: "Two things" }
      ])
      expect(fake.posts.map((p) => p.container.id)).toEqual([parent!.id])
    }))

  it.scopedLive("alt text: image and video containers carry their medium's alt_text", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const video = media({
        kind: "video",
        mimeType: "video/mp4",
        bytes: bytesOf(100, 2),
        publicUrl: "https://media.example.com/m/2.mp4"
      })
      yield* client.publish(threadsRequest(part("Two things", [
        { ...image("https://media.example.com/m/1.jpg"), altText: "A red kite" },
        { ...video, altText: "Waves at dusk" }
      ])))
      const creates = fake.server.requests.filter((r) => r.path.endsWith("/threads")).map(sentParams)
      expect(creates[0]!["alt_text"]).toBe("A red kite")
      expect(creates[1]!["alt_text"]).toBe("Waves at dusk")
      expect(creates[2]!["alt_text"]).toBeUndefined()
    }))

  it.scopedLive("first comment: a reply container (reply_to_id = the post) published after it; replyControl", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        threadsRequest(part("main"), { settings: { firstComment: "link in here", replyControl: "following" } })
      )
      const creates = fake.server.requests.filter((r) => r.path.endsWith("/threads")).map(sentParams)
      expect(creates).toEqual([
        { media_type: "TEXT", text: "main", reply_control: "accounts_you_follow" },
        {
          media_type: "TEXT",
          text: "link in here",
          reply_to_id: result.platformPostId,
          reply_control: "accounts_you_follow"
        }
      ])
      expect(fake.posts).toHaveLength(2)
      expect(result.platformPostId).toBe(fake.posts[0]!.id)
    }))

  it.scopedLive("a failing first comment does not fail the published post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(threadsRequest(part("main"), { settings: { firstComment: "#fail-500" } }))
      expect(result.platformPostId).toBe(fake.posts[0]!.id)
      expect(fake.posts).toHaveLength(1)
    }))

  it.scopedLive("code 190: auth, with the token nowhere in the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.revoked.add(token)
      const error = yield* Effect.flip(client.publish(threadsRequest(part("hi"))))
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
    }))

  it.scopedLive("code 4: rate_limit; too long: too_long; 5xx: transient", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      expect((yield* Effect.flip(client.publish(threadsRequest(part("x #fail-429"))))).kind).toBe("rate_limit")
      expect((yield* Effect.flip(client.publish(threadsRequest(part("x #fail-long"))))).kind).toBe("too_long")
      expect((yield* Effect.flip(client.publish(threadsRequest(part("x #fail-500"))))).kind).toBe("transient")
    }))

  it.scopedLive("container ERROR: a media error with the status, nothing published", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* Effect.flip(
        client.publish(threadsRequest(part("clip", [image("https://media.example.com/fail-fetch.jpg")])))
      )
      expect(error.kind).toBe("media")
      expect(error.message).toContain("ERROR")
      expect(error.message).toContain("FAILED_DOWNLOADING_VIDEO")
      expect(fake.posts).toHaveLength(0)
    }))

  it.scopedLive("a container stuck IN_PROGRESS is transient after maxPolls", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.imagePolls = 50
      const error = yield* Effect.flip(client.publish(threadsRequest(part("slow"))))
      expect(error.kind).toBe("transient")
      expect(fake.posts).toHaveLength(0)
    }))

  it.scopedLive("an error body that echoes the token is scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /threads", metaError(400, `Malformed access token ${token}`, 190))
      const error = yield* Effect.flip(client.publish(threadsRequest(part("hi"))))
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
      expect(error.message).toContain("[redacted]")
    }))

  it.scopedLive("metrics: GET /{media-id}/insights; replies are comments, reposts + quotes + shares are shares", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const { platformPostId } = yield* client.publish(threadsRequest(part("counted")))
      const metrics = yield* client.metrics!(Redacted.make(stored), platformPostId)
      expect(metrics).toMatchObject({
        views: 1520,
        likes: 87,
        comments: 12,
        shares: 10,
        impressions: 0,
        saves: 0,
        clicks: 0
      })
      const call = fake.server.requests.find((r) => r.path.endsWith("/insights"))!
      expect(call.method).toBe("GET")
      expect(call.path).toBe(`/v1.0/${platformPostId}/insights`)
      expect(call.query.get("metric")).toBe("views,likes,replies,reposts,quotes,shares")
    }))

  it.scopedLive("metrics errors: revoked token is auth (scrubbed), rate limit carries its delay, 500 transient, gone post permanent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const { platformPostId } = yield* client.publish(threadsRequest(part("counted")))
      const credentials = Redacted.make(stored)

      fake.failNext("GET /insights", {
        ...ThreadsApiFake.rateLimited,
        headers: { "x-business-use-case-usage": JSON.stringify({ "1": [{ estimated_time_to_regain_access: 7 }] }) }
      })
      const limited = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(limited.kind).toBe("rate_limit")
      expect(limited.retryAfterSeconds).toBe(420)

      fake.failNext("GET /insights", ThreadsApiFake.unavailable)
      expect((yield* Effect.flip(client.metrics!(credentials, platformPostId))).kind).toBe("transient")

      const gone = yield* Effect.flip(client.metrics!(credentials, "999"))
      expect(gone.kind).toBe("permanent")

      fake.failNext("GET /insights", metaError(400, `Malformed access token ${token}`, 190))
      const echoed = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(echoed.kind).toBe("auth")
      expectNoSecret(echoed)

      fake.revoked.add(token)
      const revoked = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(revoked.kind).toBe("auth")
      expectNoSecret(revoked)
    }))

  it.scopedLive("replyControl: each of the five settings goes out as Threads' reply_control", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const values = ["everyone", "following", "mentioned", "followers", "parentPostAuthor"]
      for (const value of values) {
        yield* client.publish(threadsRequest(part(`who replies: ${value}`), { settings: { replyControl: value } }))
      }
      const sent = fake.server.requests
        .filter((r) => r.method === "POST" && r.path.endsWith("/threads"))
        .map((r) => r.form?.get("reply_control") ?? null)
      // everyone is Threads' default and is not sent.
      expect(sent).toEqual([null, "accounts_you_follow", "mentioned_only", "followers_only", "parent_post_author_only"])
    }))

  it.scopedLive("the fake refuses a container that breaks a documented rule, naming the page", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const answer = yield* Effect.promise(() =>
        fetch(`${fake.server.url}/v1.0/${ThreadsApiFake.userId}/threads`, {
          method: "POST",
          body: new URLSearchParams({ media_type: "TEXT", text: "hi", reply_control: "mentioned", access_token: token })
        }).then(async (r) => ({
          status: r.status,
          body: await r.json() as { error: { code: number; message: string } }
        }))
      )
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe(100)
      expect(answer.body.error.message).toContain("docs/threads/reference/publishing")
      expect(fake.rules.violations).toHaveLength(1)
      fake.rules.violations.length = 0
    }))
})

describe("Threads findPublished (the user's threads)", () => {
  const lookup = (content: string, sinceMs: number, untilMs: number) => ({
    account: threadsRequest(part(content)).account,
    credentials: Redacted.make(stored),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  /** A post another client made at `at`. */
  const other = (fake: ThreadsApiFake.ThreadsFake, id: string, text: string, at: number) =>
    fake.posts.push({
      id,
      container: { id: `c${id}`, params: { media_type: "TEXT", text }, pendingPolls: 0, fails: false, published: true },
      shortcode: `S${id}`,
      createdAt: at
    })

  it.scopedLive("a post in the window is found by its text with its permalink; other text is absent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const before = Date.now()
      const sent = yield* client.publish(threadsRequest(part("Threads & friends")))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup("Threads & friends", before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: sent.platformPostUrl
      })
      expect(yield* client.findPublished!(lookup("not sent", before, after))).toEqual({ _tag: "Absent" })
      const listed = fake.server.requests.filter((r) =>
        r.method === "GET" && r.path === `/v1.0/${ThreadsApiFake.userId}/threads`
      )
      expect(Number(listed[0]!.query.get("since"))).toBeLessThanOrEqual(before / 1000)
    }))

  it.scopedLive("pages on while inside the window; before the window or a reply is not the attempt's", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Date.now()
      other(fake, "900001", "same words", now - 3_600_000)
      expect(yield* client.findPublished!(lookup("same words", now - 1_000, now + 1_000))).toEqual({ _tag: "Absent" })
      other(fake, "900002", "deep", now)
      for (let i = 0; i < 150; i++) other(fake, String(910000 + i), `noise ${i}`, now + 30_000)
      expect(yield* client.findPublished!(lookup("deep", now - 1_000, now + 1_000))).toMatchObject({
        _tag: "Found",
        platformPostId: "900002"
      })
      for (let i = 150; i < 1_050; i++) other(fake, String(910000 + i), `noise ${i}`, now + 30_000)
      expect((yield* client.findPublished!(lookup("absent", now - 1_000, now + 1_000)))._tag).toBe("Unknown")
    }))

  it.scopedLive("a rate limit or an error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("GET /threads", ThreadsApiFake.rateLimited)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("rate_limit")
      fake.failNext("GET /threads", ThreadsApiFake.unavailable)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("transient")
    }))
})
