/**
 * Posts created through the posts use cases, published by the dispatcher (SQLite + sandbox, test
 * clock): draft then schedule, scheduled, immediate with a poke; the events of the whole flow in order.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import type { PostId } from "@herald/core/kernel/Ids"
import * as Posts from "@herald/core/posts/Posts"
import type { Crypto } from "@herald/core/kernel/Crypto"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { apiKey } from "../../packages/adapters/test/contract/Fixtures.js"
import * as Engine from "./EngineHarness.js"

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices | Dispatcher.DispatchSignal | Crypto>) =>
  Effect.provide(
    self,
    Layer.mergeAll(Engine.layer(), NodeCrypto.layer, Dispatcher.layerSignal)
  )

const caller = Effect.map(Engine.TestOrg, (org) => ({ key: apiKey(org.id) }))

/** Starts the test clock at a realistic instant: the posts rules compare with the current time. */
const atStart = TestClock.setTime(DateTime.toEpochMillis(DateTime.unsafeMake("2026-07-01T10:00:00.000Z")))

const published = (postId: PostId) => Effect.map(Engine.eventTypes(postId), (types) => types.includes("post.published"))

describe("posts use cases through the dispatcher", () => {
  it.effect("draft -> schedule -> published at scheduled_for", () =>
    provide(Effect.gen(function*() {
      yield* atStart
      const org = yield* Engine.TestOrg
      const c = yield* caller
      const { record } = yield* Posts.create(c, { content: "a draft", draft: true, account_ids: [org.accounts.x.id] })
      expect(record.destinations).toEqual([])
      const at = DateTime.add(yield* DateTime.now, { minutes: 5 })
      yield* Posts.schedule(c, record.post.id, { scheduled_for: DateTime.formatIso(at) })
      yield* TestClock.adjust("4 minutes")
      expect((yield* Engine.runOnce).claimed).toBe(0)
      yield* TestClock.adjust("1 minute")
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, published: 1 })
      const types = yield* Engine.eventTypes(record.post.id)
      expect(types.slice(-2)).toEqual(["post.publishing", "post.published"])
      expect(types.filter((t) => t === "post.publishing").length).toBe(1)
    })))

  it.effect("scheduled on create: post.scheduled, then post.publishing and post.published when due", () =>
    provide(Effect.gen(function*() {
      yield* atStart
      const org = yield* Engine.TestOrg
      const c = yield* caller
      const at = DateTime.add(yield* DateTime.now, { hours: 2 })
      const { record } = yield* Posts.create(c, {
        content: "later on",
        account_ids: [org.accounts.telegram.id, org.accounts.discord.id],
        scheduled_for: DateTime.formatIso(at)
      })
      yield* TestClock.adjust("2 hours")
      expect(yield* Engine.runOnce).toMatchObject({ claimed: 2, published: 2 })
      const types = yield* Engine.eventTypes(record.post.id)
      expect(types[0]).toBe("post.scheduled")
      expect(types.slice(1, 3)).toEqual(["post.publishing", "post.publishing"])
      expect(types.slice(3)).toEqual(["post.published", "post.published"])
    })))

  it.effect("immediate: created while the dispatcher sleeps, published at once (poked)", () =>
    provide(Effect.gen(function*() {
      yield* atStart
      const org = yield* Engine.TestOrg
      const c = yield* caller
      const fiber = yield* Effect.fork(Dispatcher.run({ ...Engine.worker, pollInterval: "1 hour" }))
      yield* Engine.settle()
      const { record } = yield* Posts.create(c, { content: "right now", account_ids: [org.accounts.bluesky.id] })
      expect(yield* Engine.eventually(published(record.post.id))).toBe(true)
      yield* Fiber.interrupt(fiber)
      const [d] = (yield* Engine.findPost(record.post.id)).destinations
      expect(d.status).toBe("published")
    })))
})
