/** The metrics sweep over the SQLite stores and the sandbox, driven by the test clock. */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import type { PostId } from "@herald/core/kernel/Ids"
import * as MetricsSweep from "@herald/core/analytics/MetricsSweep"
import * as Worker from "@herald/http/Worker"
import { type PlatformClient, PublishError } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Engine from "./EngineHarness.js"

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices>, clients: ReadonlyArray<PlatformClient> = []) =>
  Effect.provide(self, Engine.layer({ clients }))

/** Publishes a post to `platforms` through the dispatcher, now. */
const published = (platforms: Parameters<typeof Engine.insertPost>[0]["platforms"], content = "hello metrics") =>
  Effect.gen(function*() {
    const { post } = yield* Engine.insertPost({ content, platforms })
    yield* Engine.runOnce
    const record = yield* Engine.findPost(post.id)
    for (const d of record.destinations) expect(d.status).toBe("published")
    return post.id
  })

const destinationsOf = (postId: PostId) => Effect.map(Engine.findPost(postId), (r) => r.destinations)

/** A sandbox client for `platform` whose metrics answer as `answer` says (the sandbox when it gives none). */
const metricsFailing = (platform: "x" | "linkedin", answer: { current: PublishError | undefined }) => {
  const sandbox = Sandbox.make(platform)
  const calls: Array<string> = []
  const client: PlatformClient = {
    ...sandbox,
    metrics: (credentials, id, context) => {
      calls.push(id)
      return answer.current === undefined ? sandbox.metrics!(credentials, id, context) : Effect.fail(answer.current)
    }
  }
  return { client, calls }
}

