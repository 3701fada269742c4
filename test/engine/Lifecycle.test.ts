/**
 * The destination lifecycle end to end over the SQLite stores and the sandbox, driven by the test clock:
 * every path, with its events in order.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as CircuitBreaker from "@herald/core/posts/CircuitBreaker"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import { type PlatformClient, PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Engine from "./EngineHarness.js"

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices>, clients?: ReadonlyArray<PlatformClient>) =>
  Effect.provide(self, Engine.layer(clients === undefined ? {} : { clients }))

describe("Dispatcher lifecycle (SQLite + sandbox)", () => {
  it.effect("immediate: queued -> publishing -> published, with post.publishing then post.published", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({ content: "hello", platforms: ["telegram"] })
      const round = yield* Engine.runOnce
      expect(round).toMatchObject({ claimed: 1, published: 1 })
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      const [d] = (yield* Engine.findPost(post.id)).destinations
      expect(d.status).toBe("published")
      expect(d.attempts).toBe(1)
      expect(Option.getOrThrow(d.platformPostUrl)).toMatch(/^https:\/\/t\.me\/sandbox_telegram\/\d+$/)
      // post.published carries exactly the spec's fields.
      const published = (yield* Engine.eventsOf(post.id)).find((e) => e.type === "post.published")!
      expect(Object.keys(published.data).sort()).toEqual(
        ["account_id", "account_name", "destination_id", "platform", "platform_post_id", "post_id", "published_at"]
      )
      expect(published.data).toMatchObject({
        post_id: post.id,
        destination_id: d.id,
        platform: "telegram",
        account_id: d.accountId,
        account_name: "Sandbox telegram",
        platform_post_id: Option.getOrThrow(d.platformPostId),
        published_at: DateTime.formatIso(Option.getOrThrow(d.publishedAt))
      })
      const account = yield* Engine.account("telegram")
      expect(Option.isSome(account.lastSuccessAt)).toBe(true)
      expect((yield* Engine.Sends).length).toBe(1)
    })))

  it.effect("scheduled: nothing is sent before scheduled_for, and it is sent once due", () =>
    provide(Effect.gen(function*() {
      const now = yield* DateTime.now
      const { post } = yield* Engine.insertPost({
        content: "later",
        platforms: ["discord"],
        dueAt: DateTime.add(now, { minutes: 10 })
      })
      yield* TestClock.adjust("9 minutes")
      expect((yield* Engine.runOnce).claimed).toBe(0)
      expect((yield* Engine.Sends).length).toBe(0)
      yield* TestClock.adjust("1 minute")
      expect((yield* Engine.runOnce).published).toBe(1)
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
    })))

  it.effect("transient then success: requeued with back-off, published on the second attempt", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({ content: "wobbly [sandbox:flaky]", platforms: ["x"] })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, requeued: 1 })
      const [queued] = (yield* Engine.findPost(post.id)).destinations
      expect(queued.status).toBe("queued")
      expect(queued.attempts).toBe(1)
      expect(Option.getOrThrow(queued.error)).toContain("[sandbox:flaky]")
      const now = yield* DateTime.now
      expect(DateTime.greaterThan(queued.dueAt, now)).toBe(true)
      // Not before the back-off has passed.
      expect((yield* Engine.runOnce).claimed).toBe(0)
      yield* TestClock.setTime(DateTime.toEpochMillis(queued.dueAt))
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, published: 1 })
      const [d] = (yield* Engine.findPost(post.id)).destinations
      expect(d.status).toBe("published")
      expect(d.attempts).toBe(2)
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.publishing", "post.published"])
      expect((yield* Engine.Sends).map((s) => s.outcome)).toEqual(["flaky", "published"])
    })))

  it.effect("transient every time: failed after the attempt limit, with post.failed once", () => {
    const down: PlatformClient = {
      platform: "linkedin",
      publish: () => Effect.fail(new PublishError({ kind: "transient", message: "LinkedIn answered 503" }))
    }
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "never lands", platforms: ["linkedin"] })
        let rounds = 0
        while (rounds < 20) {
          rounds += 1
          yield* Engine.runOnce
          const [d] = (yield* Engine.findPost(post.id)).destinations
          if (d.status === "failed") break
          yield* TestClock.setTime(DateTime.toEpochMillis(d.dueAt))
        }
        const [d] = (yield* Engine.findPost(post.id)).destinations
        expect(d.status).toBe("failed")
        expect(Option.getOrThrow(d.error)).toMatch(/LinkedIn answered 503 \(gave up after \d+ attempts\)/)
        const types = yield* Engine.eventTypes(post.id)
        expect(types.filter((t) => t === "post.publishing").length).toBe(d.attempts)
        expect(types.at(-1)).toBe("post.failed")
        expect(types.filter((t) => t === "post.failed").length).toBe(1)
        // A transient failure is not the account's fault.
        expect((yield* Engine.account("linkedin")).recentFailures).toBe(0)
      }),
      [down]
    )
  })

  it.effect("permanent: failed at once, counted for the circuit breaker and the account", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({
        content: "rejected [sandbox:fail]",
        platforms: ["threads"],
        requestHash: "hash-1"
      })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, failed: 1 })
      const [d] = (yield* Engine.findPost(post.id)).destinations
      expect(d.status).toBe("failed")
      expect(d.attempts).toBe(1)
      expect(Option.getOrThrow(d.error)).toContain("rejected the post")
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.failed"])
      const failed = (yield* Engine.eventsOf(post.id)).at(-1)!
      expect(failed.data).toMatchObject({ post_id: post.id, destination_id: d.id, error: Option.getOrThrow(d.error) })
      expect((yield* Engine.account("threads")).recentFailures).toBe(1)
      expect(yield* CircuitBreaker.failureCount((yield* Engine.TestOrg).id, "hash-1")).toBe(1)
    })))

  it.effect("a post whose destinations all fail permanently counts once for the circuit breaker", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({
        content: "rejected everywhere [sandbox:fail]",
        platforms: ["threads", "x", "telegram"],
        requestHash: "hash-many"
      })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 3, failed: 3 })
      expect((yield* Engine.findPost(post.id)).destinations.map((d) => d.status)).toEqual([
        "failed",
        "failed",
        "failed"
      ])
      expect(yield* CircuitBreaker.failureCount((yield* Engine.TestOrg).id, "hash-many")).toBe(1)
    })))

  it.effect("auth: failed, account needs reconnection, account.reconnect_needed once", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({ content: "revoked [sandbox:auth]", platforms: ["bluesky"] })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, failed: 1 })
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.failed", "account.reconnect_needed"])
      const account = yield* Engine.account("bluesky")
      expect(account.needsReconnection).toBe(true)
      // The next post to that account fails without reaching the platform, and no second reconnect event.
      const sendsBefore = (yield* Engine.Sends).length
      const second = yield* Engine.insertPost({ content: "fine text", platforms: ["bluesky"] })
      yield* Engine.runOnce
      expect((yield* Engine.Sends).length).toBe(sendsBefore)
      expect(yield* Engine.eventTypes(second.post.id)).toEqual(["post.publishing", "post.failed"])
      const [d] = (yield* Engine.findPost(second.post.id)).destinations
      expect(Option.getOrThrow(d.error)).toContain("needs reconnection")
    })))

  it.effect("inactive account: failed without calling the platform, not counted against the account or breaker", () =>
    provide(Effect.gen(function*() {
      const before = yield* Engine.account("youtube")
      yield* (yield* AccountStore).update(new SocialAccount({ ...before, isActive: false }))
      const { post } = yield* Engine.insertPost({ content: "into the void", platforms: ["youtube"], requestHash: "h2" })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, failed: 1 })
      const [d] = (yield* Engine.findPost(post.id)).destinations
      expect(Option.getOrThrow(d.error)).toContain("disconnected or inactive")
      expect((yield* Engine.Sends).length).toBe(0)
      expect((yield* Engine.account("youtube")).recentFailures).toBe(0)
      expect(yield* CircuitBreaker.failureCount((yield* Engine.TestOrg).id, "h2")).toBe(0)
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.failed"])
    })))

  it.effect("partially failed: a mix fires post.partially_failed once, after the last destination", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({
        content: "mixed",
        platforms: ["x", "telegram", "discord"],
        platformContent: { x: { content: "mixed [sandbox:fail]" } }
      })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 3, published: 2, failed: 1 })
      const types = yield* Engine.eventTypes(post.id)
      expect(types.slice(0, 3)).toEqual(["post.publishing", "post.publishing", "post.publishing"])
      expect([...types.slice(3, 6)].sort()).toEqual(["post.failed", "post.published", "post.published"])
      expect(types.slice(6)).toEqual(["post.partially_failed"])
      const event = (yield* Engine.eventsOf(post.id)).at(-1)!
      expect(event.data).toMatchObject({ post_id: post.id, published_count: 2, failed_count: 1 })
    })))

  it.effect("all failed or all published: no post.partially_failed", () =>
    provide(Effect.gen(function*() {
      const ok = yield* Engine.insertPost({ content: "fine", platforms: ["x", "telegram"] })
      const bad = yield* Engine.insertPost({ content: "[sandbox:fail]", platforms: ["x", "telegram"] })
      yield* Engine.runOnce
      expect(yield* Engine.eventTypes(ok.post.id)).not.toContain("post.partially_failed")
      expect(yield* Engine.eventTypes(bad.post.id)).not.toContain("post.partially_failed")
    })))

  it.effect("thread: the thread parts reach the platform in order, after the override of the main post", () => {
    const seen: Array<ReadonlyArray<string>> = []
    const recorder: PlatformClient = {
      ...Sandbox.make("x"),
      publish: (request) => {
        seen.push([request.main.content, ...request.thread.map((p) => p.content)])
        return Sandbox.make("x").publish(request)
      }
    }
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({
          content: "1/3 main",
          platforms: ["x", "telegram"],
          platformContent: { x: { content: "1/3 main for x" } },
          threadPosts: ["2/3 middle", "3/3 end"]
        })
        yield* Engine.runOnce
        expect(seen).toEqual([["1/3 main for x", "2/3 middle", "3/3 end"]])
        // Telegram has no threads: it gets the main post only.
        const telegram = (yield* Engine.Sends).filter((s) => s.platform === "telegram")
        expect(telegram.map((s) => s.parts)).toEqual([1])
        expect(yield* Engine.eventTypes(post.id)).toContain("post.published")
      }),
      [recorder]
    )
  })

  it.effect("dead worker: a lease that ran out is resolved as failed, outcome unknown, never re-sent", () =>
    provide(Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({ content: "in flight", platforms: ["facebook"] })
      const store = yield* DispatchStore
      // Another worker claims it and dies before recording anything.
      const [claim] = yield* store.claimDue({
        now: yield* DateTime.now,
        limit: 10,
        leaseFor: "1 minute",
        workerId: "doomed"
      })
      expect(claim).toBeDefined()
      expect((yield* Engine.runOnce).claimed).toBe(0)
      yield* TestClock.adjust("61 seconds")
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 0, expired: 1 })
      const [d] = (yield* Engine.findPost(post.id)).destinations
      expect(d.status).toBe("failed")
      expect(Option.getOrThrow(d.error)).toBe(Dispatcher.unknownOutcomeMessage)
      expect((yield* Engine.Sends).length).toBe(0)
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.failed"])
      // The dead worker's late completion is fenced off: nothing written, no event.
      const late = yield* Dispatcher.record(claim, {
        _tag: "Published",
        result: { platformPostId: "1", platformPostUrl: "https://facebook.com/1" }
      }, { post: Option.some(post), destinationCount: 1 })
      expect(late).toBe("lost")
      expect((yield* Engine.findPost(post.id)).destinations[0].status).toBe("failed")
      expect(yield* Engine.eventTypes(post.id)).toEqual(["post.failed"])
    })))

  it.effect("a batch of outcomes in one transaction: a lost claim writes nothing, the others are recorded", () =>
    provide(Effect.gen(function*() {
      const a = yield* Engine.insertPost({ content: "a", platforms: ["x"] })
      const b = yield* Engine.insertPost({ content: "b", platforms: ["x"] })
      const store = yield* DispatchStore
      const claims = yield* store.claimDue({ now: yield* DateTime.now, limit: 10, leaseFor: "1 minute", workerId: "w" })
      const claimOf = (postId: string) => claims.find((c) => c.destination.postId === postId)!
      // Another worker already resolved a's claim: its lease token no longer matches.
      const stale = { ...claimOf(a.post.id), leaseToken: "someone-else" }
      const published = (id: string) => ({
        _tag: "Published" as const,
        result: { platformPostId: id, platformPostUrl: `https://x.com/i/status/${id}` }
      })
      const results = yield* Dispatcher.recordAll([
        { claim: stale, outcome: published("1"), loaded: { post: Option.some(a.post), destinationCount: 1 } },
        {
          claim: claimOf(b.post.id),
          outcome: published("2"),
          loaded: { post: Option.some(b.post), destinationCount: 1 }
        }
      ])
      expect(results).toEqual(["lost", "published"])
      expect((yield* Engine.findPost(a.post.id)).destinations[0].status).toBe("publishing")
      expect(yield* Engine.eventTypes(a.post.id)).toEqual([])
      expect((yield* Engine.findPost(b.post.id)).destinations[0].status).toBe("published")
      expect(yield* Engine.eventTypes(b.post.id)).toEqual(["post.published"])
    })))

  it.effect("rounds that read the account before either recorded: the second finds it fresh and leaves its row", () =>
    provide(Effect.gen(function*() {
      const a = yield* Engine.insertPost({ content: "a", platforms: ["x"] })
      const b = yield* Engine.insertPost({ content: "b", platforms: ["x"] })
      // Both rounds read the account before any success was recorded (rounds of the loop overlap).
      const before = yield* Engine.account("x")
      expect(Option.isNone(before.lastSuccessAt)).toBe(true)
      const store = yield* DispatchStore
      const claims = yield* store.claimDue({ now: yield* DateTime.now, limit: 10, leaseFor: "1 minute", workerId: "w" })
      const pending = (postId: string, id: string) => ({
        claim: claims.find((c) => c.destination.postId === postId)!,
        outcome: {
          _tag: "Published" as const,
          result: { platformPostId: id, platformPostUrl: `https://x.com/i/status/${id}` }
        },
        loaded: { post: Option.none(), destinationCount: 1, account: before }
      })
      expect(yield* Dispatcher.recordAll([pending(a.post.id, "1")])).toEqual(["published"])
      const first = yield* Engine.account("x")
      yield* TestClock.adjust("10 seconds")
      expect(yield* Dispatcher.recordAll([pending(b.post.id, "2")])).toEqual(["published"])
      // The first success, under a minute old, stands: the account row was not written again.
      const second = yield* Engine.account("x")
      expect(DateTime.toEpochMillis(second.updatedAt)).toBe(DateTime.toEpochMillis(first.updatedAt))
      expect(second.lastSuccessAt).toEqual(first.lastSuccessAt)
      expect(Option.isSome(second.lastSuccessAt)).toBe(true)
    })))
  it.effect("a success clears an account's recent permanent failures at once, however fresh its last success", () =>
    provide(Effect.gen(function*() {
      const accounts = yield* AccountStore
      const before = yield* Engine.account("threads")
      // Failing enough for the health report's `recent_permanent_failures`, with a success seconds ago.
      yield* accounts.update(
        new SocialAccount({
          ...before,
          recentFailures: 3,
          lastSuccessAt: Option.some(DateTime.subtract(yield* DateTime.now, { seconds: 5 }))
        })
      )
      yield* Engine.insertPost({ content: "this one lands", platforms: ["threads"] })
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, published: 1 })
      const after = yield* Engine.account("threads")
      expect(after.recentFailures).toBe(0)
      expect(after.lastSuccessAt).toEqual(Option.some(yield* DateTime.now))
    })))

  it.effect("a batch offers its account's success to the store once, whether or not the store writes it", () =>
    provide(Effect.gen(function*() {
      const posts = yield* Effect.forEach([1, 2, 3], (i) => Engine.insertPost({ content: `p${i}`, platforms: ["x"] }))
      // Read by the round before another round recorded a success: the batch believes it stale.
      const before = yield* Engine.account("x")
      const accounts = yield* AccountStore
      // The other round's success, under a minute old: the store leaves the row alone.
      expect(Option.isSome(yield* accounts.recordSuccess(before.organizationId, before.id, yield* DateTime.now))).toBe(
        true
      )
      const written = yield* Engine.account("x")
      yield* TestClock.adjust("10 seconds")
      let offered = 0
      const counting = AccountStore.of({
        ...accounts,
        recordSuccess: (...args) => Effect.zipRight(Effect.sync(() => (offered += 1)), accounts.recordSuccess(...args))
      })
      const store = yield* DispatchStore
      const claims = yield* store.claimDue({ now: yield* DateTime.now, limit: 10, leaseFor: "1 minute", workerId: "w" })
      const pending = claims.map((claim, i) => ({
        claim,
        outcome: {
          _tag: "Published" as const,
          result: { platformPostId: `${i}`, platformPostUrl: `https://x.com/i/status/${i}` }
        },
        loaded: { post: Option.none(), destinationCount: 1, account: before }
      }))
      expect(pending.length).toBe(posts.length)
      expect(yield* Dispatcher.recordAll(pending).pipe(Effect.provideService(AccountStore, counting))).toEqual([
        "published",
        "published",
        "published"
      ])
      expect(offered).toBe(1)
      expect((yield* Engine.account("x")).updatedAt).toEqual(written.updatedAt)
    })))

  it.effect("on time: the loop sleeps until the due instant, not until a poll", () =>
    provide(Effect.gen(function*() {
      const now = yield* DateTime.now
      const { post } = yield* Engine.insertPost({
        content: "on the dot",
        platforms: ["pinterest"],
        dueAt: DateTime.add(now, { minutes: 30 })
      })
      const fiber = yield* Effect.fork(Dispatcher.run({ ...Engine.worker, pollInterval: "1 hour" }))
      yield* Engine.settle()
      yield* TestClock.adjust("29 minutes")
      yield* Engine.settle()
      expect((yield* Engine.Sends).length).toBe(0)
      yield* TestClock.adjust("1 minute")
      expect(yield* Engine.eventually(Effect.map(Engine.Sends, (s) => s.length === 1))).toBe(true)
      const [send] = yield* Engine.Sends
      // Started at the due instant of the test clock.
      expect(DateTime.toEpochMillis(send.at)).toBe(DateTime.toEpochMillis(now) + 30 * 60_000)
      expect(
        yield* Engine.eventually(Effect.map(Engine.eventTypes(post.id), (t) => t.includes("post.published")))
      ).toBe(true)
      yield* Fiber.interrupt(fiber)
    })))

  it.effect("stopping the loop waits for the publish in flight, which is recorded, not abandoned", () => {
    let started = false
    const slow: PlatformClient = {
      platform: "x",
      publish: () =>
        Effect.sync(() => {
          started = true
        }).pipe(
          Effect.zipRight(Effect.sleep("5 seconds")),
          Effect.as({ platformPostId: "42", platformPostUrl: "https://x.com/i/status/42" })
        )
    }
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "slow one", platforms: ["x"] })
        const fiber = yield* Effect.fork(Dispatcher.run({ ...Engine.worker, pollInterval: "1 hour" }))
        expect(yield* Engine.eventually(Effect.sync(() => started))).toBe(true)
        const stopping = yield* Effect.fork(Fiber.interrupt(fiber))
        yield* Engine.settle()
        // Still publishing: the stop waits.
        expect(Option.isNone(yield* Fiber.poll(stopping))).toBe(true)
        yield* TestClock.adjust("5 seconds")
        yield* Fiber.join(stopping)
        const [d] = (yield* Engine.findPost(post.id)).destinations
        expect(d.status).toBe("published")
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      }),
      [slow]
    )
  })

  it.effect("poke: an immediate post created while the loop sleeps starts at once", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Dispatcher.run({ ...Engine.worker, pollInterval: "1 hour" }))
      yield* Engine.settle()
      const { post } = yield* Engine.insertPost({ content: "now please", platforms: ["tiktok"] })
      yield* Dispatcher.poke
      expect(
        yield* Engine.eventually(Effect.map(Engine.eventTypes(post.id), (t) => t.includes("post.published")))
      ).toBe(true)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(Dispatcher.layerSignal), (self) => provide(self)))
})
