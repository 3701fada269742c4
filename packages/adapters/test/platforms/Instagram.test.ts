import { describe, expect, it } from "@effect/vitest"
import { SocialAccount } from "@herald/core/domain/Account"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Instagram from "../../src/platforms/Instagram.js"
import { metaError } from "../oauth/fakes/MetaFake.js"
import * as InstagramApiFake from "./fakes/InstagramApiFake.js"
import { account, bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = InstagramApiFake.accessToken

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => InstagramApiFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  // Every request must keep the documented rules of the fake's rulebook, whatever the test checks.
  yield* Effect.addFinalizer(() => Effect.sync(() => fake.rules.expectNone()))
  const client = yield* Instagram.make({
    apiUrl: fake.server.url,
    pollInterval: "5 millis",
    maxPolls: 10,
    publishRetryDelay: "5 millis"
  }).pipe(
    Effect.provide(HttpLive)
  )
  return { fake, client: withFollowUps(client) }
})

const stored = {
  access_token: token,
  user_id: InstagramApiFake.userId,
  username: InstagramApiFake.username,
  expires_at: "1767232800000"
}

const igRequest = (
  main: ReturnType<typeof part>,
  extra: Partial<Parameters<typeof request>[0]> & { readonly contentType?: string } = {}
) => ({
  ...request({ platform: "instagram", credentials: stored, main, ...extra }),
  account: new SocialAccount({ ...account("instagram"), platformAccountId: InstagramApiFake.userId }),
  contentType: Option.fromNullable(extra.contentType)
})

const image = (url: string | undefined, filename = "photo.jpg") =>
  media({
    kind: "image",
    mimeType: "image/jpeg",
    bytes: bytesOf(100, 1),
    filename,
    ...(url === undefined ? {} : { publicUrl: url })
  })

const video = (url: string | undefined, bytes: Uint8Array = bytesOf(100, 2)) =>
  media({
    kind: "video",
    mimeType: "video/mp4",
    bytes,
    filename: "clip.mp4",
    ...(url === undefined ? {} : { publicUrl: url })
  })

const routes = (fake: InstagramApiFake.InstagramFake) =>
  fake.server.requests.map((r) =>
    `${r.method} ${r.path.replace(/\/\d+/g, (s) => s === `/${InstagramApiFake.userId}` ? "/{user}" : "/{id}")}`
  )

const sentParams = (r: { form: FormData | undefined }) => {
  const out: Record<string, string> = {}
  r.form?.forEach((v, k) => {
    if (typeof v === "string" && k !== "access_token") out[k] = v
  })
  return out
}

const creates = (fake: InstagramApiFake.InstagramFake) =>
  fake.server.requests.filter((r) => r.method === "POST" && r.path.endsWith("/media")).map(sentParams)

const expectNoSecret = (error: PublishError) => expect(error.message).not.toContain(token)

