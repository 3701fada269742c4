/** The dispatcher's pure parts: requests built for a destination, publish timeouts, the wake-up signal. */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { SocialAccount } from "../src/domain/Account.js"
import { Destination, Metrics } from "../src/domain/Destination.js"
import * as Dispatcher from "../src/publishing/Dispatcher.js"
import { AccountId, DestinationId, MediaId, OrganizationId, PostId } from "../src/kernel/Ids.js"
import type { Platform } from "../src/domain/Platform.js"
import { PlatformContentEntry, Post, ThreadPost } from "../src/domain/Post.js"

const t0 = DateTime.unsafeMake(1_700_000_000_000)
const orgId = OrganizationId.make("00000000-0000-4000-8000-000000000001")
const postId = PostId.make("00000000-0000-4000-8000-000000000002")

const account = (platform: Platform, credentials?: string) =>
  new SocialAccount({
    id: AccountId.make(7),
    organizationId: orgId,
    platform,
    platformAccountId: "p-7",
    accountName: "@herald",
    avatarUrl: "https://example.test/a.png",
    isActive: true,
    connectionFlow: "direct",
    needsReconnection: false,
    tokenExpiresAt: Option.none(),
    lastSuccessAt: Option.none(),
    recentFailures: 0,
    credentials: credentials === undefined ? Option.none() : Option.some(Redacted.make(credentials)),
    createdAt: t0,
    updatedAt: t0
  })

const destination = (platform: Platform, attempts = 1) =>
  new Destination({
    id: DestinationId.make("00000000-0000-4000-8000-000000000003"),
    postId,
    organizationId: orgId,
    accountId: AccountId.make(7),
    platform,
    accountName: "@herald",
    status: "publishing",
    dueAt: t0,
    attempts,
    error: Option.none(),
    platformPostId: Option.none(),
    platformPostUrl: Option.none(),
    publishedAt: Option.none(),
    failedAt: Option.none(),
    metrics: Metrics.zero,
    createdAt: t0,
    updatedAt: t0
  })

const post = (overrides: Partial<ConstructorParameters<typeof Post>[0]> = {}) =>
  new Post({
    id: postId,
    organizationId: orgId,
    createdByKey: Option.none(),
    content: "main text",
    accountIds: [AccountId.make(7)],
    platformContent: {},
    mediaIds: [],
    scheduledFor: Option.none(),
    timezone: Option.none(),
    campaignId: Option.none(),
    isDraft: false,
    createdStatus: "publishing",
    approval: Option.none(),
    idempotencyKey: Option.none(),
    requestHash: Option.none(),
    threadPosts: [],
    useQueue: false,
    createdAt: t0,
    updatedAt: t0,
    ...overrides
  })

describe("Dispatcher.buildRequest", () => {
  const threaded = post({
    platformContent: {
      x: new PlatformContentEntry({ content: "x text", contentType: "Post", settings: { replySettings: "following" } })
    },
    threadPosts: [new ThreadPost({ content: "second" }), new ThreadPost({ content: "third" })]
  })

  it.effect("applies the platform override and passes the thread in order, with destination and attempt", () =>
    Effect.gen(function*() {
      const request = yield* Dispatcher.buildRequest(threaded, destination("x", 2), account("x"), 2)
      expect(request.main.content).toBe("x text")
      expect(request.thread.map((p) => p.content)).toEqual(["second", "third"])
      expect(Option.getOrNull(request.contentType)).toBe("Post")
      expect(request.settings).toEqual({ replySettings: "following" })
      expect(request.destinationId).toBe("00000000-0000-4000-8000-000000000003")
      expect(request.attempt).toBe(2)
    }))

  it.effect("bluesky and threads get the thread too; platforms without threads get the main post only", () =>
    Effect.gen(function*() {
      const bluesky = yield* Dispatcher.buildRequest(threaded, destination("bluesky"), account("bluesky"), 1)
      expect(bluesky.main.content).toBe("main text")
      expect(bluesky.thread.length).toBe(2)
      const threads = yield* Dispatcher.buildRequest(threaded, destination("threads"), account("threads"), 1)
      expect(threads.thread.map((p) => p.content)).toEqual(["second", "third"])
      const telegram = yield* Dispatcher.buildRequest(threaded, destination("telegram"), account("telegram"), 1)
      expect(telegram.thread).toEqual([])
      expect(telegram.settings).toEqual({})
    }))

  it.effect("reads stored credentials as a JSON map, or a lone token", () =>
    Effect.gen(function*() {
      const map = yield* Dispatcher.buildRequest(
        post(),
        destination("telegram"),
        account("telegram", "{\"bot_token\":\"1:a\",\"channel\":\"@c\"}"),
        1
      )
      expect(Redacted.value(map.credentials)).toEqual({ bot_token: "1:a", channel: "@c" })
      const lone = yield* Dispatcher.buildRequest(post(), destination("x"), account("x", "opaque"), 1)
      expect(Redacted.value(lone.credentials)).toEqual({ token: "opaque" })
    }))

  it.effect("media without a media resolver fails the publish as a media error", () =>
    Effect.gen(function*() {
      const withMedia = post({ mediaIds: [MediaId.make("00000000-0000-4000-8000-000000000009")] })
      const exit = yield* Effect.exit(Dispatcher.buildRequest(withMedia, destination("x"), account("x"), 1))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(JSON.stringify(exit.cause)).toContain("\"kind\":\"media\"")
    }))
})

