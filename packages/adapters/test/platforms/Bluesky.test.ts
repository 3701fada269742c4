import { describe, expect, it } from "@effect/vitest"
import { DestinationId } from "@herald/core/kernel/Ids"
import type { PlatformClient } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Bluesky from "../../src/platforms/Bluesky.js"
import * as BlueskyLookup from "../../src/platforms/BlueskyLookup.js"
import * as BlueskyXrpc from "../../src/platforms/BlueskyXrpc.js"
import * as BlueskyFake from "./fakes/BlueskyFake.js"
import type { Recorded } from "./fakes/FakeServer.js"
import { bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => BlueskyFake.start()),
    (f) => Effect.promise(() => f.close())
  )
  const client = yield* Bluesky.make({
    service: fake.entryway.url,
    videoService: fake.pds.url,
    appView: fake.pds.url,
    videoPollInterval: "5 millis"
  }).pipe(Effect.provide(HttpLive))
  return { fake, client: withFollowUps(client) }
})

/** Connects and returns the credentials the engine would store. */
const connected = (client: PlatformClient) =>
  Effect.map(
    client.connectWithCredentials!({ handle: "@herald.bsky.social", app_password: BlueskyFake.appPassword }),
    (identity) => identity.credentials
  )

const nsid = (r: Recorded) => r.path.replace("/xrpc/", "")
const calls = (requests: ReadonlyArray<Recorded>) => requests.map(nsid)

const enc = new TextEncoder()
const span = (text: string, needle: string) => {
  const i = text.indexOf(needle)
  const byteStart = enc.encode(text.slice(0, i)).length
  return { byteStart, byteEnd: byteStart + enc.encode(needle).length }
}

const rkeyOf = (uri: string) => uri.split("/").pop()

