/**
 * The housekeeping round and loop (`Housekeeping`, run beside the webhook deliverer in `herald serve`
 * and `herald worker`) on SQLite under the TestClock: one round sweeps abandoned uploads and prunes
 * old delivery history, logging a line with counts only when something was removed; a failing sweep
 * is logged and does not stop the other; the loop sweeps on its interval; settings from the
 * environment.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileBlobStore from "@herald/adapters/media/FileBlobStore"
import * as MediaInspector from "@herald/adapters/media/MediaInspector"
import * as IdempotentRequests from "@herald/core/access/IdempotentRequests"
import { BlobStore } from "@herald/core/media/BlobStore"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as Housekeeping from "@herald/core/publishing/Housekeeping"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { MediaStore } from "@herald/core/media/MediaStore"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import { PostStore } from "@herald/core/posts/PostStore"
import { QueueStore } from "@herald/core/workflow/QueueStore"
import * as DateTime from "effect/DateTime"
import * as Worker from "@herald/http/Worker"
import * as Config from "@herald/http/Config"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ContractFixtures from "../../packages/adapters/test/contract/Fixtures.js"
import * as Fixtures from "../support/MediaFixtures.js"
import { emit, engine, givenOrganization, receiver } from "../webhooks/WebhookFixtures.js"

const blobs = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-housekeeping-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((directory) => FileBlobStore.layer({ directory }).pipe(Layer.orDie)))
)

const services = Layer.mergeAll(
  engine(),
  blobs,
  MediaInspector.layer,
  Layer.succeed(MediaLibrary.MediaSettings, { signingKey: Redacted.make("test-signing-key") })
)

/** Collects the messages logged while `self` runs. */
const logged = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => {
      lines.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
    })
  )

/** An upload sent but never completed, and a webhook with one delivered delivery, both at the current time. */
const given = Effect.gen(function*() {
  const org = yield* givenOrganization
  const png = Fixtures.png(3, 3)
  const p = yield* MediaLibrary.presign(org.id, { filename: "a.png", content_type: "image/png", file_size: png.length })
  yield* MediaLibrary.receiveUpload({
    id: p.media.id,
    token: p.token,
    contentType: Option.none(),
    contentLength: Option.none(),
    body: Stream.make(png)
  })
  const r = yield* receiver
  const hook = (yield* Webhooks.create(org.id, { url: r.url, events: ["post.published"] })).record.subscription
  yield* emit(org.id, "post.published")
  expect((yield* Webhooks.deliverDue()).delivered).toBe(1)
  return { org, media: p.media, hook }
})

const HOUR = 3_600_000

const housekeepingLines = (lines: ReadonlyArray<string>) => lines.filter((l) => l.startsWith("Housekeeping:"))