describe("Instagram adapter against the Content Publishing fake", () => {
  it.scopedLive("image: container with image_url and caption, polled until FINISHED, published; id and permalink", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        igRequest(part("A picture #sun", [image("https://media.example.com/m/1.jpg")]), {
          settings: { altText: "A beach at noon" }
        })
      )
      const post = fake.posts[0]!
      expect(result).toEqual({
        platformPostId: post.id,
        platformPostUrl: `https://www.instagram.com/p/${post.shortcode}/`
      })
      expect(routes(fake)).toEqual([
        "POST /v26.0/{user}/media",
        "GET /v26.0/{id}", // IN_PROGRESS
        "GET /v26.0/{id}", // FINISHED
        "POST /v26.0/{user}/media_publish",
        "GET /v26.0/{id}"
      ])
      expect(creates(fake)).toEqual([
        { image_url: "https://media.example.com/m/1.jpg", caption: "A picture #sun", alt_text: "A beach at noon" }
      ])
      expect(fake.server.requests[0]!.form?.get("access_token")).toBe(token)
      expect(fake.server.requests[3]!.form?.get("creation_id")).toBe(post.container.id)
    }))

  it.scopedLive("media without a public URL is refused before any request, naming HERALD_MEDIA_PUBLIC_URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* Effect.flip(
        client.publish(igRequest(part("x", [image("https://media.example.com/m/1.jpg"), image(undefined, "b.jpg")])))
      )
      expect(error.kind).toBe("media")
      expect(error.message).toContain("b.jpg")
      expect(error.message).toContain("HERALD_MEDIA_PUBLIC_URL")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("no media, or a PNG: a media error before any request", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      expect((yield* Effect.flip(client.publish(igRequest(part("text only"))))).kind).toBe("media")
      const png = media({
        kind: "image",
        mimeType: "image/png",
        bytes: bytesOf(10, 3),
        publicUrl: "https://media.example.com/m/3.png"
      })
      expect((yield* Effect.flip(client.publish(igRequest(part("png", [png]))))).kind).toBe("media")
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("one video: a REELS container with video_url, polled through IN_PROGRESS; /reel/ permalink", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(igRequest(part("A clip", [video("https://media.example.com/m/2.mp4")])))
      expect(creates(fake)).toEqual([
        {
          media_type: "REELS",
          video_url: "https://media.example.com/m/2.mp4",
          caption: "A clip",
          share_to_feed: "true"
        }
      ])
      expect(routes(fake).filter((r) => r === "GET /v26.0/{id}")).toHaveLength(4) // 2 IN_PROGRESS, FINISHED, permalink
      expect(result.platformPostUrl).toContain("/reel/")
    }))

  it.scopedLive("a video without a public URL is refused before any call, naming HERALD_MEDIA_PUBLIC_URL (no rupload)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      for (
        const [media, contentType] of [
          [[video(undefined)], undefined],
          [[video(undefined)], "Story"],
          [[image("https://media.example.com/m/1.jpg"), video(undefined)], undefined]
        ] as const
      ) {
        const error = yield* Effect.flip(
          client.publish(igRequest(part("clip", [...media]), contentType === undefined ? {} : { contentType }))
        )
        expect(error.kind).toBe("media")
        expect(error.message).toContain("HERALD_MEDIA_PUBLIC_URL")
      }
      expect(fake.server.requests).toHaveLength(0)
    }))

  it.scopedLive("the fake refuses a resumable container on graph.instagram.com, naming Meta's page", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const answer = yield* Effect.promise(() =>
        fetch(`${fake.server.url}/v26.0/${InstagramApiFake.userId}/media`, {
          method: "POST",
          body: new URLSearchParams({ media_type: "REELS", upload_type: "resumable", access_token: token })
        }).then(async (r) => ({
          status: r.status,
          body: await r.json() as { error: { code: number; message: string } }
        }))
      )
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe(100)
      expect(answer.body.error.message).toContain("Facebook Login for Business")
      expect(answer.body.error.message).toContain("resumable-uploads")
      expect(fake.rules.violations).toHaveLength(1)
      fake.rules.violations.length = 0
    }))

  it.scopedLive("carousel: children (is_carousel_item, VIDEO for videos), each awaited, then CAROUSEL with the caption", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(
        igRequest(
          part("Two things", [image("https://media.example.com/m/1.jpg"), video("https://media.example.com/m/2.mp4")])
        )
      )
      const [first, second, parent] = [...fake.containers.values()]
      expect(creates(fake)).toEqual([
        { image_url: "https://media.example.com/m/1.jpg", is_carousel_item: "true" },
        { media_type: "VIDEO", video_url: "https://media.example.com/m/2.mp4", is_carousel_item: "true" },
        { media_type: "CAROUSEL", children: `${first!.id},${second!.id}`, caption: "Two things" }
      ])
      expect(fake.posts.map((p) => p.container.id)).toEqual([parent!.id])
    }))

  it.scopedLive("alt text: each carousel image carries its medium's alt_text, cut to 100 characters", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(igRequest(part("Two", [
        { ...image("https://media.example.com/m/1.jpg"), altText: "A beach at noon" },
        { ...image("https://media.example.com/m/2.jpg", "b.jpg"), altText: "x".repeat(150) }
      ])))
      const sent = creates(fake)
      expect(sent[0]!["alt_text"]).toBe("A beach at noon")
      expect(sent[1]!["alt_text"]).toBe("x".repeat(100))
    }))

  it.scopedLive("story: a STORIES container without a caption", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(
        igRequest(part("ignored", [image("https://media.example.com/m/1.jpg")]), { contentType: "Story" })
      )
      expect(creates(fake)).toEqual([{ media_type: "STORIES", image_url: "https://media.example.com/m/1.jpg" }])
      expect(fake.posts).toHaveLength(1)
    }))

  it.scopedLive("first comment: POST /{ig-media-id}/comments after the publish", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        igRequest(part("main", [image("https://media.example.com/m/1.jpg")]), {
          settings: { firstComment: "#tags #here" }
        })
      )
      const post = fake.posts[0]!
      expect(post.comments).toEqual(["#tags #here"])
      expect(routes(fake)).toContain(`POST /v26.0/{id}/comments`)
      expect(result.platformPostId).toBe(post.id)
    }))

  it.scopedLive("a failing first comment never fails the published post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /comments", metaError(400, "Application request limit reached", 4))
      const result = yield* client.publish(
        igRequest(part("main", [image("https://media.example.com/m/1.jpg")]), { settings: { firstComment: "hi" } })
      )
      expect(result.platformPostId).toBe(fake.posts[0]!.id)
      expect(fake.posts[0]!.comments).toEqual([])
    }))

  it.scopedLive("code 190: auth, with the token nowhere in the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.revoked.add(token)
      const error = yield* Effect.flip(
        client.publish(igRequest(part("hi", [image("https://media.example.com/m/1.jpg")])))
      )
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
    }))

  it.scopedLive("2207042 publishing limit and code 4: rate_limit; 2207010: too_long; 2207004: media; 5xx: transient", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const kindOf = (caption: string, url = "https://media.example.com/m/1.jpg") =>
        Effect.map(Effect.flip(client.publish(igRequest(part(caption, [image(url)])))), (e) => e.kind)
      expect(yield* kindOf("x #fail-limit")).toBe("rate_limit")
      expect(yield* kindOf("x #fail-429")).toBe("rate_limit")
      expect(yield* kindOf("x #fail-long")).toBe("too_long")
      expect(yield* kindOf("x", "https://media.example.com/fail-image.jpg")).toBe("media")
      expect(yield* kindOf("x #fail-500")).toBe("transient")
      expect(fake.posts).toHaveLength(0)
    }))

  it.scopedLive("Meta's error table: the subcodes it says to try again are transient, with the retry each prescribes", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const post = (caption: string) =>
        client.publish(igRequest(part(caption, [image("https://media.example.com/m/1.jpg")])))
      // Messages and codes as Meta's table gives them (error-codes page).
      const table: ReadonlyArray<readonly [number, number, string, string]> = [
        [-1, 2207001, "Instagram server error. Try again.", "as Meta's error table prescribes"],
        [-2, 2207003, "It takes too long to download the media.", "as Meta's error table prescribes"],
        [-2, 2207020, "The media you are trying to access has expired. Please try to upload again.", "new container"],
        [-1, 2207032, "Create media fail, please try to re-create media", "as Meta's error table prescribes"],
        [-1, 2207053, "unknown upload error", "new container"]
      ]
      for (const [code, subcode, message, retry] of table) {
        fake.failNext("POST /media_publish", metaError(400, message, code, { subcode }))
        const error = yield* Effect.flip(post(`try ${subcode}`))
        expect(error.kind, String(subcode)).toBe("transient")
        expect(error.message, String(subcode)).toContain(retry)
      }
      expect(fake.posts).toHaveLength(0)
      const publishCalls = () => fake.server.requests.filter((r) => r.path.endsWith("/media_publish")).length
      const before = publishCalls()
      // 2207008: the same container is published again after a pause, and goes out.
      fake.failNext(
        "POST /media_publish",
        metaError(400, "Temporary error publishing a container", -1, { subcode: 2207008 })
      )
      yield* post("second time lucky")
      expect(publishCalls() - before).toBe(2)
      expect(fake.posts).toHaveLength(1)
      // Three in a row: two retries, then transient (the dispatcher tries again later).
      const again = publishCalls()
      for (let i = 0; i < 3; i++) {
        fake.failNext(
          "POST /media_publish",
          metaError(400, "Temporary error publishing a container", -1, { subcode: 2207008 })
        )
      }
      const stuck = yield* Effect.flip(post("never"))
      expect(stuck.kind).toBe("transient")
      expect(publishCalls() - again).toBe(3)
      expect(fake.posts).toHaveLength(1)
    }))

  it.scopedLive("container ERROR: a media error with the status, nothing published", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* Effect.flip(
        client.publish(igRequest(part("clip", [video("https://media.example.com/fail-status.mp4")])))
      )
      expect(error.kind).toBe("media")
      expect(error.message).toContain("ERROR")
      expect(error.message).toContain("2207026")
      expect(fake.posts).toHaveLength(0)
    }))

  it.scopedLive("a container stuck IN_PROGRESS is transient after maxPolls", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.imagePolls = 50
      const error = yield* Effect.flip(
        client.publish(igRequest(part("slow", [image("https://media.example.com/m/1.jpg")])))
      )
      expect(error.kind).toBe("transient")
      expect(fake.posts).toHaveLength(0)
    }))

  it.scopedLive("an error body that echoes the token is scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("POST /media_publish", metaError(400, `Malformed access token ${token}`, 190))
      const error = yield* Effect.flip(
        client.publish(igRequest(part("hi", [image("https://media.example.com/m/1.jpg")])))
      )
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
      expect(error.message).toContain("[redacted]")
    }))

  it.scopedLive("metrics: GET /{ig-media-id}/insights; reach is impressions, saved is saves", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const { platformPostId } = yield* client.publish(
        igRequest(part("hi", [image("https://media.example.com/m/1.jpg")]))
      )
      const metrics = yield* client.metrics!(Redacted.make(stored), platformPostId)
      expect(metrics).toMatchObject({
        views: 2400,
        likes: 140,
        comments: 9,
        shares: 6,
        saves: 11,
        impressions: 1800,
        clicks: 0
      })
      const calls = fake.server.requests.filter((r) => r.path.endsWith("/insights"))
      expect(calls).toHaveLength(1)
      expect(calls[0]!.path).toBe(`/v26.0/${platformPostId}/insights`)
      expect(calls[0]!.query.get("metric")).toBe("views,likes,comments,shares,saved,reach")
    }))

  it.scopedLive("metrics of a story: the 400 for likes is answered by asking views and reach only", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const { platformPostId } = yield* client.publish(
        igRequest(part("", [image("https://media.example.com/m/1.jpg")]), { contentType: "Story" })
      )
      const metrics = yield* client.metrics!(Redacted.make(stored), platformPostId)
      expect(metrics).toMatchObject({ views: 300, impressions: 250, likes: 0, comments: 0, shares: 0, saves: 0 })
      const asked = fake.server.requests.filter((r) => r.path.endsWith("/insights")).map((r) => r.query.get("metric"))
      expect(asked).toEqual(["views,likes,comments,shares,saved,reach", "views,reach"])
    }))

  it.scopedLive("metrics errors: rate limit with its delay, 500 transient, gone post permanent, revoked token auth (scrubbed)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const { platformPostId } = yield* client.publish(
        igRequest(part("hi", [image("https://media.example.com/m/1.jpg")]))
      )
      const credentials = Redacted.make(stored)

      fake.failNext("GET /insights", { ...InstagramApiFake.rateLimited, headers: { "retry-after": "90" } })
      const limited = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(limited.kind).toBe("rate_limit")
      expect(limited.retryAfterSeconds).toBe(90)

      fake.failNext("GET /insights", InstagramApiFake.unavailable)
      expect((yield* Effect.flip(client.metrics!(credentials, platformPostId))).kind).toBe("transient")

      expect((yield* Effect.flip(client.metrics!(credentials, "999"))).kind).toBe("permanent")

      fake.failNext("GET /insights", metaError(400, `Malformed access token ${token}`, 190))
      const echoed = yield* Effect.flip(client.metrics!(credentials, platformPostId))
      expect(echoed.kind).toBe("auth")
      expectNoSecret(echoed)
    }))
})