describe("Dispatcher.requestWithoutMedia", () => {
  const threaded = post({
    platformContent: {
      x: new PlatformContentEntry({ content: "x text", contentType: "Post", settings: { replySettings: "following" } })
    },
    threadPosts: [new ThreadPost({ content: "second" }), new ThreadPost({ content: "third", media_ids: [] })]
  })
  const media = MediaId.make("00000000-0000-4000-8000-000000000009")

  it.effect("builds, without an effect, the request buildRequest builds when nothing carries media", () =>
    Effect.gen(function*() {
      for (const platform of ["x", "bluesky", "telegram"] as const) {
        const built = yield* Dispatcher.buildRequest(threaded, destination(platform, 2), account(platform, "opaque"), 2)
        const sync = Dispatcher.requestWithoutMedia(threaded, destination(platform, 2), account(platform, "opaque"), 2)
        expect(sync).toBeDefined()
        expect({ ...sync, credentials: Redacted.value(sync!.credentials) })
          .toEqual({ ...built, credentials: Redacted.value(built.credentials) })
      }
    }))

  it("leaves a post with media on the post or on a thread part to buildRequest", () => {
    expect(Dispatcher.requestWithoutMedia(post({ mediaIds: [media] }), destination("x"), account("x"), 1))
      .toBeUndefined()
    const threadMedia = post({ threadPosts: [new ThreadPost({ content: "second", media_ids: [media] })] })
    expect(Dispatcher.requestWithoutMedia(threadMedia, destination("x"), account("x"), 1)).toBeUndefined()
    // A platform without threads never sends the thread, so its media do not matter there.
    expect(Dispatcher.requestWithoutMedia(threadMedia, destination("telegram"), account("telegram"), 1)?.thread)
      .toEqual([])
  })
})

describe("Dispatcher.abandonedOutcome", () => {
  it("found is published with the platform's id, absent is re-queued, unknown fails as unknown", () => {
    expect(Dispatcher.abandonedOutcome({ _tag: "Found", platformPostId: "9", platformPostUrl: "https://x.com/i/9" }))
      .toEqual({ _tag: "Published", result: { platformPostId: "9", platformPostUrl: "https://x.com/i/9" } })
    expect(Dispatcher.abandonedOutcome({ _tag: "Absent" })).toEqual({
      _tag: "Absent",
      message: Dispatcher.absentOutcomeMessage
    })
    expect(Dispatcher.abandonedOutcome({ _tag: "Unknown", reason: "no lookup" })).toEqual({
      _tag: "Unknown",
      message: Dispatcher.unknownOutcomeMessage
    })
  })
})

describe("Dispatcher.DispatchSignal", () => {
  it.effect("a poke before the wait is not lost; pokes coalesce; clear forgets them", () =>
    Effect.gen(function*() {
      const signal = yield* Dispatcher.makeSignal
      yield* signal.poke
      yield* signal.poke
      yield* signal.take
      const waiting = yield* Effect.fork(signal.take)
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      yield* signal.poke
      yield* Fiber.join(waiting)
      yield* signal.poke
      yield* signal.clear
      const afterClear = yield* Effect.fork(signal.take)
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(afterClear))).toBe(true)
      yield* Fiber.interrupt(afterClear)
    }))
})