describe("Bluesky adapter against the XRPC fake", () => {
  it.scopedLive("connect: createSession at the service, getProfile at the PDS from the DID document", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const identity = yield* client.connectWithCredentials!({
        handle: "@herald.bsky.social",
        app_password: BlueskyFake.appPassword
      })
      expect(identity.platformAccountId).toBe(BlueskyFake.did)
      expect(identity.accountName).toBe("herald.bsky.social")
      expect(identity.avatarUrl).toBe(fake.account.avatar)
      const session = identity.credentials
      expect(session).toMatchObject({
        identifier: "herald.bsky.social",
        handle: "herald.bsky.social",
        app_password: BlueskyFake.appPassword,
        did: BlueskyFake.did,
        service: fake.entryway.url,
        pds: fake.pds.url
      })
      expect(session["access_jwt"]).toMatch(/^eyJ/)
      expect(session["refresh_jwt"]).toMatch(/^eyJ/)
      expect(calls(fake.entryway.requests)).toEqual(["com.atproto.server.createSession"])
      expect(fake.entryway.requests[0]!.json).toEqual({
        identifier: "herald.bsky.social",
        password: BlueskyFake.appPassword
      })
      expect(calls(fake.pds.requests)).toEqual(["app.bsky.actor.getProfile"])
      expect(fake.pds.requests[0]!.query.get("actor")).toBe(BlueskyFake.did)
      expect(fake.pds.requests[0]!.headers["authorization"]).toBe(`Bearer ${session["access_jwt"]}`)
    }))

  it.scopedLive("connect: an account the AppView has not indexed (Profile not found) connects with the session's handle, no avatar", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.profileIndexed = false
      const identity = yield* client.connectWithCredentials!({
        handle: "herald.bsky.social",
        app_password: BlueskyFake.appPassword
      })
      expect(calls(fake.pds.requests)).toEqual(["app.bsky.actor.getProfile"])
      expect(identity).toMatchObject({
        platformAccountId: BlueskyFake.did,
        accountName: "herald.bsky.social",
        avatarUrl: ""
      })
      expect(identity.credentials["access_jwt"]).toMatch(/^eyJ/)
      // The refresh sweep reads the identity the same way.
      const renewed = yield* client.refresh!(Redacted.make(identity.credentials))
      expect(renewed.accountName).toBe("herald.bsky.social")
      // A refused session still fails the connect.
      const wrong = yield* Effect.flip(
        client.connectWithCredentials!({ handle: "herald.bsky.social", app_password: "zzzz-zzzz-zzzz-zzzz" })
      )
      expect(wrong.kind).toBe("auth")
    }))

  it.scopedLive("connect: a wrong app password is auth; a main password or an http service is refused unsent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const wrong = yield* client.connectWithCredentials!({
        handle: "herald.bsky.social",
        app_password: "zzzz-zzzz-zzzz-zzzz"
      })
        .pipe(Effect.flip)
      expect(wrong.kind).toBe("auth")
      expect(wrong.message).toBe("Bluesky: AuthenticationRequired: Invalid identifier or password")
      expect(wrong.message).not.toContain("zzzz-zzzz")

      const mainPassword = yield* client.connectWithCredentials!({
        handle: "herald.bsky.social",
        app_password: "hunter2!"
      })
        .pipe(Effect.flip)
      expect(mainPassword.kind).toBe("auth")
      expect(mainPassword.message).toContain("app password")
      expect(mainPassword.message).not.toContain("hunter2")

      const insecure = yield* client.connectWithCredentials!({
        handle: "herald.bsky.social",
        app_password: BlueskyFake.appPassword,
        service: "http://pds.example"
      }).pipe(Effect.flip)
      expect(insecure.kind).toBe("auth")
      expect(fake.counts.logins).toBe(1)
    }))

  it.scopedLive("publish text: facets with UTF-8 byte offsets, unresolved mention dropped, session reused", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const text = "🚀 日本語 @alice.bsky.social と @ghost.bsky.social https://herald.example/ä?x=1 #東京 #launch!"
      const result = yield* client.publish(request({ platform: "bluesky", credentials, main: part(text) }))

      const record = fake.records[0]!
      expect(result.platformPostId).toBe(record.uri)
      expect(result.platformPostUrl).toBe(`https://bsky.app/profile/herald.bsky.social/post/${rkeyOf(record.uri)}`)
      expect(result.renewedCredentials).toBeUndefined()
      expect(fake.counts.logins).toBe(1)
      expect(record.repo).toBe(BlueskyFake.did)
      expect(record.record["$type"]).toBe("app.bsky.feed.post")
      expect(record.record["text"]).toBe(text)
      expect(new Date(String(record.record["createdAt"])).toISOString()).toBe(record.record["createdAt"])
      expect(record.record["facets"]).toEqual([
        {
          index: span(text, "@alice.bsky.social"),
          features: [{ $type: "app.bsky.richtext.facet#mention", did: "did:plc:alice000000000000000001" }]
        },
        {
          index: span(text, "https://herald.example/ä?x=1"),
          features: [{ $type: "app.bsky.richtext.facet#link", uri: "https://herald.example/ä?x=1" }]
        },
        { index: span(text, "#東京"), features: [{ $type: "app.bsky.richtext.facet#tag", tag: "東京" }] },
        { index: span(text, "#launch"), features: [{ $type: "app.bsky.richtext.facet#tag", tag: "launch" }] }
      ])
      const create = fake.pds.requests.find((r) => nsid(r) === "com.atproto.repo.createRecord")!
      expect(create.headers["authorization"]).toBe(`Bearer ${credentials["access_jwt"]}`)
      expect((create.json as { collection: string }).collection).toBe("app.bsky.feed.post")
    }))

  it.scopedLive("publish images: raw uploadBlob bytes with their type, embedded as app.bsky.embed.images", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const a = bytesOf(5000, 1)
      const b = bytesOf(7000, 2)
      yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("pics", [
          media({ kind: "image", mimeType: "image/jpeg", bytes: a }),
          media({ kind: "image", mimeType: "image/png", bytes: b })
        ])
      }))
      const uploads = fake.pds.requests.filter((r) => nsid(r) === "com.atproto.repo.uploadBlob")
      expect(uploads.map((u) => u.headers["content-type"])).toEqual(["image/jpeg", "image/png"])
      expect(new Uint8Array(uploads[0]!.body)).toEqual(a)
      expect(new Uint8Array(uploads[1]!.body)).toEqual(b)
      expect(fake.records[0]!.record["embed"]).toEqual({
        $type: "app.bsky.embed.images",
        images: [
          {
            alt: "",
            image: { $type: "blob", ref: { $link: fake.blobs[0]!.link }, mimeType: "image/jpeg", size: 5000 }
          },
          { alt: "", image: { $type: "blob", ref: { $link: fake.blobs[1]!.link }, mimeType: "image/png", size: 7000 } }
        ]
      })
    }))

  it.scopedLive("alt text and aspectRatio from the medium reach the image and video embeds", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("pics", [
          {
            ...media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(5000, 1) }),
            altText: "A red kite",
            width: 1600,
            height: 900
          },
          media({ kind: "image", mimeType: "image/png", bytes: bytesOf(7000, 2) })
        ])
      }))
      const images = (fake.records[0]!.record["embed"] as { images: Array<Record<string, unknown>> }).images
      expect(images[0]!["alt"]).toBe("A red kite")
      expect(images[0]!["aspectRatio"]).toEqual({ width: 1600, height: 900 })
      expect(images[1]!["alt"]).toBe("")
      expect(images[1]!["aspectRatio"]).toBeUndefined()
      yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("clip", [{
          ...media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(20_000, 7), filename: "clip.mp4" }),
          altText: "Waves at dusk",
          width: 1080,
          height: 1920
        }])
      }))
      const video = fake.records[1]!.record["embed"] as Record<string, unknown>
      expect(video["$type"]).toBe("app.bsky.embed.video")
      expect(video["alt"]).toBe("Waves at dusk")
      expect(video["aspectRatio"]).toEqual({ width: 1080, height: 1920 })
    }))

  it.scopedLive("thread: root is the first post, parent the one before; the first comment replies to the main post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("1/3"),
        thread: [part("2/3"), part("3/3")],
        settings: { firstComment: "links below", langs: ["en"] }
      }))
      const [one, two, three, comment] = fake.records
      const ref = (r: BlueskyFake.StoredRecord) => ({ uri: r.uri, cid: r.cid })
      expect(one!.record["reply"]).toBeUndefined()
      expect(two!.record["reply"]).toEqual({ root: ref(one!), parent: ref(one!) })
      expect(three!.record["reply"]).toEqual({ root: ref(one!), parent: ref(two!) })
      expect(comment!.record["text"]).toBe("links below")
      expect(comment!.record["reply"]).toEqual({ root: ref(one!), parent: ref(one!) })
      expect(one!.record["langs"]).toEqual(["en"])
    }))

  it.scopedLive("ExpiredToken: refreshSession then one retry, no new login, renewed session returned", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      fake.expire(credentials["access_jwt"]!)
      const result = yield* client.publish(request({ platform: "bluesky", credentials, main: part("hello") }))
      expect(fake.counts.logins).toBe(1)
      expect(fake.counts.refreshes).toBe(1)
      expect(fake.records).toHaveLength(1)
      const renewed = result.renewedCredentials!
      expect(renewed["access_jwt"]).not.toBe(credentials["access_jwt"])
      expect(renewed["refresh_jwt"]).not.toBe(credentials["refresh_jwt"])
      expect(renewed["app_password"]).toBe(BlueskyFake.appPassword)
      const refreshCall = fake.entryway.requests.find((r) => nsid(r) === "com.atproto.server.refreshSession")!
      expect(refreshCall.headers["authorization"]).toBe(`Bearer ${credentials["refresh_jwt"]}`)
      const creates = fake.pds.requests.filter((r) => nsid(r) === "com.atproto.repo.createRecord")
      expect(creates.map((r) => r.headers["authorization"])).toEqual([
        `Bearer ${credentials["access_jwt"]}`,
        `Bearer ${renewed["access_jwt"]}`
      ])
    }))

  it.scopedLive("refresh refused too: a new session from the app password", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      fake.expire(credentials["access_jwt"]!)
      fake.expire(credentials["refresh_jwt"]!)
      const result = yield* client.publish(request({ platform: "bluesky", credentials, main: part("hello") }))
      expect(fake.counts.refreshes).toBe(1)
      expect(fake.counts.logins).toBe(2)
      expect(result.renewedCredentials!["access_jwt"]).not.toBe(credentials["access_jwt"])
    }))

  it.scopedLive("app password revoked and session dead: kind auth, no secret in the message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      fake.expire(credentials["access_jwt"]!)
      fake.expire(credentials["refresh_jwt"]!)
      fake.account.password = "wxyz-wxyz-wxyz-wxyz"
      const error = yield* client.publish(request({ platform: "bluesky", credentials, main: part("x") })).pipe(
        Effect.flip
      )
      expect(error.kind).toBe("auth")
      // It tried the refresh and then a new login before giving up.
      expect(fake.counts.refreshes).toBe(1)
      expect(fake.counts.logins).toBe(2)
      for (const secret of [credentials["access_jwt"]!, credentials["refresh_jwt"]!, BlueskyFake.appPassword]) {
        expect(error.message).not.toContain(secret)
      }
      expect(fake.records).toHaveLength(0)
    }))

  it.scopedLive("refresh: refreshSession and getProfile, returning the new session to store", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const identity = yield* client.refresh!(Redacted.make(credentials))
      expect(fake.counts.refreshes).toBe(1)
      expect(fake.counts.logins).toBe(1)
      expect(identity.platformAccountId).toBe(BlueskyFake.did)
      expect(identity.credentials["refresh_jwt"]).not.toBe(credentials["refresh_jwt"])
      // The old refresh token was rotated away; the new one works.
      const again = yield* client.refresh!(Redacted.make(identity.credentials))
      expect(fake.counts.refreshes).toBe(2)
      expect(fake.counts.logins).toBe(1)
      expect(again.credentials["access_jwt"]).not.toBe(identity.credentials["access_jwt"])
    }))

  // TestClock stands at 0 here, so the reset epoch is the delay.
  it.scoped("429 RateLimitExceeded: rate_limit with the delay from ratelimit-reset", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      fake.failNext("com.atproto.repo.createRecord", {
        status: 429,
        headers: {
          "ratelimit-limit": "5000",
          "ratelimit-remaining": "0",
          "ratelimit-reset": "42",
          "ratelimit-policy": "5000;w=3600"
        },
        body: { error: "RateLimitExceeded", message: "Rate Limit Exceeded" }
      })
      const error = yield* client.publish(request({ platform: "bluesky", credentials, main: part("x") })).pipe(
        Effect.flip
      )
      expect(error.kind).toBe("rate_limit")
      expect(error.retryAfterSeconds).toBe(42)
    }))

  it.scopedLive("5xx is transient", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      fake.failNext("com.atproto.repo.createRecord", {
        status: 502,
        body: { error: "InternalServerError", message: "Internal Server Error" }
      })
      const error = yield* client.publish(request({ platform: "bluesky", credentials, main: part("x") })).pipe(
        Effect.flip
      )
      expect(error.kind).toBe("transient")
    }))

  it.scopedLive("too long: over 300 graphemes or 3000 bytes is refused before anything is sent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const before = fake.pds.requests.length
      const graphemes = yield* client.publish(
        request({ platform: "bluesky", credentials, main: part("a".repeat(301)) })
      )
        .pipe(Effect.flip)
      expect(graphemes.kind).toBe("too_long")
      // 300 family emoji: 300 graphemes, 7500 bytes.
      const family = "👨‍👩‍👧‍👦".repeat(300)
      expect(enc.encode(family).length).toBeGreaterThan(3000)
      const bytes = yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("ok"),
        thread: [part(family)]
      })).pipe(Effect.flip)
      expect(bytes.kind).toBe("too_long")
      expect(fake.pds.requests.length).toBe(before)
      expect(fake.records).toHaveLength(0)
    }))

  it("the platform's own too-long refusal is classified too_long", () => {
    const error = BlueskyXrpc.classify(
      {
        status: 400,
        headers: {},
        text: "",
        body: {
          error: "InvalidRequest",
          message: "Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes"
        }
      },
      "default",
      0,
      []
    )
    expect(error.kind).toBe("too_long")
  })

  it.scopedLive("media the post cannot take is refused unsent; a blob the PDS refuses is kind media", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const image = () => media({ kind: "image", mimeType: "image/png", bytes: bytesOf(10, 1) })
      const five = yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("x", [image(), image(), image(), image(), image()])
      })).pipe(Effect.flip)
      expect(five.kind).toBe("media")
      const mixed = yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("x", [image(), media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(10, 2) })])
      })).pipe(Effect.flip)
      expect(mixed.kind).toBe("media")
      expect(fake.pds.requests.filter((r) => nsid(r) === "com.atproto.repo.uploadBlob")).toHaveLength(0)

      fake.failNext("com.atproto.repo.uploadBlob", {
        status: 400,
        body: { error: "InvalidMimeType", message: "Wrong type of file. It is image/tiff but it must match image/*." }
      })
      const refused = yield* client.publish(request({ platform: "bluesky", credentials, main: part("x", [image()]) }))
        .pipe(Effect.flip)
      expect(refused.kind).toBe("media")
      expect(fake.records).toHaveLength(0)
    }))

  it.scopedLive("video: service auth for the PDS, upload to the video service, poll the job, embed the blob", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const bytes = bytesOf(20_000, 7)
      yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("clip", [media({ kind: "video", mimeType: "video/mp4", bytes, filename: "clip.mp4" })])
      }))
      const auth = fake.pds.requests.find((r) => nsid(r) === "com.atproto.server.getServiceAuth")!
      expect(auth.query.get("aud")).toBe("did:web:127.0.0.1")
      expect(auth.query.get("lxm")).toBe("com.atproto.repo.uploadBlob")
      expect(Number(auth.query.get("exp"))).toBeGreaterThan(Date.now() / 1000)
      const upload = fake.pds.requests.find((r) => nsid(r) === "app.bsky.video.uploadVideo")!
      expect(upload.query.get("did")).toBe(BlueskyFake.did)
      expect(upload.query.get("name")).toBe("clip.mp4")
      expect(upload.headers["content-type"]).toBe("video/mp4")
      expect(upload.headers["authorization"]).not.toBe(`Bearer ${credentials["access_jwt"]}`)
      expect(new Uint8Array(upload.body)).toEqual(bytes)
      expect(fake.counts.polls).toBe(3)
      expect(fake.records[0]!.record["embed"]).toEqual({
        $type: "app.bsky.embed.video",
        video: { $type: "blob", ref: { $link: "bafkreivideo1" }, mimeType: "video/mp4", size: 20_000 }
      })
    }))

  it.scopedLive("video the service fails to process is kind media", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const error = yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part("clip", [
          media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(100, 1), filename: "bad.mp4" })
        ])
      })).pipe(Effect.flip)
      expect(error.kind).toBe("media")
      expect(error.message).toContain("Video is too long")
      expect(fake.records).toHaveLength(0)
    }))

  it.scopedLive("metrics: getPosts on the public AppView", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const { platformPostId } = yield* client.publish(request({ platform: "bluesky", credentials, main: part("x") }))
      const metrics = yield* client.metrics!(Redacted.make(credentials), platformPostId)
      expect(metrics).toMatchObject({ likes: 12, comments: 4, shares: 4, views: 0 })
      const call = fake.pds.requests.find((r) => nsid(r) === "app.bsky.feed.getPosts")!
      expect(call.query.get("uris")).toBe(platformPostId)
      expect(call.headers["authorization"]).toBeUndefined()
    }))

  it.scopedLive("metricsBatch: one getPosts with every uri; a post not answered is left out", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const a = yield* client.publish(request({ platform: "bluesky", credentials, main: part("a") }))
      const b = yield* client.publish(request({ platform: "bluesky", credentials, main: part("b") }))
      const gone = `${a.platformPostId.slice(0, a.platformPostId.lastIndexOf("/"))}/3zzzzzzzzzzzz`
      const found = yield* client.metricsBatch!(Redacted.make(credentials), [a.platformPostId, b.platformPostId, gone])
      expect([...found.keys()].sort()).toEqual([a.platformPostId, b.platformPostId].sort())
      expect(found.get(b.platformPostId)).toMatchObject({ likes: 12, comments: 4, shares: 4 })
      expect(client.metricsBatchSize).toBe(25)
      const calls = fake.pds.requests.filter((r) => nsid(r) === "app.bsky.feed.getPosts")
      expect(calls).toHaveLength(1)
      expect(calls[0]!.query.getAll("uris")).toEqual([a.platformPostId, b.platformPostId, gone])
      expect((yield* Effect.flip(client.metrics!(Redacted.make(credentials), gone))).kind).toBe("permanent")
    }))

  it.scopedLive("metrics errors: RateLimitExceeded carries ratelimit-reset, 5xx transient", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const { platformPostId } = yield* client.publish(request({ platform: "bluesky", credentials, main: part("x") }))
      fake.failNext("app.bsky.feed.getPosts", {
        status: 429,
        headers: { "retry-after": "30" },
        body: { error: "RateLimitExceeded", message: "Rate Limit Exceeded" }
      })
      const limited = yield* Effect.flip(client.metrics!(Redacted.make(credentials), platformPostId))
      expect(limited.kind).toBe("rate_limit")
      expect(limited.retryAfterSeconds).toBe(30)
      fake.failNext("app.bsky.feed.getPosts", {
        status: 502,
        body: { error: "UpstreamFailure", message: "Upstream Failure" }
      })
      expect((yield* Effect.flip(client.metrics!(Redacted.make(credentials), platformPostId))).kind).toBe("transient")
    }))
})