describe("Instagram findPublished (the account's media)", () => {
  const lookup = (content: string, sinceMs: number, untilMs: number) => ({
    account: igRequest(part(content)).account,
    credentials: Redacted.make(stored),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  /** A post another client made at `at`. */
  const other = (fake: InstagramApiFake.InstagramFake, id: string, caption: string, at: number) =>
    fake.posts.push({
      id,
      container: {
        id: `c${id}`,
        params: { image_url: "https://i.example/x.jpg", caption },
        pendingPolls: 0,
        fails: false,
        published: true
      },
      shortcode: `S${id}`,
      comments: [],
      createdAt: at
    })

  it.scopedLive("a post in the window is found by its caption with its permalink; other text is absent", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const before = Date.now()
      const sent = yield* client.publish(igRequest(part("Morning light", [image("https://cdn.example/a.jpg")])))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup("Morning light", before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: sent.platformPostUrl
      })
      expect(yield* client.findPublished!(lookup("Evening light", before, after))).toEqual({ _tag: "Absent" })
    }))

  it.scopedLive("pages until past the window; a story in the window makes a missing post Unknown", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const now = Date.now()
      other(fake, "800001", "same words", now - 3_600_000)
      expect(yield* client.findPublished!(lookup("same words", now - 1_000, now + 1_000))).toEqual({ _tag: "Absent" })
      other(fake, "800002", "deep", now)
      for (let i = 0; i < 150; i++) other(fake, String(810000 + i), `noise ${i}`, now + 30_000)
      expect(yield* client.findPublished!(lookup("deep", now - 1_000, now + 1_000))).toMatchObject({
        _tag: "Found",
        platformPostId: "800002"
      })
      yield* client.publish(igRequest(part("a story", [image("https://cdn.example/s.jpg")]), { contentType: "Story" }))
      expect((yield* client.findPublished!(lookup("a story", now - 1_000, Date.now())))._tag).toBe("Unknown")
    }))

  it.scopedLive("a rate limit or an error fails the lookup (never Absent)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("GET /media", InstagramApiFake.rateLimited)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("rate_limit")
      fake.failNext("GET /media", InstagramApiFake.unavailable)
      expect((yield* Effect.flip(client.findPublished!(lookup("x", 0, Date.now())))).kind).toBe("transient")
    }))
})
