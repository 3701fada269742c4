/**
 * The WebhookStore contract, with the event store's fan-out (deliveries created in the event's
 * transaction) and the claim rules: one claimer per subscription, event order, fenced completions.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import type { EventType } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { AccountId, type OrganizationId, WebhookId } from "@herald/core/kernel/Ids"
import { Transactor } from "@herald/core/kernel/Transactor"
import { DeliveryAttempt, WebhookSubscription } from "@herald/core/webhooks/Webhook"
import * as WebhookActivity from "@herald/core/webhooks/WebhookActivity"
import { type ClaimedDelivery, type SubscriptionClaim, WebhookStore } from "@herald/core/webhooks/WebhookStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { at, event, givenOrganization, type StoresLayer, T0 } from "./Fixtures.js"
import type { Stores } from "../../src/sql/SqlStores.js"
import type * as Layer from "effect/Layer"

const secret = `whsec_${"A".repeat(64)}`

export const subscription = (
  organizationId: OrganizationId,
  overrides: Partial<ConstructorParameters<typeof WebhookSubscription>[0]> = {}
) =>
  new WebhookSubscription({
    id: WebhookId.make(randomUUID()),
    organizationId,
    url: "https://hooks.example.com/herald",
    events: ["post.published"],
    name: Option.some("ops"),
    secret: Redacted.make(secret),
    isActive: true,
    consecutiveFailures: 0,
    createdAt: at(T0),
    updatedAt: at(T0),
    ...overrides
  })

const givenSubscription = (
  organizationId: OrganizationId,
  overrides: Partial<ConstructorParameters<typeof WebhookSubscription>[0]> = {}
) =>
  Effect.gen(function*() {
    const s = subscription(organizationId, overrides)
    expect(yield* (yield* WebhookStore).insert(s, 25)).toBe(true)
    return s
  })

const emit = (organizationId: OrganizationId, type: EventType, data: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const e = event(organizationId, { type, data, createdAt: at(T0) })
    yield* (yield* EventStore).append([e])
    return e
  })

const claimAt = (now: number, options: { subscriptions?: number; perSubscription?: number; lease?: number } = {}) =>
  Effect.flatMap(WebhookStore, (store) =>
    store.claimDue({
      now: at(now),
      subscriptions: options.subscriptions ?? 10,
      perSubscription: options.perSubscription ?? 10,
      leaseFor: `${options.lease ?? 60_000} millis`
    }))

const attemptFor = (
  claimed: ClaimedDelivery,
  overrides: Partial<ConstructorParameters<typeof DeliveryAttempt>[0]> = {}
) =>
  new DeliveryAttempt({
    id: randomUUID(),
    deliveryId: claimed.delivery.id,
    subscriptionId: claimed.delivery.subscriptionId,
    eventId: claimed.event.id,
    eventType: claimed.event.type,
    attempt: claimed.attempt,
    ok: false,
    statusCode: Option.some(500),
    durationMs: 12,
    responseBody: "boom",
    error: Option.some("HTTP 500"),
    attemptedAt: at(T0),
    ...overrides
  })

const DAY = 86_400_000
const HOUR = 3_600_000

/** Records `outcome` for a claimed delivery with the store's clock at `when` (its finishing time). */
const finishAt = (
  claim: SubscriptionClaim,
  claimed: ClaimedDelivery,
  outcome: "Delivered" | "Dead" | "Retry",
  when: number,
  attemptedAt: number = when
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(when)
    const result = yield* (yield* WebhookStore).complete(
      claim,
      claimed,
      outcome === "Retry" ? { _tag: "Retry", at: at(when + 30_000) } : { _tag: outcome },
      attemptFor(claimed, { ok: outcome === "Delivered", attemptedAt: at(attemptedAt) })
    )
    expect(result._tag).toBe("Recorded")
  })

