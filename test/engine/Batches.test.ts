/**
 * Dispatch in batches over the SQLite stores and the sandbox: a round's claim, its
 * publishes in flight together, its outcomes recorded together, and a claim size that follows the
 * backlog; with what must not change: a member whose recording fails is recorded alone, the others
 * are not lost.
 */
import { describe, expect, it } from "@effect/vitest"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as ClaimSize from "@herald/core/publishing/ClaimSize"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { PersistenceError } from "@herald/core/kernel/Errors"
import type { PlatformClient } from "@herald/core/platforms/Platforms"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Exit from "effect/Exit"
import { postgresLayer, probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as Engine from "./EngineHarness.js"
import * as W from "./WorkerProcesses.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] dispatch in batches on Postgres: ${pg.reason}`)

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices>, clients?: ReadonlyArray<PlatformClient>) =>
  Effect.provide(self, Engine.layer(clients === undefined ? {} : { clients }))

describe("Dispatch in batches (SQLite + sandbox)", () => {
  it.effect("one member whose recording fails is recorded alone; the rest of the batch is not lost", () =>
    provide(Effect.gen(function*() {
      const ok = yield* Effect.forEach(
        [1, 2, 3],
        (i) => Engine.insertPost({ content: `ok ${i}`, platforms: ["telegram"] })
      )
      const bad = yield* Engine.insertPost({ content: "its account cannot be written", platforms: ["x"] })
      const broken = (yield* Engine.account("x")).id
      // A first publish writes the account's last success: that write fails for x's account only, which
      // fails the batch's transaction; the dispatcher then records each member on its own.
      const failing = Effect.map(AccountStore, (accounts) => ({
        ...accounts,
        recordSuccess: (...args: Parameters<typeof accounts.recordSuccess>) =>
          args[1] === broken
            ? Effect.fail(new PersistenceError({ message: "disk full", cause: "test" }))
            : accounts.recordSuccess(...args)
      }))
      const round = yield* Effect.fork(Engine.runOnce.pipe(Effect.provideServiceEffect(AccountStore, failing)))
      // The failing member is retried (100, 200, 400 ms of test clock) before it is given up.
      for (let i = 0; i < 10 && Option.isNone(yield* Fiber.poll(round)); i++) {
        yield* Engine.settle("20 millis")
        yield* TestClock.adjust("500 millis")
      }
      const summary = yield* Fiber.join(round)
      expect(summary).toMatchObject({ claimed: 4, published: 3, lost: 1 })
      for (const { post } of ok) {
        expect((yield* Engine.findPost(post.id)).destinations[0].status).toBe("published")
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      }
      // Nothing of the failed member was written: it stays claimed until its lease settles it (never re-sent).
      expect((yield* Engine.findPost(bad.post.id)).destinations[0].status).toBe("publishing")
      expect(yield* Engine.eventTypes(bad.post.id)).toEqual(["post.publishing"])
      expect((yield* Engine.Sends).length).toBe(4)
    })))

  it.effect("a batch's publishes are in flight together, and outcomes that arrive together are recorded together", () => {
    let inFlight = 0
    let most = 0
    const gate = Effect.runSync(Deferred.make<void>())
    const held: PlatformClient = {
      platform: "x",
      publish: (request) =>
        Effect.sync(() => {
          inFlight += 1
          most = Math.max(most, inFlight)
        }).pipe(
          Effect.zipRight(Deferred.await(gate)),
          Effect.ensuring(Effect.sync(() => (inFlight -= 1))),
          Effect.as({ platformPostId: request.destinationId ?? "1", platformPostUrl: "https://x.com/i/status/1" })
        )
    }
    return provide(
      Effect.gen(function*() {
        const posts = yield* Effect.forEach(
          [1, 2, 3, 4, 5],
          (i) => Engine.insertPost({ content: `p${i}`, platforms: ["x"] })
        )
        const store = yield* DispatchStore
        const batches: Array<number> = []
        const counting = DispatchStore.of({
          ...store,
          completeAll: (items) =>
            Effect.zipRight(Effect.sync(() => batches.push(items.length)), store.completeAll(items))
        })
        const round = yield* Effect.fork(Engine.runOnce.pipe(Effect.provideService(DispatchStore, counting)))
        expect(yield* Engine.eventually(Effect.sync(() => inFlight === 5))).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.join(round)).toMatchObject({ claimed: 5, published: 5 })
        expect(most).toBe(5)
        // All five answered at once: one transaction, one fenced statement for the five.
        expect(batches).toEqual([5])
        for (const { post } of posts) {
          expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
        }
      }),
      [held]
    )
  })

  it.effect("an account that cannot be read re-queues its destinations unsent, once per account per round; the others publish", () =>
    provide(Effect.gen(function*() {
      const ok = yield* Engine.insertPost({ content: "its account reads", platforms: ["telegram"] })
      const unread = yield* Effect.forEach(
        [1, 2],
        (i) => Engine.insertPost({ content: `unread ${i}`, platforms: ["x"] })
      )
      const broken = (yield* Engine.account("x")).id
      let reads = 0
      const failing = Effect.map(AccountStore, (accounts) => ({
        ...accounts,
        findById: (...args: Parameters<typeof accounts.findById>) => {
          if (args[1] !== broken) return accounts.findById(...args)
          reads += 1
          return Effect.fail(new PersistenceError({ message: "disk busy", cause: "test" }))
        }
      }))
      const summary = yield* Engine.runOnce.pipe(Effect.provideServiceEffect(AccountStore, failing))
      expect(summary).toMatchObject({ claimed: 3, published: 1, requeued: 2 })
      expect((yield* Engine.findPost(ok.post.id)).destinations[0].status).toBe("published")
      for (const { post } of unread) {
        const d = (yield* Engine.findPost(post.id)).destinations[0]
        expect(d.status).toBe("queued")
        expect(Option.getOrNull(d.error)).toBe("Storage was unavailable while preparing the publish")
      }
      // Read up front once, then again by each of its claims (a failed read is not kept).
      expect(reads).toBe(3)
      expect((yield* Engine.Sends).length).toBe(1)
    })))

  it.effect("a defect while preparing one claim loses that claim alone (its lease resolves it); the others publish", () => {
    const broken: PlatformClient = {
      platform: "x",
      // Not a duration: decoding it throws while the claim is prepared.
      timeout: "soon" as unknown as Duration.DurationInput,
      publish: () => Effect.succeed({ platformPostId: "1", platformPostUrl: "https://x.com/i/status/1" })
    }
    return provide(
      Effect.gen(function*() {
        const ok = yield* Engine.insertPost({ content: "telegram is fine", platforms: ["telegram"] })
        const bad = yield* Engine.insertPost({ content: "its client is broken", platforms: ["x"] })
        const summary = yield* Engine.runOnce
        expect(summary).toMatchObject({ claimed: 2, published: 1, lost: 1 })
        expect((yield* Engine.findPost(ok.post.id)).destinations[0].status).toBe("published")
        expect((yield* Engine.findPost(bad.post.id)).destinations[0].status).toBe("publishing")
        expect(yield* Engine.eventTypes(bad.post.id)).toEqual(["post.publishing"])
      }),
      [broken]
    )
  })

  it.effect("no more publishes than `concurrency` are in flight at once; the rest start as slots free", () => {
    let inFlight = 0
    let most = 0
    const started: Array<string> = []
    const gates = new Map<string, Deferred.Deferred<void>>()
    const gated: PlatformClient = {
      platform: "x",
      publish: (request) =>
        Effect.suspend(() => {
          inFlight += 1
          most = Math.max(most, inFlight)
          started.push(request.main.content)
          const gate = Effect.runSync(Deferred.make<void>())
          gates.set(request.main.content, gate)
          return Deferred.await(gate)
        }).pipe(
          Effect.ensuring(Effect.sync(() => (inFlight -= 1))),
          Effect.as({ platformPostId: request.destinationId ?? "1", platformPostUrl: "https://x.com/i/status/1" })
        )
    }
    return provide(
      Effect.gen(function*() {
        yield* Effect.forEach([1, 2, 3, 4, 5], (i) => Engine.insertPost({ content: `p${i}`, platforms: ["x"] }))
        const round = yield* Effect.fork(Dispatcher.runOnce({ ...Engine.worker, concurrency: 2 }, 5))
        expect(yield* Engine.eventually(Effect.sync(() => started.length === 2))).toBe(true)
        yield* Engine.settle()
        expect(started.length).toBe(2)
        // Each publish let go frees one slot for the next claim.
        for (let opened = 0; opened < 5; opened++) {
          expect(yield* Engine.eventually(Effect.sync(() => started.length === Math.min(5, opened + 2)))).toBe(true)
          yield* Deferred.succeed(gates.get(started[opened]!)!, undefined)
        }
        expect(yield* Fiber.join(round)).toMatchObject({ claimed: 5, published: 5 })
        expect(most).toBe(2)
      }),
      [gated]
    )
  })

  it.effect("a publish that does not answer within its client's timeout is interrupted and re-queued; the others of its batch are not held", () => {
    let interrupted = 0
    const slow: PlatformClient = {
      platform: "x",
      timeout: "10 seconds",
      publish: (request) =>
        request.main.content.startsWith("hangs")
          ? Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted += 1))))
          : Effect.succeed({
            platformPostId: request.destinationId ?? "1",
            platformPostUrl: "https://x.com/i/status/1"
          })
    }
    return provide(
      Effect.gen(function*() {
        const hanging = yield* Engine.insertPost({ content: "hangs forever", platforms: ["x"] })
        const quick = yield* Engine.insertPost({ content: "answers at once", platforms: ["x"] })
        const round = yield* Effect.fork(Engine.runOnce)
        // The quick one is recorded while the other still waits for its platform.
        expect(
          yield* Engine.eventually(
            Effect.map(Engine.findPost(quick.post.id), (p) => p.destinations[0].status === "published")
          )
        ).toBe(true)
        yield* Engine.settle()
        yield* TestClock.adjust("9 seconds")
        yield* Engine.settle()
        expect(Option.isNone(yield* Fiber.poll(round))).toBe(true)
        expect(interrupted).toBe(0)
        yield* TestClock.adjust("2 seconds")
        expect(yield* Fiber.join(round)).toMatchObject({ claimed: 2, published: 1, requeued: 1 })
        expect(interrupted).toBe(1)
        const d = (yield* Engine.findPost(hanging.post.id)).destinations[0]
        expect(d.status).toBe("queued")
        expect(Option.getOrNull(d.error)).toBe("The platform did not answer within 10s")
      }),
      [slow]
    )
  })

  it.effect("the claim size doubles while claims come back full and falls back once the backlog is gone", () =>
    provide(Effect.gen(function*() {
      yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Engine.insertPost({ content: `backlog ${i}`, platforms: ["telegram"] })
      )
      const store = yield* DispatchStore
      const limits: Array<number> = []
      const spying = DispatchStore.of({
        ...store,
        claimDue: (options) => Effect.zipRight(Effect.sync(() => limits.push(options.limit)), store.claimDue(options))
      })
      const loop = yield* Effect.fork(
        Dispatcher.run({ ...Engine.worker, batchSize: 8, minBatchSize: 2, pollInterval: "1 hour" }).pipe(
          Effect.provideService(DispatchStore, spying)
        )
      )
      expect(yield* Engine.eventually(Effect.map(Engine.Sends, (s) => s.length === 20))).toBe(true)
      expect(yield* Engine.eventually(Effect.sync(() => limits.length >= 4))).toBe(true)
      // Short: the loop sleeps (nothing else is due) until its next poll.
      yield* Engine.settle()
      yield* TestClock.adjust("1 hour")
      expect(yield* Engine.eventually(Effect.sync(() => limits.length >= 5))).toBe(true)
      yield* Fiber.interrupt(loop)
      // 2 + 4 + 8 full, then 6 of 8: the backlog is gone, back to 2 (which finds nothing and sleeps).
      expect(limits.slice(0, 5)).toEqual([2, 4, 8, 8, 2])
      // A quiet queue gets a small claim again: one new post is taken by a claim of 2.
      const loop2 = yield* Effect.fork(
        Dispatcher.run({ ...Engine.worker, batchSize: 8, minBatchSize: 2, pollInterval: "1 hour" }).pipe(
          Effect.provideService(DispatchStore, spying)
        )
      )
      yield* Engine.settle()
      limits.length = 0
      yield* Engine.insertPost({ content: "one more", platforms: ["telegram"] })
      yield* Dispatcher.poke
      // The test clock moves on at each look: a wait the loop starts late on a loaded machine (after a
      // single move of the clock) would otherwise never end.
      expect(
        yield* Engine.eventually(
          Effect.zipRight(TestClock.adjust("1 hour"), Effect.map(Engine.Sends, (s) => s.length === 21))
        )
      ).toBe(true)
      yield* Fiber.interrupt(loop2)
      expect(limits.every((l) => l === 2)).toBe(true)
    })))
  it.effect("while a backlog is claimed, the claims go ahead of recording and do not sweep; every outcome is then recorded once", () =>
    provide(Effect.gen(function*() {
      const posts = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Engine.insertPost({ content: `backlog ${i}`, platforms: ["telegram"] })
      )
      const store = yield* DispatchStore
      const steps: Array<string> = []
      let sweeps = 0
      const spying = DispatchStore.of({
        ...store,
        claimDue: (options) =>
          Effect.tap(store.claimDue(options), (claims) => Effect.sync(() => steps.push(`claim ${claims.length}`))),
        completeAll: (items) =>
          Effect.tap(store.completeAll(items), () => Effect.sync(() => steps.push(`record ${items.length}`))),
        takeOverAbandoned: (options) =>
          Effect.zipRight(Effect.sync(() => (sweeps += 1)), store.takeOverAbandoned(options))
      })
      const loop = yield* Effect.fork(
        Dispatcher.run({ ...Engine.worker, batchSize: 4, minBatchSize: 4, pollInterval: "1 hour" }).pipe(
          Effect.provideService(DispatchStore, spying)
        )
      )
      expect(yield* Engine.eventually(Effect.map(Engine.Sends, (s) => s.length === 20))).toBe(true)
      expect(
        yield* Engine.eventually(
          Effect.sync(() =>
            steps.filter((s) => s.startsWith("record")).reduce((n, s) => n + Number(s.split(" ")[1]), 0) === 20
          )
        )
      ).toBe(true)
      yield* Fiber.interrupt(loop)
      // Claims go ahead of recording: the loop claims the next batches before the first outcomes are
      // recorded (on a quiet machine all five full claims and the short one that ends the backlog come
      // first; on a loaded one a recording may slip in after the first few, so only that order is held).
      const firstRecord = steps.findIndex((s) => s.startsWith("record"))
      expect(steps.slice(0, 2)).toEqual(["claim 4", "claim 4"])
      expect(firstRecord).toBeGreaterThan(1)
      expect(steps.filter((s) => s.startsWith("claim")).reduce((n, s) => n + Number(s.split(" ")[1]), 0)).toBe(20)
      // The loop's own sweep only: its rounds never sweep (settling a dead process's claims must not
      // hold up new work).
      expect(sweeps).toBe(1)
      for (const { post } of posts) {
        expect((yield* Engine.findPost(post.id)).destinations[0].status).toBe("published")
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      }
      expect((yield* Engine.Sends).length).toBe(20)
    })))
  it.effect("claims stop going ahead once 32 batches are claimed and not yet recorded; they resume as recording catches up", () => {
    const gate = Effect.runSync(Deferred.make<void>())
    return provide(Effect.gen(function*() {
      yield* Effect.forEach(
        Array.from({ length: 160 }, (_, i) => i),
        (i) => Engine.insertPost({ content: `backlog ${i}`, platforms: ["telegram"] }),
        { discard: true }
      )
      const store = yield* DispatchStore
      let claimed = 0
      const held = DispatchStore.of({
        ...store,
        claimDue: (options) =>
          Effect.tap(store.claimDue(options), (claims) => Effect.sync(() => (claimed += claims.length))),
        // Recording is held until the gate opens.
        completeAll: (items) => Effect.zipRight(Deferred.await(gate), store.completeAll(items))
      })
      const loop = yield* Effect.fork(
        Dispatcher.run({ ...Engine.worker, batchSize: 4, minBatchSize: 4, pollInterval: "1 hour" }).pipe(
          Effect.provideService(DispatchStore, held)
        )
      )
      expect(yield* Engine.eventually(Effect.sync(() => claimed === 128))).toBe(true)
      yield* Engine.settle("200 millis")
      // 32 x 4 claimed, none recorded: the loop waits for the oldest round's recording.
      expect(claimed).toBe(128)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Engine.eventually(Effect.map(Engine.Sends, (s) => s.length === 160))).toBe(true)
      expect(yield* Engine.eventually(Effect.map(W.statusCounts, (c) => c["published"] === 160))).toBe(true)
      yield* Fiber.interrupt(loop)
    }))
  })
  it.effect("under the loop too, a publish that does not answer within its timeout is interrupted and re-queued", () => {
    let interrupted = 0
    const slow: PlatformClient = {
      platform: "x",
      timeout: "10 seconds",
      publish: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted += 1))))
    }
    return provide(
      Effect.gen(function*() {
        const hanging = yield* Engine.insertPost({ content: "hangs forever", platforms: ["x"] })
        const loop = yield* Effect.fork(Dispatcher.run({ ...Engine.worker, pollInterval: "1 hour" }))
        expect(
          yield* Engine.eventually(
            Effect.map(Engine.findPost(hanging.post.id), (p) => p.destinations[0].status === "publishing")
          )
        ).toBe(true)
        yield* Engine.settle()
        yield* TestClock.adjust("11 seconds")
        expect(
          yield* Engine.eventually(
            Effect.map(Engine.findPost(hanging.post.id), (p) => p.destinations[0].status === "queued")
          )
        ).toBe(true)
        expect(interrupted).toBe(1)
        yield* Fiber.interrupt(loop)
      }),
      [slow]
    )
  })
  it.effect("claims whose recording waits for the next claim keep their leases renewed; none is taken over or sent twice", () => {
    const gate = Effect.runSync(Deferred.make<void>())
    return provide(Effect.gen(function*() {
      const posts = yield* Effect.forEach(
        [1, 2, 3, 4],
        (i) => Engine.insertPost({ content: `p${i}`, platforms: ["telegram"] })
      )
      const postStore = yield* PostStore
      let reads = 0
      // The second round's read of its posts (part of its claim) is held: the first round's outcomes
      // wait for it, unrecorded.
      const held = PostStore.of({
        ...postStore,
        findMany: (ids) =>
          Effect.suspend(() =>
            (reads += 1) === 2
              ? Effect.zipRight(Deferred.await(gate), postStore.findMany(ids))
              : postStore.findMany(ids)
          )
      })
      const loop = yield* Effect.fork(
        Dispatcher.run({
          ...Engine.worker,
          batchSize: 2,
          minBatchSize: 2,
          leaseFor: "30 seconds",
          renewEvery: "5 seconds",
          pollInterval: "10 seconds"
        }).pipe(
          Effect.provideService(PostStore, held)
        )
      )
      expect(yield* Engine.eventually(Effect.map(Engine.Sends, (s) => s.length === 2))).toBe(true)
      expect(yield* Engine.eventually(Effect.sync(() => reads === 2))).toBe(true)
      const first = yield* Effect.forEach(posts, (p) => Engine.findPost(p.post.id))
      const claimedAll = first.filter((p) => p.destinations[0].status === "publishing")
      expect(claimedAll.length).toBe(4)
      // A minute of test clock: the leases (30 s) would have run out and the sweep taken them over.
      for (let i = 0; i < 60; i++) {
        yield* TestClock.adjust("1 second")
        yield* Engine.settle("5 millis")
      }
      for (const { post } of posts) {
        expect((yield* Engine.findPost(post.id)).destinations[0].status).toBe("publishing")
      }
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Engine.eventually(Effect.map(W.statusCounts, (c) => c["published"] === 4))).toBe(true)
      yield* Fiber.interrupt(loop)
      expect((yield* Engine.Sends).length).toBe(4)
      for (const { post } of posts) {
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      }
    }))
  })
})