describe("MetricsSweep", () => {
  it.effect("a sandbox post's destinations show metrics after the sweep at +1 h, then at each step, then never", () =>
    provide(Effect.gen(function*() {
      const postId = yield* published(["x", "telegram"])
      const start = yield* DateTime.now
      // Nothing before the first hour.
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
      yield* TestClock.adjust("59 minutes")
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
      for (const d of yield* destinationsOf(postId)) {
        expect(d.metrics.views).toBe(0)
        expect(Option.isNone(d.metricsFetchedAt)).toBe(true)
      }
      yield* TestClock.adjust("1 minute")
      expect(yield* MetricsSweep.runOnce()).toEqual({ claimed: 2, fetched: 2, failed: 0, deferred: 0 })
      const first = yield* destinationsOf(postId)
      const now = yield* DateTime.now
      for (const d of first) {
        expect(d.status).toBe("published")
        expect(d.metrics.views).toBeGreaterThan(0)
        expect(d.metrics.impressions).toBeGreaterThanOrEqual(d.metrics.views)
        expect(d.metricsFetchedAt).toEqual(Option.some(now))
        // The sandbox's numbers are those of the post's age.
        expect(d.metrics).toEqual(Sandbox.metricsAt(Option.getOrThrow(d.platformPostId), Duration.hours(1)))
      }
      // Fetched once per step: not again until 6 h.
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
      const steps = [Duration.hours(6), Duration.hours(24), Duration.days(3), Duration.days(7)]
      let previous = first
      for (const step of steps) {
        yield* TestClock.setTime(DateTime.toEpochMillis(DateTime.addDuration(start, step)) - 1)
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
        yield* TestClock.adjust("1 millis")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 2, fetched: 2 })
        const current = yield* destinationsOf(postId)
        current.forEach((d, i) => {
          expect(d.metrics.views).toBeGreaterThanOrEqual(previous[i]!.metrics.views)
          expect(d.metrics).toEqual(Sandbox.metricsAt(Option.getOrThrow(d.platformPostId), step))
        })
        previous = current
      }
      // After 7 days: the schedule is over.
      yield* TestClock.adjust("30 days")
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
    })))

  it.effect("a post whose final id comes later (TikTok after moderation): followed at each step, then its id and URL stored", () => {
    const sandbox = Sandbox.make("linkedin")
    const state = {
      publicId: undefined as string | undefined,
      asked: [] as Array<string>,
      fetched: [] as Array<string>
    }
    const client: PlatformClient = {
      ...sandbox,
      metrics: (credentials, id, context) => {
        state.fetched.push(id)
        return sandbox.metrics!(credentials, id, context)
      },
      resolvePost: (_credentials, id) => {
        state.asked.push(id)
        return Effect.succeed(
          state.publicId === undefined || id === state.publicId
            ? Option.none()
            : Option.some({
              platformPostId: state.publicId,
              platformPostUrl: `https://example.com/video/${state.publicId}`
            })
        )
      }
    }
    return provide(
      Effect.gen(function*() {
        const postId = yield* published(["linkedin"])
        const publishId = Option.getOrThrow((yield* destinationsOf(postId))[0]!.platformPostId)
        // Still in review at +1 h: asked, nothing changes, the counts are those of the id it has.
        yield* TestClock.adjust("1 hour")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, fetched: 1 })
        expect(state.asked).toEqual([publishId])
        expect(Option.getOrThrow((yield* destinationsOf(postId))[0]!.platformPostId)).toBe(publishId)
        // Public by +6 h: the final id and URL are stored, and its counts read with it.
        state.publicId = "7441234567890123456"
        yield* TestClock.adjust("5 hours")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, fetched: 1 })
        const [after] = yield* destinationsOf(postId)
        expect(after!.platformPostId).toEqual(Option.some("7441234567890123456"))
        expect(after!.platformPostUrl).toEqual(Option.some("https://example.com/video/7441234567890123456"))
        expect(state.fetched).toEqual([publishId, "7441234567890123456"])
      }),
      [client]
    )
  })

  it.effect("a step missed is not made up: a first fetch at +2 d goes next to the 3 d step", () =>
    provide(Effect.gen(function*() {
      yield* published(["linkedin"])
      yield* TestClock.adjust("2 days")
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, fetched: 1 })
      yield* TestClock.adjust("23 hours")
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
      yield* TestClock.adjust("1 hour")
      expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, fetched: 1 })
    })))

  it.effect("a shortened schedule and a per-platform cap are taken from the options", () =>
    provide(Effect.gen(function*() {
      const ids = [yield* published(["discord"], "one"), yield* published(["discord"], "two")]
      const options: MetricsSweep.Options = { schedule: ["10 seconds", "1 minute"], perPlatform: { discord: 1 } }
      yield* TestClock.adjust("10 seconds")
      expect(yield* MetricsSweep.runOnce(options)).toMatchObject({ claimed: 1, fetched: 1 })
      expect(yield* MetricsSweep.runOnce(options)).toMatchObject({ claimed: 1, fetched: 1 })
      for (const id of ids) expect((yield* destinationsOf(id))[0]!.metrics.views).toBeGreaterThan(0)
      expect(yield* MetricsSweep.runOnce(options)).toMatchObject({ claimed: 0 })
    })))

  it.effect("rate_limit: the platform's destinations wait the platform's delay; other platforms go on", () => {
    const answer: { current: PublishError | undefined } = {
      current: new PublishError({ kind: "rate_limit", message: "Too Many Requests", retryAfterSeconds: 600 })
    }
    const x = metricsFailing("x", answer)
    return provide(
      Effect.gen(function*() {
        const a = yield* published(["x", "telegram"], "a")
        const b = yield* published(["x"], "b")
        yield* TestClock.adjust("1 hour")
        // One x claimed (the cap), rate-limited; the other x pushed back unclaimed; telegram fetched.
        expect(yield* MetricsSweep.runOnce({ perPlatform: { x: 1 } })).toEqual({
          claimed: 2,
          fetched: 1,
          failed: 0,
          deferred: 2
        })
        expect(x.calls.length).toBe(1)
        const [ax, atg] = yield* destinationsOf(a)
        expect(ax!.status).toBe("published")
        expect(ax!.metrics.views).toBe(0)
        expect(atg!.metrics.views).toBeGreaterThan(0)
        yield* TestClock.adjust("9 minutes")
        expect(yield* MetricsSweep.runOnce({ perPlatform: { x: 1 } })).toMatchObject({ claimed: 0 })
        expect(x.calls.length).toBe(1)
        answer.current = undefined
        yield* TestClock.adjust("1 minute")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 2, fetched: 2 })
        // Fetched at the step it was due for: the first.
        for (const id of [a, b]) {
          const d = (yield* destinationsOf(id))[0]!
          expect(d.metrics.views).toBeGreaterThan(0)
        }
      }),
      [x.client]
    )
  })

  it.effect("failures (auth, permanent) leave status, counts and account alone and move to the next step", () => {
    const answer: { current: PublishError | undefined } = {
      current: new PublishError({ kind: "auth", message: "Invalid or expired token" })
    }
    const x = metricsFailing("x", answer)
    return provide(
      Effect.gen(function*() {
        const id = yield* published(["x"])
        yield* TestClock.adjust("1 hour")
        expect(yield* MetricsSweep.runOnce()).toEqual({ claimed: 1, fetched: 0, failed: 1, deferred: 0 })
        const [d] = yield* destinationsOf(id)
        expect(d!.status).toBe("published")
        expect(Option.isNone(d!.error)).toBe(true)
        expect(d!.metrics.views).toBe(0)
        expect(Option.isNone(d!.metricsFetchedAt)).toBe(true)
        const org = yield* Engine.TestOrg
        const account = Option.getOrThrow(yield* (yield* AccountStore).findById(org.id, d!.accountId))
        expect(account.needsReconnection).toBe(false)
        expect(account.isActive).toBe(true)
        // Not retried within the step; the next step (6 h) tries again.
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 0 })
        answer.current = new PublishError({ kind: "permanent", message: "Post not found" })
        yield* TestClock.adjust("5 hours")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, failed: 1 })
        expect((yield* destinationsOf(id))[0]!.status).toBe("published")
        answer.current = undefined
        yield* TestClock.adjust("18 hours")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, fetched: 1 })
        expect((yield* destinationsOf(id))[0]!.metrics.views).toBeGreaterThan(0)
      }),
      [x.client]
    )
  })

  it.effect("a fetch starts only while the lease covers its time-out; the rest are released, due at once", () => {
    const sandbox = Sandbox.make("x")
    const calls: Array<string> = []
    const slow: PlatformClient = {
      ...sandbox,
      metrics: (credentials, id, context) =>
        Effect.sync(() => calls.push(id)).pipe(
          Effect.zipRight(Effect.sleep("50 seconds")),
          Effect.zipRight(sandbox.metrics!(credentials, id, context))
        )
    }
    return provide(
      Effect.gen(function*() {
        const ids = [yield* published(["x"], "one"), yield* published(["x"], "two"), yield* published(["x"], "three")]
        yield* TestClock.adjust("1 hour")
        // Lease 2 minutes, time-out 60 s: fetches may start until 60 s after the claim (at 0 and 50 s, not 100 s).
        const options: MetricsSweep.Options = { leaseFor: "2 minutes", timeout: "60 seconds" }
        const round = yield* Effect.fork(MetricsSweep.runOnce(options))
        for (let i = 0; i < 3; i++) {
          yield* Engine.settle()
          yield* TestClock.adjust("50 seconds")
        }
        expect(yield* Fiber.join(round)).toEqual({ claimed: 3, fetched: 2, failed: 0, deferred: 1 })
        expect(calls.length).toBe(2)
        const views = yield* Effect.forEach(ids, (id) => Effect.map(destinationsOf(id), (ds) => ds[0]!.metrics.views))
        expect(views.filter((v) => v > 0).length).toBe(2)
        // Released due now: the next round takes it.
        const next = yield* Effect.fork(MetricsSweep.runOnce(options))
        yield* Engine.settle()
        yield* TestClock.adjust("50 seconds")
        expect(yield* Fiber.join(next)).toMatchObject({ claimed: 1, fetched: 1 })
      }),
      [slow]
    )
  })

  it.effect("batched per account where the client has metricsBatch: one call, a post missing from it failed", () => {
    const sandbox = Sandbox.make("x")
    const batches: Array<ReadonlyArray<string>> = []
    let hidden = ""
    const batching: PlatformClient = {
      ...sandbox,
      metrics: () => Effect.die("not called when batching"),
      metricsBatch: (_credentials, ids) =>
        Effect.sync(() => {
          batches.push(ids)
          return new Map(ids.filter((id) => id !== hidden).map((id) => [id, Sandbox.fakeMetrics(id)] as const))
        }),
      metricsBatchSize: 2
    }
    return provide(
      Effect.gen(function*() {
        const ids = [
          yield* published(["x"], "one"),
          yield* published(["x"], "two"),
          yield* published(["x"], "three")
        ]
        hidden = Option.getOrThrow((yield* destinationsOf(ids[2]!))[0]!.platformPostId)
        yield* TestClock.adjust("1 hour")
        expect(yield* MetricsSweep.runOnce()).toEqual({ claimed: 3, fetched: 2, failed: 1, deferred: 0 })
        // One account, chunks of 2: two calls for three posts.
        expect(batches.map((b) => b.length).sort()).toEqual([1, 2])
        const [one, two, three] = yield* Effect.forEach(ids, (id) => Effect.map(destinationsOf(id), (ds) => ds[0]!))
        expect(one!.metrics.views + two!.metrics.views).toBeGreaterThan(0)
        expect(Option.isSome(one!.metricsFetchedAt) && Option.isSome(two!.metricsFetchedAt)).toBe(true)
        expect(three!.status).toBe("published")
        expect(Option.isNone(three!.metricsFetchedAt)).toBe(true)
      }),
      [batching]
    )
  })

  it.effect("platforms whose client has no metrics are never claimed", () => {
    const { metrics: _none, ...bare } = Sandbox.make("telegram")
    return provide(
      Effect.gen(function*() {
        const id = yield* published(["telegram", "discord"])
        yield* TestClock.adjust("1 hour")
        expect(yield* MetricsSweep.runOnce()).toMatchObject({ claimed: 1, fetched: 1 })
        const [tg, discord] = yield* destinationsOf(id)
        expect(tg!.metrics.views).toBe(0)
        expect(discord!.metrics.views).toBeGreaterThan(0)
      }),
      [bare]
    )
  })

  it("settings from the environment (for tests and demos); an invalid schedule keeps the default", () => {
    expect(Worker.metricsFromEnv({})).toEqual({})
    expect(Worker.metricsFromEnv({ HERALD_METRICS_SCHEDULE: "30s, 2m,1.5h,3d", HERALD_METRICS_SWEEP_SECONDS: "5" }))
      .toEqual({
        schedule: [Duration.seconds(30), Duration.minutes(2), Duration.hours(1.5), Duration.days(3)],
        every: Duration.seconds(5)
      })
    expect(Worker.metricsFromEnv({ HERALD_METRICS_SCHEDULE: "1h,soon", HERALD_METRICS_SWEEP_SECONDS: "-1" })).toEqual(
      {}
    )
    expect(Worker.metricsFromEnv({ HERALD_METRICS_SCHEDULE: " , " })).toEqual({})
  })
})
