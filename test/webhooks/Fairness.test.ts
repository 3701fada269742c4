/**
 * Fair delivery across organizations, over real HTTP on 127.0.0.1, on SQLite and on Postgres where
 * one answers: one organization's receivers hang for the whole timeout (the spec's 10 s) on more
 * subscriptions than a deliverer has slots, and another organization's receiver answers at once; the
 * healthy organization's deliveries arrive within seconds while the others hang, and the hanging
 * organization never holds more than its share of the slots. A claim of a hanging receiver gives its
 * slot back after one timeout, its other deliveries still due in order.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import { WebhookStore } from "@herald/core/webhooks/WebhookStore"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"
import { emit, engine, givenOrganization, receiver } from "./WebhookFixtures.js"

const pg = await TestDatabases.probePostgres
if (!pg.available) console.warn(`[skip] fair webhook delivery on Postgres skipped: ${pg.reason}`)

/** Resolves once `check` holds (polled every 20 ms), or fails after `ms`. */
const until = (what: string, check: () => boolean, ms: number) =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })

describe("fair webhook delivery across organizations", () => {
  for (
    const db of [
      { label: "sqlite", layer: TestDatabases.sqlite, skip: false },
      { label: "postgres", layer: TestDatabases.postgresLayer, skip: !pg.available }
    ]
  ) {
    it.live.skipIf(db.skip)(
      `on ${db.label}, a healthy organization's deliveries arrive within seconds while another's receivers hang`,
      () =>
        Effect.gen(function*() {
          const hanging = yield* receiver
          const healthy = yield* receiver
          hanging.answer = () => "hang"
          const noisy = yield* givenOrganization
          const quiet = yield* givenOrganization
          // More hanging subscriptions than the deliverer's 16 slots, each with three events due.
          for (let i = 0; i < 20; i++) {
            yield* Webhooks.create(noisy.id, { url: `${hanging.url}?hook=${i}`, events: ["post.published"] })
          }
          yield* Webhooks.create(quiet.id, { url: healthy.url, events: ["post.published"] })
          for (let i = 0; i < 3; i++) {
            yield* emit(noisy.id, "post.published", { n: i })
          }

          // The defaults: 16 slots, a quarter of them for one organization, the spec's 10 s timeout.
          const loop = yield* Effect.fork(Webhooks.run({ pollInterval: "50 millis" }))
          yield* until("the noisy organization's receivers to be hanging", () => hanging.received.length >= 4, 10_000)

          const started = Date.now()
          yield* emit(quiet.id, "post.published", { n: "first" })
          yield* until("the healthy receiver's first delivery", () => healthy.received.length >= 1, 3_000)
          yield* emit(quiet.id, "post.published", { n: "second" })
          yield* until("the healthy receiver's second delivery", () => healthy.received.length >= 2, 3_000)
          const tookMs = Date.now() - started
          console.info(`[fairness:${db.label}] two deliveries of the healthy organization in ${tookMs} ms`)

          expect(healthy.received.map((r) => r.json.data["n"])).toEqual(["first", "second"])
          // The noisy organization holds its share (4 of 16 slots), its requests all still hanging.
          expect(hanging.received).toHaveLength(4)
          yield* Fiber.interrupt(loop)
        }).pipe(Effect.scoped, Effect.provide(engine(db.layer))),
      { timeout: 60_000 }
    )
  }

  it.live(
    "a hanging receiver's claim gives its slot back after one timeout; its other deliveries stay due, in order",
    () =>
      Effect.gen(function*() {
        const hanging = yield* receiver
        hanging.answer = () => "hang"
        const org = yield* givenOrganization
        const { record } = yield* Webhooks.create(org.id, { url: hanging.url, events: ["post.published"] })
        const events = [
          yield* emit(org.id, "post.published"),
          yield* emit(org.id, "post.published"),
          yield* emit(org.id, "post.published")
        ]
        const started = Date.now()
        const round = yield* Webhooks.deliverDue({ timeout: "300 millis", perSubscription: 10 })
        expect([round.attempted, round.retrying]).toEqual([1, 1])
        expect(Date.now() - started).toBeLessThan(3 * 300)
        const deliveries = yield* (yield* WebhookStore).listDeliveries(record.subscription.id)
        expect(deliveries.map((d) => [d.eventId, d.status, d.attempts])).toEqual([
          [events[0]!.id, "pending", 1],
          [events[1]!.id, "pending", 0],
          [events[2]!.id, "pending", 0]
        ])
        // The next claim takes them up where the first stopped.
        const next = yield* Webhooks.deliverDue({ timeout: "300 millis", perSubscription: 10 })
        expect(next.attempted).toBe(1)
        expect(hanging.received.map((r) => r.json.event_id)).toEqual([events[0]!.id, events[1]!.id])
      }).pipe(Effect.scoped, Effect.provide(engine())),
    { timeout: 30_000 }
  )
})