describe("Bluesky findPublished (listRecords at the PDS)", () => {
  const window = (sinceMs: number, untilMs: number) => ({
    since: DateTime.unsafeMake(sinceMs),
    until: DateTime.unsafeMake(untilMs)
  })
  const lookup = (
    credentials: Readonly<Record<string, string>>,
    content: string,
    sinceMs: number,
    untilMs: number
  ) => ({
    account: request({ platform: "bluesky", credentials, main: part(content) }).account,
    credentials: Redacted.make(credentials),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000d1"),
    attempt: 1,
    content,
    ...window(sinceMs, untilMs)
  })
  /** A post made by someone else (another client) at `at`, placed before the ones published so far. */
  const older = (fake: BlueskyFake.BlueskyFake, n: number, text: string, at: number) =>
    fake.records.unshift({
      uri: `at://${BlueskyFake.did}/app.bsky.feed.post/3lold${String(n).padStart(7, "0")}`,
      cid: `bafyold${n}`,
      repo: BlueskyFake.did,
      record: { $type: "app.bsky.feed.post", text, createdAt: new Date(at).toISOString() }
    })

  it.scopedLive("a post published in the window is found with its uri and URL; other text is absent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const before = Date.now()
      const sent = yield* client.publish(request({ platform: "bluesky", credentials, main: part("found me") }))
      const after = Date.now()
      expect(yield* client.findPublished!(lookup(credentials, "found me", before, after))).toEqual({
        _tag: "Found",
        platformPostId: sent.platformPostId,
        platformPostUrl: sent.platformPostUrl
      })
      expect(yield* client.findPublished!(lookup(credentials, "not me", before, after))).toEqual({ _tag: "Absent" })
      const list = fake.pds.requests.filter((r) => nsid(r) === "com.atproto.repo.listRecords")
      expect(list[0]!.query.get("repo")).toBe(BlueskyFake.did)
      expect(list[0]!.query.get("collection")).toBe("app.bsky.feed.post")
      expect(list[0]!.headers["authorization"]).toBe(`Bearer ${credentials["access_jwt"]}`)
    }))

  it.scopedLive("the same text outside the window, or as a reply, is not the attempt's post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const now = Date.now()
      older(fake, 1, "same words", now - 3_600_000)
      // A reply with the same text inside the window (e.g. a thread part) is not a main post.
      fake.records.push({
        uri: `at://${BlueskyFake.did}/app.bsky.feed.post/3lreply000001`,
        cid: "bafyreply",
        repo: BlueskyFake.did,
        record: {
          $type: "app.bsky.feed.post",
          text: "same words",
          createdAt: new Date(now).toISOString(),
          reply: { root: { uri: "at://x", cid: "y" }, parent: { uri: "at://x", cid: "y" } }
        }
      })
      expect(yield* client.findPublished!(lookup(credentials, "same words", now - 120_000, now + 1_000)))
        .toEqual({ _tag: "Absent" })
    }))

  it.scopedLive("pages until past the window; more than 500 posts in it cannot be told", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      const now = Date.now()
      const sent = yield* client.publish(request({ platform: "bluesky", credentials, main: part("deep") }))
      // 150 newer posts by another client after ours: ours is on the second page.
      for (let i = 0; i < 150; i++) {
        fake.records.push({
          uri: `at://${BlueskyFake.did}/app.bsky.feed.post/3lnew${String(i).padStart(7, "0")}`,
          cid: `bafynew${i}`,
          repo: BlueskyFake.did,
          record: { $type: "app.bsky.feed.post", text: `noise ${i}`, createdAt: new Date(now + 1).toISOString() }
        })
      }
      const found = yield* client.findPublished!(lookup(credentials, "deep", now - 1_000, now + 5_000))
      expect(found).toMatchObject({ _tag: "Found", platformPostId: sent.platformPostId })
      for (let i = 150; i < 600; i++) {
        fake.records.push({
          uri: `at://${BlueskyFake.did}/app.bsky.feed.post/3lnew${String(i).padStart(7, "0")}`,
          cid: `bafynew${i}`,
          repo: BlueskyFake.did,
          record: { $type: "app.bsky.feed.post", text: `noise ${i}`, createdAt: new Date(now + 1).toISOString() }
        })
      }
      const unknown = yield* client.findPublished!(lookup(credentials, "absent", now - 1_000, now + 5_000))
      expect(unknown._tag).toBe("Unknown")
    }))

  it.scopedLive("a PDS error is a PublishError (the engine then keeps the outcome unknown)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const credentials = yield* connected(client)
      fake.failNext("com.atproto.repo.listRecords", { status: 502, body: { error: "UpstreamFailure", message: "x" } })
      const error = yield* Effect.flip(client.findPublished!(lookup(credentials, "x", 0, Date.now())))
      expect(error.kind).toBe("transient")
    }))

  it("tidMillis reads the creation time of a TID record key", () => {
    // 3jzfcijpj2z2a: a TID from the atproto spec's examples.
    const ms = BlueskyLookup.tidMillis("3jzfcijpj2z2a")!
    expect(new Date(ms).getUTCFullYear()).toBeGreaterThanOrEqual(2022)
    expect(new Date(ms).getUTCFullYear()).toBeLessThanOrEqual(2024)
    expect(BlueskyLookup.tidMillis("3lfake000001")).toBeUndefined()
    expect(BlueskyLookup.tidMillis("self")).toBeUndefined()
  })
})
