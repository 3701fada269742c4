/**
 * Pruning of the webhook delivery history (`Webhooks.pruneHistory`) under the TestClock, on SQLite,
 * with deliveries made for real to receivers on 127.0.0.1: a delivered delivery leaves
 * `GET /webhooks/{id}/deliveries` 30 days after it finished, not a millisecond before; one still
 * being retried keeps its attempts however old; the per-webhook cap keeps the newest.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import { WebhookStore } from "@herald/core/webhooks/WebhookStore"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { emit, engine, givenOrganization, receiver } from "./WebhookFixtures.js"

describe("webhook delivery history", () => {
  it.effect("finished deliveries go 30 days after they finished, with their attempts; a retrying one stays", () =>
    Effect.gen(function*() {
      const ok = yield* receiver
      const down = yield* receiver
      down.answer = () => ({ status: 503, body: "down" })
      const org = yield* givenOrganization
      const good = (yield* Webhooks.create(org.id, { url: ok.url, events: ["post.published"] })).record.subscription
      const bad = (yield* Webhooks.create(org.id, { url: down.url, events: ["post.failed"] })).record.subscription
      yield* TestClock.setTime(Date.UTC(2030, 0, 1))
      yield* emit(org.id, "post.published")
      yield* emit(org.id, "post.failed")
      const round = yield* Webhooks.deliverDue()
      expect([round.delivered, round.retrying]).toEqual([1, 1])
      const log = (id: string) => Effect.map(Webhooks.attempts(org.id, id), (page) => page.items.length)
      expect([yield* log(good.id), yield* log(bad.id)]).toEqual([1, 1])

      // Exactly 30 days after it finished: still listed.
      yield* TestClock.adjust(Duration.days(30))
      expect(yield* Webhooks.pruneHistory()).toMatchObject({ deliveries: 0, attempts: 0 })
      expect(yield* log(good.id)).toBe(1)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Webhooks.pruneHistory()).toMatchObject({ deliveries: 1, attempts: 1 })
      expect(yield* log(good.id)).toBe(0)
      expect(yield* (yield* WebhookStore).listDeliveries(good.id)).toEqual([])
      // The failing one is pending (its next attempt was due long ago, nobody sent it): kept, attempt and all.
      expect(yield* log(bad.id)).toBe(1)
      expect((yield* (yield* WebhookStore).listDeliveries(bad.id)).map((d) => [d.status, d.attempts])).toEqual([
        ["pending", 1]
      ])
      // It goes on being retried, and once dead it ages out like the rest.
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust(Duration.hours(7))
        yield* Webhooks.deliverDue()
      }
      expect((yield* (yield* WebhookStore).listDeliveries(bad.id)).map((d) => d.status)).toEqual(["dead"])
      expect(yield* log(bad.id)).toBe(6)
      yield* TestClock.adjust(Duration.days(30))
      expect((yield* Webhooks.pruneHistory()).deliveries).toBe(0)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Webhooks.pruneHistory()).toMatchObject({ deliveries: 1, attempts: 6 })
      expect(yield* log(bad.id)).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(engine())))

  it.effect("a busy webhook keeps its newest finished deliveries up to the cap", () =>
    Effect.gen(function*() {
      const ok = yield* receiver
      const org = yield* givenOrganization
      const hook = (yield* Webhooks.create(org.id, { url: ok.url, events: ["post.published"] })).record.subscription
      yield* TestClock.setTime(Date.UTC(2030, 0, 1))
      for (let i = 0; i < 5; i++) {
        yield* emit(org.id, "post.published", { n: i })
        yield* Webhooks.deliverDue()
        yield* TestClock.adjust(Duration.minutes(1))
      }
      expect(yield* Webhooks.pruneHistory({ maxPerWebhook: 2 })).toMatchObject({ deliveries: 3, attempts: 3 })
      const left = (yield* Webhooks.attempts(org.id, hook.id)).items
      // Newest first: the last two events sent.
      const sent = ok.received.map((r) => r.json.event_id)
      expect(left.map((a) => a.eventId)).toEqual([sent[4], sent[3]])
      expect(yield* Webhooks.pruneHistory({ maxPerWebhook: 2 })).toMatchObject({ deliveries: 0 })
    }).pipe(Effect.scoped, Effect.provide(engine())))
})