const countAttempts = (subscriptionId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM webhook_attempts WHERE subscription_id = ${subscriptionId}`
  ).pipe(Effect.map((rows) => Number(rows[0]!.n)))

const onlyClaim = (claims: ReadonlyArray<SubscriptionClaim>): SubscriptionClaim => {
  expect(claims).toHaveLength(1)
  return claims[0]!
}

export const webhookStoreContract = (
  layer: StoresLayer,
  concurrentLayer: Layer.Layer<Stores | SqlClient.SqlClient, unknown> = layer
) =>
  describe("WebhookStore", () => {
    it.effect("inserts, lists oldest first, finds by organization, and keeps the secret readable", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const a = yield* givenSubscription(org.id, { events: ["post.published", "post.failed"] })
        const b = yield* givenSubscription(org.id, { createdAt: at(T0 + 1), name: Option.none() })
        yield* givenSubscription(other.id)
        const listed = yield* store.list(org.id)
        expect(listed.map((r) => r.subscription)).toEqual([a, b])
        expect(listed[0]!.lastDeliveryAt).toEqual(Option.none())
        expect(Redacted.value(listed[0]!.subscription.secret)).toBe(secret)
        expect(Option.map(yield* store.findById(org.id, a.id), (r) => r.subscription)).toEqual(Option.some(a))
        expect(yield* store.findById(other.id, a.id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("refuses an insert beyond the organization's limit", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        expect(yield* store.insert(subscription(org.id), 2)).toBe(true)
        expect(yield* store.insert(subscription(org.id), 2)).toBe(true)
        expect(yield* store.insert(subscription(org.id), 2)).toBe(false)
        expect(yield* store.insert(subscription(other.id), 2)).toBe(true)
        expect(yield* store.list(org.id)).toHaveLength(2)
      }).pipe(Effect.provide(layer)))

    it.effect("concurrent inserts never pass the limit", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const results = yield* Effect.forEach(
          Array.from({ length: 12 }, () => subscription(org.id)),
          (s) => store.insert(s, 5),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r)).toHaveLength(5)
        expect(yield* store.list(org.id)).toHaveLength(5)
      }).pipe(Effect.provide(concurrentLayer)), { timeout: 60_000 })

    it.effect("an appended event creates one delivery per active subscription naming it, in the same transaction", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const published = yield* givenSubscription(org.id, { events: ["post.published", "post.scheduled"] })
        const failedOnly = yield* givenSubscription(org.id, { events: ["post.failed"] })
        const inactive = yield* givenSubscription(org.id, { isActive: false })
        const elsewhere = yield* givenSubscription(other.id)
        const e1 = yield* emit(org.id, "post.scheduled")
        const e2 = yield* emit(org.id, "post.published")
        yield* emit(org.id, "post.updated")
        const deliveries = yield* store.listDeliveries(published.id)
        expect(deliveries.map((d) => [d.eventId, d.eventType, d.status, d.attempts])).toEqual([
          [e1.id, "post.scheduled", "pending", 0],
          [e2.id, "post.published", "pending", 0]
        ])
        expect(yield* store.listDeliveries(failedOnly.id)).toEqual([])
        expect(yield* store.listDeliveries(inactive.id)).toEqual([])
        expect(yield* store.listDeliveries(elsewhere.id)).toEqual([])

        // A rolled-back transaction leaves neither the event nor its delivery.
        const tx = yield* Transactor
        const events = yield* EventStore
        const rolledBack = event(org.id, { type: "post.published" })
        yield* tx.withTransaction(Effect.zipRight(events.append([rolledBack]), Effect.fail("no"))).pipe(Effect.flip)
        expect(yield* events.findById(rolledBack.id)).toEqual(Option.none())
        expect(yield* store.listDeliveries(published.id)).toHaveLength(2)
      }).pipe(Effect.provide(layer)))

    it.effect("a subscription scoped to accounts gets only events about its accounts, in one append or several", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const events = [
          "post.scheduled",
          "post.published",
          "post.partially_failed",
          "account.disconnected",
          "media.uploaded"
        ] as const
        const all = yield* givenSubscription(org.id, { events: [...events] })
        const one = yield* givenSubscription(org.id, {
          events: [...events],
          accountIds: Option.some([AccountId.make(1)])
        })
        const two = yield* givenSubscription(org.id, {
          events: [...events],
          accountIds: Option.some([AccountId.make(1), AccountId.make(2)])
        })
        const none = yield* givenSubscription(org.id, { events: [...events], accountIds: Option.some([]) })
        expect(Option.map(yield* store.findById(org.id, two.id), (r) => r.subscription.accountIds)).toEqual(
          Option.some(Option.some([1, 2]))
        )
        const batch = [
          event(org.id, { type: "post.scheduled", data: { post_id: "p1", account_ids: [1] } }),
          event(org.id, { type: "post.scheduled", data: { post_id: "p2", account_ids: [1, 2] } }),
          event(org.id, { type: "post.published", data: { post_id: "p3", account_id: 2 } }),
          event(org.id, { type: "post.scheduled", data: { post_id: "p4", account_ids: [] } }),
          event(org.id, {
            type: "post.partially_failed",
            data: { destinations: [{ account_id: 1 }, { account_id: 3 }] }
          }),
          event(org.id, { type: "account.disconnected", data: { account_id: 1 } }),
          event(org.id, { type: "media.uploaded", data: { media_id: "m1" } })
        ]
        yield* (yield* EventStore).append(batch.slice(0, 4))
        for (const e of batch.slice(4)) yield* (yield* EventStore).append([e])
        const received = (id: WebhookId) =>
          Effect.map(store.listDeliveries(id), (ds) => ds.map((d) => batch.findIndex((e) => e.id === d.eventId)))
        expect(yield* received(all.id)).toEqual([0, 1, 2, 3, 4, 5, 6])
        expect(yield* received(one.id)).toEqual([0, 5])
        expect(yield* received(two.id)).toEqual([0, 1, 2, 5])
        expect(yield* received(none.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("one append of many events keeps their order per subscription", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const s = yield* givenSubscription(org.id, { events: ["post.publishing", "post.published"] })
        const batch = Array.from(
          { length: 6 },
          (_, i) => event(org.id, { type: i % 2 === 0 ? "post.publishing" : "post.published", data: { n: i } })
        )
        yield* (yield* EventStore).append(batch)
        expect((yield* store.listDeliveries(s.id)).map((d) => d.eventId)).toEqual(batch.map((e) => e.id))
        const claim = onlyClaim(yield* claimAt(T0 + 1_000_000))
        expect(claim.deliveries.map((d) => d.event.id)).toEqual(batch.map((e) => e.id))
        expect(claim.deliveries.map((d) => d.event)).toEqual(batch)
      }).pipe(Effect.provide(layer)))

    it.effect("claims due deliveries a subscription at a time, up to the per-subscription limit, in event order", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const s1 = yield* givenSubscription(org.id)
        const s2 = yield* givenSubscription(org.id)
        const events = [
          yield* emit(org.id, "post.published"),
          yield* emit(org.id, "post.published"),
          yield* emit(org.id, "post.published")
        ]
        const now = Date.now() + 1000
        const claims = yield* claimAt(now, { perSubscription: 2 })
        expect(claims.map((c) => c.subscription.id).sort()).toEqual([s1.id, s2.id].sort())
        for (const c of claims) {
          expect(c.deliveries.map((d) => d.event.id)).toEqual([events[0]!.id, events[1]!.id])
          expect(c.deliveries.map((d) => d.attempt)).toEqual([1, 1])
          expect(Redacted.value(c.subscription.secret)).toBe(secret)
        }
        // Both are leased: nothing more to claim until released or the lease ends.
        expect(yield* claimAt(now)).toEqual([])
        yield* store.release(claims[0]!)
        const again = onlyClaim(yield* claimAt(now))
        expect(again.subscription.id).toBe(claims[0]!.subscription.id)
        // Released unsent, they are claimed again first, attempt 1 still.
        expect(again.deliveries.map((d) => [d.event.id, d.attempt])).toEqual(events.map((e) => [e.id, 1]))
        // The other subscription's lease runs out after a minute.
        const afterLease = yield* claimAt(now + 60_000)
        expect(afterLease.map((c) => c.subscription.id).sort()).toEqual([s1.id, s2.id].sort())
      }).pipe(Effect.provide(layer)))

    it.effect("shares claims out across organizations: turns by earliest due, at most perOrganization, counting what the claimer holds", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const [a, b, c] = [yield* givenOrganization, yield* givenOrganization, yield* givenOrganization]
        // a's three subscriptions have the earliest due deliveries, then b's two, then c's one.
        for (const [org, subscriptions, dueAt] of [[a, 3, 1_000], [b, 2, 2_000], [c, 1, 3_000]] as const) {
          for (let i = 0; i < subscriptions; i++) yield* givenSubscription(org.id)
          yield* TestClock.setTime(dueAt)
          yield* emit(org.id, "post.published")
        }
        const name = new Map([[a.id, "a"], [b.id, "b"], [c.id, "c"]])
        const claimShared = (
          options: { subscriptions: number; perOrganization?: number; held?: Map<OrganizationId, number> }
        ) =>
          Effect.gen(function*() {
            const claims = yield* store.claimDue({
              now: at(10_000),
              perSubscription: 10,
              leaseFor: "1 minute",
              ...options
            })
            yield* Effect.forEach(claims, (claim) => store.release(claim), { discard: true })
            return claims.map((claim) => name.get(claim.subscription.organizationId)).sort()
          })
        // Unshared: by earliest due delivery alone.
        expect(yield* claimShared({ subscriptions: 4 })).toEqual(["a", "a", "a", "b"])
        // Shared: one of each organization first (a, b, c), then a's second; never a third of a.
        expect(yield* claimShared({ subscriptions: 4, perOrganization: 2 })).toEqual(["a", "a", "b", "c"])
        expect(yield* claimShared({ subscriptions: 10, perOrganization: 2 })).toEqual(["a", "a", "b", "b", "c"])
        // What the claimer already holds counts: a is at its share; b's two and c's one are left.
        expect(yield* claimShared({ subscriptions: 4, perOrganization: 2, held: new Map([[a.id, 2]]) }))
          .toEqual(["b", "b", "c"])
        // Holding one of a and one of b, c (held by none) comes first, then a (earlier due than b).
        expect(yield* claimShared({ subscriptions: 2, perOrganization: 2, held: new Map([[a.id, 1], [b.id, 1]]) }))
          .toEqual(["a", "c"])
      }).pipe(Effect.provide(layer)))

    it.effect("a completion is fenced by the claim; Retry makes the next attempt due later", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const s = yield* givenSubscription(org.id)
        yield* emit(org.id, "post.published")
        const now = Date.now() + 1000
        const claim = onlyClaim(yield* claimAt(now))
        const claimed = claim.deliveries[0]!
        const forged = { ...claim, leaseToken: "someone-else" }
        expect(yield* store.complete(forged, claimed, { _tag: "Delivered" }, attemptFor(claimed))).toEqual({
          _tag: "Lost"
        })
        const retryAt = at(now + 30_000)
        expect(yield* store.complete(claim, claimed, { _tag: "Retry", at: retryAt }, attemptFor(claimed)))
          .toEqual({ _tag: "Recorded", isActive: true })
        // The same claim cannot record the same attempt twice.
        expect(yield* store.complete(claim, claimed, { _tag: "Delivered" }, attemptFor(claimed))).toEqual({
          _tag: "Lost"
        })
        const [delivery] = yield* store.listDeliveries(s.id)
        expect(delivery!.attempts).toBe(1)
        expect(delivery!.nextAttemptAt).toEqual(Option.some(retryAt))
        yield* store.release(claim)
        expect(yield* claimAt(now + 29_999)).toEqual([])
        const second = onlyClaim(yield* claimAt(now + 30_000))
        expect(second.deliveries.map((d) => d.attempt)).toEqual([2])
        const record = yield* store.findById(org.id, s.id)
        expect(Option.map(record, (r) => [r.lastStatus, r.lastDeliveryAt])).toEqual(
          Option.some([Option.some(500), Option.some(at(T0))])
        )
      }).pipe(Effect.provide(layer)))

    it.effect("Dead counts a failed delivery, Delivered resets, and the 20th dead in a row disables", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const s = yield* givenSubscription(org.id)
        const now = Date.now() + 1000
        const finish = (outcome: "Dead" | "Delivered") =>
          Effect.gen(function*() {
            yield* emit(org.id, "post.published")
            const claim = onlyClaim(yield* claimAt(now))
            const claimed = claim.deliveries[0]!
            const result = yield* store.complete(
              claim,
              claimed,
              { _tag: outcome },
              attemptFor(claimed, {
                ok: outcome === "Delivered"
              })
            )
            yield* store.release(claim)
            return result
          })
        for (let i = 0; i < 5; i++) yield* finish("Dead")
        const counter = () => Effect.map(store.findById(org.id, s.id), (r) => Option.getOrThrow(r).subscription)
        expect((yield* counter()).consecutiveFailures).toBe(5)
        yield* finish("Delivered")
        expect((yield* counter()).consecutiveFailures).toBe(0)
        for (let i = 1; i < WebhookActivity.disableAfter; i++) {
          expect(yield* finish("Dead")).toEqual({ _tag: "Recorded", isActive: true })
        }
        // A delivery pending behind the 20th is ended with it.
        yield* emit(org.id, "post.published")
        yield* emit(org.id, "post.published")
        const claim = onlyClaim(yield* claimAt(now, { perSubscription: 1 }))
        const claimed = claim.deliveries[0]!
        expect(yield* store.complete(claim, claimed, { _tag: "Dead" }, attemptFor(claimed))).toEqual({
          _tag: "Recorded",
          isActive: false
        })
        yield* store.release(claim)
        const disabled = yield* counter()
        expect([disabled.isActive, disabled.consecutiveFailures]).toEqual([false, 20])
        const deliveries = yield* store.listDeliveries(s.id)
        expect(deliveries.filter((d) => d.status === "pending")).toEqual([])
        // Inactive: no new deliveries, nothing to claim.
        yield* emit(org.id, "post.published")
        expect(yield* store.listDeliveries(s.id)).toHaveLength(deliveries.length)
        expect(yield* claimAt(now)).toEqual([])
        // Re-enabled: counter reset, deliveries again.
        const enabled = yield* store.update(org.id, s.id, { isActive: true, updatedAt: at(T0 + 5) })
        expect(Option.map(enabled, (r) => [r.subscription.isActive, r.subscription.consecutiveFailures])).toEqual(
          Option.some([true, 0])
        )
        yield* emit(org.id, "post.published")
        expect((yield* store.listDeliveries(s.id)).filter((d) => d.status === "pending")).toHaveLength(1)
      }).pipe(Effect.provide(layer)))

    it.effect("update changes url, events and name; disabling ends pending deliveries and keeps the counter", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const s = yield* givenSubscription(org.id, { consecutiveFailures: 3 })
        yield* emit(org.id, "post.published")
        const updated = yield* store.update(org.id, s.id, {
          url: "https://other.example.com/x",
          events: ["post.failed", "account.connected"],
          name: Option.none(),
          updatedAt: at(T0 + 9)
        })
        expect(Option.map(updated, (r) => r.subscription)).toEqual(Option.some(
          new WebhookSubscription({
            ...s,
            url: "https://other.example.com/x",
            events: ["post.failed", "account.connected"],
            name: Option.none(),
            updatedAt: at(T0 + 9)
          })
        ))
        // The fan-out follows the new event list.
        yield* emit(org.id, "post.published")
        yield* emit(org.id, "account.connected")
        expect((yield* store.listDeliveries(s.id)).map((d) => d.eventType)).toEqual([
          "post.published",
          "account.connected"
        ])
        const off = yield* store.update(org.id, s.id, { isActive: false, updatedAt: at(T0 + 10) })
        expect(Option.map(off, (r) => [r.subscription.isActive, r.subscription.consecutiveFailures])).toEqual(
          Option.some([false, 3])
        )
        expect((yield* store.listDeliveries(s.id)).map((d) => d.status)).toEqual(["dead", "dead"])
        const other = yield* givenOrganization
        expect(yield* store.update(other.id, s.id, { isActive: true, updatedAt: at(T0) })).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("lists attempts newest first, paged; remove deletes the subscription with its history", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const sql = yield* SqlClient.SqlClient
        const org = yield* givenOrganization
        const s = yield* givenSubscription(org.id)
        yield* emit(org.id, "post.published")
        const now = Date.now() + 1000
        const written: Array<DeliveryAttempt> = []
        for (let i = 1; i <= 3; i++) {
          const claim = onlyClaim(yield* claimAt(now + i * 10_000_000))
          const claimed = claim.deliveries[0]!
          const a = attemptFor(claimed, { attemptedAt: at(T0 + i), responseBody: `answer ${i}` })
          written.push(a)
          yield* store.complete(claim, claimed, { _tag: "Retry", at: at(now + i * 10_000_000) }, a)
          yield* store.release(claim)
        }
        expect(yield* store.listAttempts(org.id, s.id, { limit: 2, offset: 0 })).toEqual([written[2], written[1]])
        expect(yield* store.listAttempts(org.id, s.id, { limit: 2, offset: 2 })).toEqual([written[0]])
        expect(written.map((a) => a.attempt)).toEqual([1, 2, 3])
        const other = yield* givenOrganization
        expect(yield* store.listAttempts(other.id, s.id, { limit: 10, offset: 0 })).toEqual([])
        expect(yield* store.remove(other.id, s.id)).toBe(false)
        expect(yield* store.remove(org.id, s.id)).toBe(true)
        expect(yield* store.findById(org.id, s.id)).toEqual(Option.none())
        const left = yield* sql<{ n: number | string }>`SELECT
          (SELECT COUNT(*) FROM webhook_attempts WHERE subscription_id = ${s.id}) +
          (SELECT COUNT(*) FROM webhook_deliveries WHERE subscription_id = ${s.id}) +
          (SELECT COUNT(*) FROM webhook_subscription_events WHERE subscription_id = ${s.id}) AS n`
        expect(Number(left[0]!.n)).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.effect("nextDueAt is the earliest claimable instant of a pending delivery of an active subscription", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        expect(yield* store.nextDueAt).toEqual(Option.none())
        yield* givenSubscription(org.id)
        yield* emit(org.id, "post.published")
        const due = yield* store.nextDueAt
        expect(Option.isSome(due)).toBe(true)
        const now = Date.now() + 1000
        const claim = onlyClaim(yield* claimAt(now, { lease: 60_000 }))
        // Leased: claimable again when the lease ends.
        expect(yield* store.nextDueAt).toEqual(Option.some(claim.leaseExpiresAt))
      }).pipe(Effect.provide(layer)))

    it.effect("pruneDeliveries removes finished deliveries past the retention with their attempts; pending, retrying and recent ones stay", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const s = yield* givenSubscription(org.id)
        for (let i = 0; i < 5; i++) yield* emit(org.id, "post.published")
        const claim = onlyClaim(yield* claimAt(T0, { perSubscription: 10 }))
        const [delivered, dead, retrying, unsent, recent] = claim.deliveries
        yield* finishAt(claim, delivered!, "Delivered", T0 + 1 * DAY)
        yield* finishAt(claim, dead!, "Dead", T0 + 2 * DAY)
        yield* finishAt(claim, retrying!, "Retry", T0 + 1 * DAY)
        yield* finishAt(claim, recent!, "Delivered", T0 + 40 * DAY)
        yield* store.release(claim)
        expect(yield* countAttempts(s.id)).toBe(4)

        const prune = (finishedBefore: number, limit: number) =>
          store.pruneDeliveries({
            finishedBefore: at(finishedBefore),
            keepPerSubscription: 10_000,
            activeSince: at(T0),
            limit
          })
        // 30 days before day 41: the two finished on days 1 and 2 go, oldest first, a batch at a time.
        expect(yield* prune(T0 + 11 * DAY, 1)).toEqual({ deliveries: 1, attempts: 1 })
        expect((yield* store.listDeliveries(s.id)).map((d) => d.id)).not.toContain(delivered!.delivery.id)
        expect(yield* prune(T0 + 11 * DAY, 10)).toEqual({ deliveries: 1, attempts: 1 })
        expect(yield* prune(T0 + 11 * DAY, 10)).toEqual({ deliveries: 0, attempts: 0 })
        const left = yield* store.listDeliveries(s.id)
        expect(left.map((d) => [d.id, d.status, d.attempts])).toEqual([
          [retrying!.delivery.id, "pending", 1],
          [unsent!.delivery.id, "pending", 0],
          [recent!.delivery.id, "delivered", 1]
        ])
        const attempts = yield* store.listAttempts(org.id, s.id, { limit: 10, offset: 0 })
        expect(attempts.map((a) => a.deliveryId).sort()).toEqual([retrying!.delivery.id, recent!.delivery.id].sort())
        // However late the cutoff, a pending delivery (retrying or not yet sent) and its attempts stay.
        expect(yield* prune(T0 + 1000 * DAY, 10)).toEqual({ deliveries: 1, attempts: 1 })
        expect((yield* store.listDeliveries(s.id)).map((d) => d.status)).toEqual(["pending", "pending"])
        expect(yield* countAttempts(s.id)).toBe(1)
        // The retrying one is still claimable with its attempt count.
        const again = onlyClaim(yield* claimAt(T0 + 1000 * DAY))
        expect(again.deliveries.map((d) => [d.delivery.id, d.attempt])).toEqual([
          [retrying!.delivery.id, 2],
          [unsent!.delivery.id, 1]
        ])
      }).pipe(Effect.provide(layer)))

    it.effect("pruneDeliveries keeps a recently active webhook's newest finished deliveries up to the cap", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const active = yield* givenSubscription(org.id)
        const idle = yield* givenSubscription(org.id)
        for (let i = 0; i < 6; i++) yield* emit(org.id, "post.published")
        const claims = yield* claimAt(T0, { perSubscription: 10 })
        expect(claims).toHaveLength(2)
        for (const claim of claims) {
          const isActive = claim.subscription.id === active.id
          // Five finish an hour apart (the sixth stays pending); the idle webhook's last attempt was long ago.
          for (let i = 0; i < 5; i++) {
            yield* finishAt(
              claim,
              claim.deliveries[i]!,
              "Delivered",
              T0 + (i + 1) * HOUR,
              isActive ? T0 + (i + 1) * HOUR : T0 - 10 * DAY
            )
          }
          yield* store.release(claim)
        }
        const prune = () =>
          store.pruneDeliveries({
            finishedBefore: at(T0 - 100 * DAY),
            keepPerSubscription: 2,
            activeSince: at(T0),
            limit: 100
          })
        expect(yield* prune()).toEqual({ deliveries: 3, attempts: 3 })
        const kept = yield* store.listDeliveries(active.id)
        const activeClaim = claims.find((c) => c.subscription.id === active.id)!
        expect(kept.map((d) => [d.id, d.status])).toEqual([
          [activeClaim.deliveries[3]!.delivery.id, "delivered"],
          [activeClaim.deliveries[4]!.delivery.id, "delivered"],
          [activeClaim.deliveries[5]!.delivery.id, "pending"]
        ])
        expect(yield* countAttempts(active.id)).toBe(2)
        // The idle webhook did not grow since: not looked at.
        expect(yield* store.listDeliveries(idle.id)).toHaveLength(6)
        expect(yield* prune()).toEqual({ deliveries: 0, attempts: 0 })
      }).pipe(Effect.provide(layer)))

    it.effect("concurrent pruners remove each finished delivery once, and all of them", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const org = yield* givenOrganization
        const subs = [yield* givenSubscription(org.id), yield* givenSubscription(org.id)]
        for (let i = 0; i < 12; i++) yield* emit(org.id, "post.published")
        for (const claim of yield* claimAt(T0, { perSubscription: 20 })) {
          for (const claimed of claim.deliveries) yield* finishAt(claim, claimed, "Delivered", T0 + DAY)
          yield* store.release(claim)
        }
        const prune = (limit: number) =>
          store.pruneDeliveries({
            finishedBefore: at(T0 + 2 * DAY),
            keepPerSubscription: 10_000,
            activeSince: at(T0),
            limit
          })
        const rounds = yield* Effect.forEach(Array.from({ length: 6 }, () => 3), prune, { concurrency: "unbounded" })
        const rest = yield* prune(100)
        const total = [...rounds, rest].reduce((a, r) => ({
          deliveries: a.deliveries + r.deliveries,
          attempts: a.attempts + r.attempts
        }))
        expect(total).toEqual({ deliveries: 24, attempts: 24 })
        for (const s of subs) expect(yield* store.listDeliveries(s.id)).toEqual([])
      }).pipe(Effect.provide(concurrentLayer)), { timeout: 60_000 })

    it.effect("concurrent claimers never hold the same subscription", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const subs: Array<WebhookSubscription> = []
        for (let i = 0; i < 12; i++) subs.push(yield* givenSubscription(org.id))
        const events = yield* EventStore
        for (let i = 0; i < 3; i++) yield* events.append([event(org.id, { type: "post.published" })])
        const now = Date.now() + 1000
        const rounds = yield* Effect.forEach(
          Array.from({ length: 8 }, () => undefined),
          () => claimAt(now, { subscriptions: 3 }),
          { concurrency: "unbounded" }
        )
        // A claimer that meets rows locked by another skips them, so some may be left for the next round.
        const rest = yield* claimAt(now, { subscriptions: 12 })
        const held = [...rounds.flat(), ...rest].map((c) => c.subscription.id)
        expect(new Set(held).size).toBe(held.length)
        expect(held.length).toBe(12)
        for (const c of [...rounds.flat(), ...rest]) expect(c.deliveries).toHaveLength(3)
      }).pipe(Effect.provide(concurrentLayer)), { timeout: 60_000 })

    it.effect("event pruning keeps an event a pending delivery still has to send, and removes it once delivered", () =>
      Effect.gen(function*() {
        const events = yield* EventStore
        const org = yield* givenOrganization
        yield* givenSubscription(org.id)
        const pending = yield* emit(org.id, "post.published")
        // No subscription names post.failed: no delivery, nothing keeps it.
        const undelivered = yield* emit(org.id, "post.failed")
        const cutoff = at(T0 + DAY)
        expect(yield* events.prune(cutoff, 10)).toBe(1)
        expect(yield* events.findById(undelivered.id)).toEqual(Option.none())
        expect(yield* events.findById(pending.id)).toEqual(Option.some(pending))
        // Delivered: the delivery keeps its event id and type, the event itself is no longer needed.
        const claim = onlyClaim(yield* claimAt(T0 + 1000))
        yield* finishAt(claim, claim.deliveries[0]!, "Delivered", T0 + 2000)
        expect(yield* events.prune(cutoff, 10)).toBe(1)
        expect(yield* events.findById(pending.id)).toEqual(Option.none())
        const deliveries = yield* (yield* WebhookStore).listDeliveries(claim.subscription.id)
        expect(deliveries.map((d) => [d.eventId, d.eventType, d.status])).toEqual([[
          pending.id,
          "post.published",
          "delivered"
        ]])
      }).pipe(Effect.provide(layer)))
  })
