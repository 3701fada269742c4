/**
 * Webhook delivery over real HTTP to receivers on 127.0.0.1 (private targets allowed, as with the
 * operator switch), on SQLite: headers and signatures checked with node:crypto, the retry ladder under
 * TestClock, dead after 6, auto-disable after 20 dead deliveries and re-enable, the timeout, the 2 KB
 * cap, and one hanging receiver not holding up another.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import { WebhookStore } from "@herald/core/webhooks/WebhookStore"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/TestClock"
import { WebhookId } from "@herald/core/kernel/Ids"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"
import {
  emit,
  engine,
  givenOrganization,
  receiver,
  verifyServiceSignature,
  verifyStandardSignature
} from "./WebhookFixtures.js"

const pg = await TestDatabases.probePostgres
if (!pg.available) console.warn(`[skip] webhook delivery on Postgres skipped: ${pg.reason}`)

const subscribe = (organizationId: Parameters<typeof Webhooks.create>[0], url: string, events: ReadonlyArray<string>) =>
  Webhooks.create(organizationId, { url, events, name: "test" })

describe("webhook delivery", () => {
  it.effect("sends the payload envelope with the spec's headers, both signatures verifiable with node:crypto", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      const org = yield* givenOrganization
      const { record, secret } = yield* subscribe(org.id, r.url, ["post.published"])
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{64}$/)
      yield* TestClock.adjust("1234567 millis")
      const event = yield* emit(org.id, "post.published", { post_id: "p-1", text: "naïve ✓" })
      const summary = yield* Webhooks.deliverDue()
      expect(summary).toEqual({ subscriptions: 1, attempted: 1, delivered: 1, retrying: 0, dead: 0, lost: 0 })
      const [got] = r.received
      expect(got!.json).toEqual({
        event: "post.published",
        event_id: event.id,
        created_at: "1970-01-01T00:20:34.567Z",
        organization_id: org.id,
        data: { post_id: "p-1", text: "naïve ✓" }
      })
      expect(got!.headers["content-type"]).toBe("application/json")
      expect(got!.headers["user-agent"]).toBe("Service-Webhook/1.0")
      expect(got!.headers["x-service-event"]).toBe("post.published")
      expect(got!.headers["x-service-event-id"]).toBe(event.id)
      expect(got!.headers["x-service-delivery-id"]).toMatch(/^[0-9a-f-]{36}$/)
      expect(got!.headers["x-service-timestamp"]).toBe("1234")
      expect(got!.headers["x-service-attempt"]).toBe("1")
      expect(verifyServiceSignature(secret, got!)).toBe(true)
      expect(verifyStandardSignature(secret, got!)).toBe(true)
      // A wrong secret does not verify: the check is real.
      expect(verifyServiceSignature(`whsec_${"B".repeat(64)}`, got!)).toBe(false)
      const attempts = yield* Webhooks.attempts(org.id, record.subscription.id)
      expect(attempts.items.map((a) => [a.id, a.attempt, a.ok, Option.getOrNull(a.statusCode), a.responseBody]))
        .toEqual([
          [got!.headers["x-service-delivery-id"], 1, true, 200, "ok"]
        ])
      const after = yield* Webhooks.get(org.id, record.subscription.id)
      expect(Option.getOrNull(after.lastStatus)).toBe(200)
      // Delivered: nothing more to send.
      expect((yield* Webhooks.deliverDue()).attempted).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(engine())))

  it.effect("retries by the ladder (+30 s, +2 min, +10 min, +1 h, +6 h), to the millisecond, then the delivery is dead", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      r.answer = () => ({ status: 503, body: "down" })
      const org = yield* givenOrganization
      const { record, secret } = yield* subscribe(org.id, r.url, ["post.failed"])
      const event = yield* emit(org.id, "post.failed", { post_id: "p" })
      expect((yield* Webhooks.deliverDue()).retrying).toBe(1)
      const ladder = [
        Duration.seconds(30),
        Duration.minutes(2),
        Duration.minutes(10),
        Duration.hours(1),
        Duration.hours(6)
      ]
      for (const [i, delay] of ladder.entries()) {
        yield* TestClock.adjust(Duration.subtract(delay, Duration.millis(1)))
        expect((yield* Webhooks.deliverDue()).attempted).toBe(0)
        yield* TestClock.adjust(Duration.millis(1))
        const round = yield* Webhooks.deliverDue()
        expect(round.attempted).toBe(1)
        expect(i < 4 ? round.retrying : round.dead).toBe(1)
      }
      yield* TestClock.adjust(Duration.days(7))
      expect((yield* Webhooks.deliverDue()).attempted).toBe(0)

      expect(r.received.map((x) => x.headers["x-service-attempt"])).toEqual(["1", "2", "3", "4", "5", "6"])
      // Seconds since the start: 0, 30, 150, 750, 4350, 25950.
      expect(r.received.map((x) => x.headers["x-service-timestamp"])).toEqual([
        "0",
        "30",
        "150",
        "750",
        "4350",
        "25950"
      ])
      expect(new Set(r.received.map((x) => x.headers["x-service-event-id"]))).toEqual(new Set([event.id]))
      expect(new Set(r.received.map((x) => x.headers["x-service-delivery-id"])).size).toBe(6)
      // The same body on every attempt; each signed afresh.
      expect(new Set(r.received.map((x) => x.raw.toString("utf8"))).size).toBe(1)
      expect(r.received.every((x) => verifyServiceSignature(secret, x) && verifyStandardSignature(secret, x))).toBe(
        true
      )

      const deliveries = yield* (yield* WebhookStore).listDeliveries(record.subscription.id)
      expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([["dead", 6]])
      const log = yield* Webhooks.attempts(org.id, record.subscription.id)
      expect(log.items.map((a) => a.attempt)).toEqual([6, 5, 4, 3, 2, 1])
      expect(log.items.every((a) => !a.ok && Option.getOrNull(a.statusCode) === 503 && a.responseBody === "down")).toBe(
        true
      )
      // One dead delivery is one failed delivery.
      expect((yield* Webhooks.get(org.id, record.subscription.id)).subscription.consecutiveFailures).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(engine())))

  it.effect(
    "20 dead deliveries in a row disable the webhook; PATCH is_active: true re-enables it and resets the counter",
    () =>
      Effect.gen(function*() {
        const r = yield* receiver
        r.answer = () => ({ status: 500, body: "boom" })
        const org = yield* givenOrganization
        const { record } = yield* subscribe(org.id, r.url, ["post.published"])
        const id = record.subscription.id
        for (let i = 0; i < 21; i++) yield* emit(org.id, "post.published", { n: i })
        const options = { perSubscription: 50 }
        yield* Webhooks.deliverDue(options)
        for (const delay of ["30 seconds", "2 minutes", "10 minutes", "1 hour", "6 hours"] as const) {
          yield* TestClock.adjust(delay)
          yield* Webhooks.deliverDue(options)
        }
        const disabled = yield* Webhooks.get(org.id, id)
        expect([disabled.subscription.isActive, disabled.subscription.consecutiveFailures]).toEqual([false, 20])
        // The 21st event was still pending behind the 20th: ended, never sent a 6th time.
        expect(r.received.filter((x) => x.json.data["n"] === 20).length).toBeLessThan(6)
        const statuses = (yield* (yield* WebhookStore).listDeliveries(id)).map((d) => d.status)
        expect(statuses).toEqual(Array.from({ length: 21 }, () => "dead"))
        // Inactive: events are not delivered.
        const sentBefore = r.received.length
        yield* emit(org.id, "post.published", { n: "while disabled" })
        yield* TestClock.adjust("1 day")
        expect((yield* Webhooks.deliverDue(options)).attempted).toBe(0)
        expect(r.received.length).toBe(sentBefore)

        r.answer = () => ({ status: 204 })
        const enabled = yield* Webhooks.update(org.id, id, { is_active: true })
        expect([enabled.subscription.isActive, enabled.subscription.consecutiveFailures]).toEqual([true, 0])
        yield* emit(org.id, "post.published", { n: "after" })
        expect((yield* Webhooks.deliverDue(options)).delivered).toBe(1)
        expect(r.received.at(-1)!.json.data).toEqual({ n: "after" })
      }).pipe(Effect.scoped, Effect.provide(engine())),
    { timeout: 60_000 }
  )

  it.effect("a success resets the counter of failed deliveries", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      r.answer = () => ({ status: 500 })
      const org = yield* givenOrganization
      const { record } = yield* subscribe(org.id, r.url, ["post.published"])
      yield* emit(org.id, "post.published")
      yield* emit(org.id, "post.published")
      for (const delay of ["0 millis", "30 seconds", "2 minutes", "10 minutes", "1 hour", "6 hours"] as const) {
        yield* TestClock.adjust(delay)
        yield* Webhooks.deliverDue()
      }
      expect((yield* Webhooks.get(org.id, record.subscription.id)).subscription.consecutiveFailures).toBe(2)
      r.answer = () => ({ status: 200 })
      yield* emit(org.id, "post.published")
      yield* Webhooks.deliverDue()
      expect((yield* Webhooks.get(org.id, record.subscription.id)).subscription.consecutiveFailures).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(engine())))

  it.live("an answer later than the timeout is a failed attempt, retried 30 s later", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      r.answer = () => "hang"
      const org = yield* givenOrganization
      const { record } = yield* subscribe(org.id, r.url, ["post.published"])
      yield* emit(org.id, "post.published")
      const round = yield* Webhooks.deliverDue({ timeout: "300 millis" })
      expect([round.attempted, round.retrying]).toEqual([1, 1])
      const [attempt] = (yield* Webhooks.attempts(org.id, record.subscription.id)).items
      expect(attempt!.ok).toBe(false)
      expect(attempt!.statusCode).toEqual(Option.none())
      expect(Option.getOrNull(attempt!.error)).toContain("no complete answer within")
      const [delivery] = yield* (yield* WebhookStore).listDeliveries(record.subscription.id)
      expect(Option.map(delivery!.nextAttemptAt, (d) => d.epochMillis - attempt!.attemptedAt.epochMillis)).toEqual(
        Option.some(30_000)
      )
    }).pipe(Effect.scoped, Effect.provide(engine())))

  it.effect("keeps only the first 2 KB of the receiver's answer", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      r.answer = () => ({ status: 500, body: "x".repeat(1024 * 1024) })
      const org = yield* givenOrganization
      const { record } = yield* subscribe(org.id, r.url, ["post.published"])
      yield* emit(org.id, "post.published")
      yield* Webhooks.deliverDue()
      const [attempt] = (yield* Webhooks.attempts(org.id, record.subscription.id)).items
      expect(attempt!.responseBody).toBe("x".repeat(2048))
    }).pipe(Effect.scoped, Effect.provide(engine())))

  it.live("a hanging receiver does not hold up deliveries to another", () =>
    Effect.gen(function*() {
      const slow = yield* receiver
      const fast = yield* receiver
      slow.answer = () => "hang"
      const org = yield* givenOrganization
      const slowHook = yield* subscribe(org.id, slow.url, ["post.published"])
      yield* subscribe(org.id, fast.url, ["post.published", "post.failed"])
      const loop = yield* Effect.fork(Webhooks.run({ timeout: "60 seconds", pollInterval: "50 millis" }))
      yield* emit(org.id, "post.published")
      yield* Effect.promise(() => Promise.all([slow.waitFor(1), fast.waitFor(1)]))
      // While the slow receiver still holds its first request, the fast one keeps getting events.
      yield* emit(org.id, "post.failed")
      yield* emit(org.id, "post.failed")
      yield* Effect.promise(() => fast.waitFor(3))
      expect(fast.received.map((x) => x.json.event)).toEqual(["post.published", "post.failed", "post.failed"])
      expect((yield* Webhooks.attempts(org.id, slowHook.record.subscription.id)).items).toEqual([])
      expect(slow.received).toHaveLength(1)
      yield* Fiber.interrupt(loop)
    }).pipe(Effect.scoped, Effect.provide(engine())), { timeout: 30_000 })

  for (
    const db of [
      { label: "sqlite", layer: TestDatabases.sqlite, skip: false },
      { label: "postgres", layer: TestDatabases.postgresLayer, skip: !pg.available }
    ]
  ) {
    it.live.skipIf(db.skip)(
      `several deliverers on ${db.label} send each delivery once, in event order per webhook`,
      () =>
        Effect.gen(function*() {
          const r = yield* receiver
          const org = yield* givenOrganization
          const hooks: Array<string> = []
          for (let i = 0; i < 8; i++) {
            hooks.push((yield* subscribe(org.id, `${r.url}?hook=${i}`, ["post.published"])).record.subscription.id)
          }
          const events: Array<string> = []
          for (let i = 0; i < 5; i++) events.push((yield* emit(org.id, "post.published", { n: i })).id)
          const loops = yield* Effect.forEach(
            [1, 2, 3],
            () => Effect.fork(Webhooks.run({ subscriptions: 3, perSubscription: 2, pollInterval: "20 millis" })),
            { concurrency: "unbounded" }
          )
          yield* Effect.promise(() => r.waitFor(40))
          // The last answers may still be being recorded: wait until nothing is pending.
          const store = yield* WebhookStore
          const pending = Effect.map(
            Effect.forEach(hooks, (id) => store.listDeliveries(WebhookId.make(id))),
            (all) => all.flat().filter((d) => d.status === "pending").length
          )
          yield* pending.pipe(
            Effect.repeat({ until: (n) => n === 0, schedule: Schedule.spaced("20 millis") }),
            Effect.timeout("20 seconds")
          )
          yield* Effect.forEach(loops, Fiber.interrupt, { discard: true })
          expect(r.received).toHaveLength(40)
          for (const [i, id] of hooks.entries()) {
            const got = r.received.filter((x) => x.path.endsWith(`hook=${i}`)).map((x) => x.json.event_id)
            expect(got).toEqual(events)
            const deliveries = yield* (yield* WebhookStore).listDeliveries(WebhookId.make(id))
            expect(deliveries.map((d) => [d.status, d.attempts])).toEqual(events.map(() => ["delivered", 1]))
          }
        }).pipe(Effect.scoped, Effect.provide(engine(db.layer))),
      { timeout: 60_000 }
    )
  }
})