describe("housekeeping", () => {
  it.effect("a round removes what is due and logs one line per sweep that removed something", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      const { hook, media, org } = yield* given
      const quiet = yield* Housekeeping.runOnce()
      expect([quiet.media?.media, quiet.webhooks?.deliveries]).toEqual([0, 0])
      expect(housekeepingLines(lines)).toEqual([])

      yield* TestClock.adjust(Duration.sum(Duration.hours(25), Duration.millis(1)))
      const first = yield* Housekeeping.runOnce()
      expect([first.media?.media, first.webhooks?.deliveries]).toEqual([1, 0])
      expect(yield* (yield* MediaStore).findById(org.id, media.id)).toEqual(Option.none())
      expect(housekeepingLines(lines)).toEqual([
        "Housekeeping: removed 1 media never completed (pending_upload, created before 1970-01-01T00:00:00.001Z)"
      ])

      yield* TestClock.adjust(Duration.days(30))
      const second = yield* Housekeeping.runOnce()
      expect([second.media?.media, second.webhooks?.deliveries, second.webhooks?.attempts]).toEqual([0, 1, 1])
      expect((yield* Webhooks.attempts(org.id, hook.id)).items).toEqual([])
      expect(housekeepingLines(lines)).toHaveLength(3)
      expect(housekeepingLines(lines)[1]).toMatch(
        /^Housekeeping: pruned 1 webhook deliveries with 1 attempts \(finished before .*, or beyond 10000 per webhook\)$/
      )
      // The delivered event is past its 30 days too, and no pending delivery needs it.
      expect(second.events?.removed).toBe(1)
      expect(housekeepingLines(lines)[2]).toMatch(/^Housekeeping: pruned 1 events created before /)
    }).pipe(Effect.scoped, Effect.provide(services), Effect.provide(logged(lines)))
  })

  it.effect("a failing sweep is logged and the other still runs", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      const { hook, org } = yield* given
      yield* TestClock.adjust(Duration.days(31))
      const failingBlobs = Effect.flatMap(BlobStore, (real) =>
        Effect.succeed(BlobStore.of({
          ...real,
          delete: () => Effect.fail(new PersistenceError({ message: "disk gone", cause: null }))
        })))
      const summary = yield* Housekeeping.runOnce().pipe(
        Effect.provideServiceEffect(BlobStore, failingBlobs),
        Effect.provideService(MediaStore, {
          ...(yield* MediaStore),
          deleteAbandoned: () => Effect.fail(new PersistenceError({ message: "database gone", cause: null }))
        })
      )
      expect(summary.media).toBeUndefined()
      expect(summary.webhooks?.deliveries).toBe(1)
      expect((yield* Webhooks.attempts(org.id, hook.id)).items).toEqual([])
      expect(housekeepingLines(lines)[0]).toBe("Housekeeping: the sweep of abandoned uploads failed")
      // A file that cannot be removed is reported, the record still goes.
      const after = yield* Housekeeping.runOnce().pipe(Effect.provideServiceEffect(BlobStore, failingBlobs))
      expect(after.media).toMatchObject({ media: 1, blobsLeft: 1 })
      expect(housekeepingLines(lines).at(-1)).toMatch(/; 1 files could not be removed$/)
    }).pipe(Effect.scoped, Effect.provide(services), Effect.provide(logged(lines)))
  })

  it.effect(
    "the loop sweeps within its first interval and then on every interval, jittered",
    () =>
      Effect.gen(function*() {
        const { hook, media, org } = yield* given
        // Past the delivery's own timers (the transport's timeout), so the only sleeper left is the loop.
        yield* TestClock.adjust("1 minute")
        const start = 60_000
        const loop = yield* Effect.fork(Housekeeping.run({ every: "6 hours" }))
        const wakeUps: Array<number> = []
        /** Lets the loop run round after round (each time it is asleep) until the clock reaches `end`. */
        const runUntil = (end: number) =>
          Effect.gen(function*() {
            while (true) {
              // The round's work is real I/O: wait (on the real clock, up to 5 s) until the loop sleeps again.
              let pending = yield* TestClock.sleeps()
              for (let i = 0; Chunk.size(pending) === 0 && i < 500; i++) {
                yield* TestServices.provideLive(Effect.sleep("10 millis"))
                pending = yield* TestClock.sleeps()
              }
              const next = Chunk.unsafeHead(pending)
              if (next > end) return yield* TestClock.setTime(end)
              wakeUps.push(next)
              yield* TestClock.setTime(next)
            }
          })
        yield* runUntil(26 * HOUR)
        // The first round within the first interval, then 6 h apart, give or take a fifth.
        expect(wakeUps[0]).toBeLessThan(start + 6 * HOUR)
        for (let i = 1; i < wakeUps.length; i++) {
          const gap = wakeUps[i]! - wakeUps[i - 1]!
          expect(gap).toBeGreaterThanOrEqual(Math.floor(0.8 * 6 * HOUR))
          expect(gap).toBeLessThanOrEqual(Math.ceil(1.2 * 6 * HOUR))
        }
        const store = yield* MediaStore
        // Abandoned once the URL (1 h) has been expired 24 h: gone at the first round after 25 h.
        expect(Option.isNone(yield* store.findById(org.id, media.id))).toBe(wakeUps.some((t) => t > 25 * HOUR))
        yield* runUntil(33 * HOUR)
        expect(yield* store.findById(org.id, media.id)).toEqual(Option.none())
        expect((yield* Webhooks.attempts(org.id, hook.id)).items).toHaveLength(1)
        yield* runUntil(31 * 24 * HOUR + 8 * HOUR)
        expect((yield* Webhooks.attempts(org.id, hook.id)).items).toEqual([])
        yield* Fiber.interrupt(loop)
      }).pipe(Effect.scoped, Effect.provide(services)),
    30_000
  )

  it.effect("a round prunes the queue claims of openings more than a day past, and only those", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      const org = yield* givenOrganization
      const store = yield* QueueStore
      // Two claimed openings a day apart, each held by a post scheduled there.
      const openings = [2 * 24 * HOUR, 3 * 24 * HOUR]
      for (const t of openings) {
        const p = ContractFixtures.post(org.id, { scheduledFor: Option.some(DateTime.unsafeMake(t)) })
        expect(yield* store.claim(org.id, DateTime.unsafeMake(t), p.id)).toBe(true)
        yield* (yield* PostStore).insert({ post: p, destinations: [] })
      }
      expect((yield* Housekeeping.runOnce()).queue?.claims).toBe(0)
      // A day and a half after the first opening: its claim goes, the second's stays.
      yield* TestClock.setTime(openings[0]! + 36 * HOUR)
      const round = yield* Housekeeping.runOnce()
      expect(round.queue?.claims).toBe(1)
      expect(housekeepingLines(lines).at(-1)).toMatch(/^Housekeeping: pruned 1 queue claims of openings before /)
      expect(yield* store.taken(org.id, DateTime.unsafeMake(0), DateTime.unsafeMake(10 * 24 * HOUR))).toEqual([
        openings[1]
      ])
    }).pipe(Effect.scoped, Effect.provide(services), Effect.provide(logged(lines)))
  })

  it.effect("a round prunes idempotency keys 24 hours after their first request, and only those", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      const org = yield* givenOrganization
      const begin = (key: string) =>
        IdempotentRequests.begin({ organizationId: org.id, key, fingerprint: "f".repeat(64), holder: `request-${key}` })
      const first = yield* begin("first")
      if (first._tag !== "Proceed") throw new Error("the key was free")
      expect(yield* IdempotentRequests.complete(first.claim, { status: 201, body: "{}" })).toBe(true)
      yield* TestClock.adjust("12 hours")
      expect((yield* begin("second"))._tag).toBe("Proceed")
      expect((yield* Housekeeping.runOnce()).idempotency?.keys).toBe(0)
      // The first key is 24 hours old: expired, and pruned; the second is kept (and still held).
      yield* TestClock.adjust("12 hours")
      expect((yield* Housekeeping.runOnce()).idempotency?.keys).toBe(1)
      expect(housekeepingLines(lines).at(-1)).toBe(
        "Housekeeping: pruned 1 idempotency keys expired before 1970-01-02T00:00:00.000Z"
      )
      const held = yield* Effect.flip(begin("second"))
      expect(held).toMatchObject({ code: "idempotency_key_in_use" })
      expect((yield* Housekeeping.runOnce()).idempotency?.keys).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(services), Effect.provide(logged(lines)))
  })

  it.effect("a round prunes events past their retention and ended counter windows, in bounded batches", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      const org = yield* givenOrganization
      const events = yield* EventStore
      const counters = yield* UsageCounters
      const old = Array.from({ length: 5 }, () => ContractFixtures.event(org.id, { createdAt: DateTime.unsafeMake(0) }))
      yield* events.append(old)
      // A minute window that ends at 1 min, and the month-long window that contains every instant below.
      yield* counters.increment("posting:scheduled:org:minute", DateTime.unsafeMake(60_000), 1)
      const month = DateTime.unsafeMake(40 * 24 * HOUR)
      yield* counters.increment("ai_credits:org", month, 3)
      yield* TestClock.setTime(HOUR)
      const young = ContractFixtures.event(org.id, { createdAt: DateTime.unsafeMake(HOUR) })
      yield* events.append([young])
      const options = { events: { batchSize: 2, maxBatches: 2 }, counters: { batchSize: 2 } } as const
      const early = yield* Housekeeping.runOnce(options)
      expect([early.events?.removed, early.counters?.removed]).toEqual([0, 0])

      // Thirty days and a bit later: two batches of two events, the fifth left for the next round.
      yield* TestClock.setTime(30 * 24 * HOUR + 1)
      const first = yield* Housekeeping.runOnce(options)
      expect(first.events).toMatchObject({ removed: 4, more: true })
      expect(first.counters).toMatchObject({ removed: 1, more: false })
      expect(housekeepingLines(lines)).toContain(
        "Housekeeping: pruned 4 events created before 1970-01-01T00:00:00.001Z (more left for the next round)"
      )
      const second = yield* Housekeeping.runOnce(options)
      expect(second.events).toMatchObject({ removed: 1, more: false })
      expect(yield* events.list(org.id)).toEqual([young])
      // The current window is what GET /me reads: kept.
      expect(yield* counters.get("ai_credits:org", month)).toBe(3)
      expect(yield* counters.get("posting:scheduled:org:minute", DateTime.unsafeMake(60_000))).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(services), Effect.provide(logged(lines)))
  })

  it("settings from the environment, invalid ones ignored", () => {
    expect(Worker.housekeepingFromEnv({})).toEqual({ webhooks: {}, events: {}, counters: {} })
    expect(Worker.housekeepingFromEnv({
      HERALD_MEDIA_PENDING_GRACE_HOURS: "48",
      HERALD_WEBHOOK_HISTORY_DAYS: "7",
      HERALD_WEBHOOK_HISTORY_MAX: "500",
      HERALD_HOUSEKEEPING_MINUTES: "5",
      HERALD_EVENT_HISTORY_DAYS: "14",
      HERALD_COUNTER_HISTORY_HOURS: "2",
      HERALD_HOUSEKEEPING_BATCH: "200"
    })).toEqual({
      every: Duration.minutes(5),
      media: { grace: Duration.hours(48) },
      webhooks: { retention: Duration.days(7), maxPerWebhook: 500, batchSize: 200 },
      events: { retention: Duration.days(14), batchSize: 200 },
      counters: { retention: Duration.hours(2), batchSize: 200 }
    })
    expect(Worker.housekeepingFromEnv({
      HERALD_WEBHOOK_HISTORY_DAYS: "-3",
      HERALD_WEBHOOK_HISTORY_MAX: "lots",
      HERALD_EVENT_HISTORY_DAYS: "0",
      HERALD_HOUSEKEEPING_BATCH: "2.5"
    })).toEqual({ webhooks: {}, events: {}, counters: {} })
  })

  it("retention settings are refused at start when invalid, each named in one line", () => {
    expect(Config.problems({
      HERALD_EVENT_HISTORY_DAYS: "30",
      HERALD_COUNTER_HISTORY_HOURS: "0.5",
      HERALD_HOUSEKEEPING_BATCH: "1000"
    })).toEqual([])
    expect(Config.problems({
      HERALD_EVENT_HISTORY_DAYS: "forever",
      HERALD_COUNTER_HISTORY_HOURS: "0",
      HERALD_HOUSEKEEPING_BATCH: "2.5"
    })).toEqual([
      "HERALD_EVENT_HISTORY_DAYS: expected a positive number, got 'forever'",
      "HERALD_COUNTER_HISTORY_HOURS: expected a positive number, got '0'",
      "HERALD_HOUSEKEEPING_BATCH: expected a positive integer, got '2.5'"
    ])
  })
})