describe.skipIf(!pg.available)("Dispatch in batches (Postgres + sandbox)", () => {
  it.effect("the loop's next claim begins while the previous claim's transaction still writes its events", () =>
    Effect.gen(function*() {
      const posts = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i),
        (i) => Engine.insertPost({ content: `backlog ${i}`, platforms: ["telegram"] })
      )
      const store = yield* DispatchStore
      const events = yield* EventStore
      let claims = 0
      const second = yield* Deferred.make<void>()
      const counting = DispatchStore.of({
        ...store,
        claimDue: (options) =>
          Effect.tap(store.claimDue(options), () =>
            Effect.sync(() => {
              claims += 1
              if (claims === 2) Deferred.unsafeDone(second, Exit.void)
            }))
      })
      // The first claim's events are held (5 s at most) until a second claim has answered.
      let held = false
      let overlapped: boolean | undefined
      const holding = EventStore.of({
        ...events,
        append: (appended) => {
          if (held || !appended.some((e) => e.type === "post.publishing")) return events.append(appended)
          held = true
          return Effect.race(Deferred.await(second), Engine.settle("5 seconds")).pipe(
            Effect.zipRight(Effect.map(Deferred.isDone(second), (done) => (overlapped = done))),
            Effect.zipRight(events.append(appended))
          )
        }
      })
      const loop = yield* Effect.fork(
        Dispatcher.run({ ...Engine.worker, batchSize: 4, minBatchSize: 4, pollInterval: "1 hour" }).pipe(
          Effect.provideService(DispatchStore, counting),
          Effect.provideService(EventStore, holding)
        )
      )
      expect(yield* Engine.eventually(Effect.map(W.statusCounts, (c) => c["published"] === 12), "10 seconds")).toBe(
        true
      )
      yield* Fiber.interrupt(loop)
      expect(overlapped).toBe(true)
      expect((yield* Engine.Sends).length).toBe(12)
      for (const { post } of posts) {
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      }
    }).pipe(Effect.provide(Engine.layer({ database: postgresLayer }))))
})

describe("ClaimSize", () => {
  const bounds = { min: 50, max: 500 }
  it("doubles after a full claim, up to the largest", () => {
    expect(ClaimSize.next(50, 50, bounds)).toBe(100)
    expect(ClaimSize.next(400, 400, bounds)).toBe(500)
    expect(ClaimSize.next(500, 500, bounds)).toBe(500)
  })
  it("falls back to the smallest after a short claim", () => {
    expect(ClaimSize.next(400, 399, bounds)).toBe(50)
    expect(ClaimSize.next(50, 0, bounds)).toBe(50)
  })
  it("a full claim leaves due work behind", () => {
    expect(ClaimSize.full(100, 100)).toBe(true)
    expect(ClaimSize.full(100, 99)).toBe(false)
  })
})
