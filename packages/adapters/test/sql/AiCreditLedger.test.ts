/**
 * The AI credit ledger over SQL, on SQLite and on Postgres where one answers: a reservation within the
 * allowance is recorded and counted in the month's counter (what GET /me reads), one past it changes
 * nothing; settling gives back the unused part once; usedBetween sums charges by time; and concurrent
 * reservations never take the month past its allowance.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as AiCredits from "@herald/core/ai/AiCredits"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { organization } from "../contract/Fixtures.js"
import { databasesUnderTest } from "../support/TestDatabases.js"

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))

const now = DateTime.unsafeMake("2026-11-15T12:00:00Z")
const windowEnd = AiCredits.monthWindowEnd(now)

const charge = (organizationId: OrganizationId, credits: number, limit = 10, at = now): AiCredits.Charge => ({
  id: randomUUID(),
  organizationId,
  operation: "caption",
  model: "test",
  credits,
  limit,
  windowEnd,
  createdAt: at
})

const newOrg = Effect.gen(function*() {
  const org = organization()
  yield* (yield* OrganizationStore).insert(org)
  return org.id
})

const counted = (org: OrganizationId) =>
  Effect.flatMap(UsageCounters, (c) => c.get(AiCredits.counterKey(org), windowEnd))

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`AI credit ledger on ${db.label}`, () => {
    if (db.layer === undefined) return
    layer(SqlStores.layer.pipe(Layer.provide(randomIds), Layer.provideMerge(db.layer)))((it) => {
      it.effect("reserves within the allowance, refuses past it without changing anything", () =>
        Effect.gen(function*() {
          const ledger = yield* AiCredits.AiCreditLedger
          const org = yield* newOrg
          expect(yield* ledger.reserve(charge(org, 6))).toEqual({ _tag: "Reserved", used: 6 })
          expect(yield* ledger.reserve(charge(org, 5))).toEqual({ _tag: "Insufficient", used: 6 })
          expect(yield* counted(org)).toBe(6)
          expect(yield* ledger.reserve(charge(org, 4))).toEqual({ _tag: "Reserved", used: 10 })
          expect(yield* ledger.reserve(charge(org, 1))).toEqual({ _tag: "Insufficient", used: 10 })
          expect(yield* counted(org)).toBe(10)
          expect(yield* ledger.usedBetween(org, DateTime.unsafeMake(0), windowEnd)).toBe(10)
        }))

      it.effect("settles once: the unused part goes back to the month, a refund to zero gives all back", () =>
        Effect.gen(function*() {
          const ledger = yield* AiCredits.AiCreditLedger
          const org = yield* newOrg
          const five = charge(org, 5)
          yield* ledger.reserve(five)
          expect(yield* ledger.settle(org, five.id, 3)).toBe(true)
          expect(yield* counted(org)).toBe(3)
          expect(yield* ledger.settle(org, five.id, 0)).toBe(false)
          expect(yield* counted(org)).toBe(3)
          const two = charge(org, 2)
          yield* ledger.reserve(two)
          expect(yield* ledger.settle(org, two.id, 0)).toBe(true)
          expect(yield* counted(org)).toBe(3)
          // Another organization cannot settle it.
          const other = yield* newOrg
          const mine = charge(org, 1)
          yield* ledger.reserve(mine)
          expect(yield* ledger.settle(other, mine.id, 0)).toBe(false)
          expect(yield* counted(org)).toBe(4)
        }))

      it.effect("usedBetween sums settled and open charges by time, per organization", () =>
        Effect.gen(function*() {
          const ledger = yield* AiCredits.AiCreditLedger
          const org = yield* newOrg
          const other = yield* newOrg
          const at = (iso: string) => DateTime.unsafeMake(iso)
          const a = charge(org, 3, 100, at("2026-11-01T00:00:00Z"))
          yield* ledger.reserve(a)
          yield* ledger.settle(org, a.id, 2)
          yield* ledger.reserve(charge(org, 4, 100, at("2026-11-10T00:00:00Z")))
          yield* ledger.reserve(charge(other, 7, 100, at("2026-11-10T00:00:00Z")))
          expect(yield* ledger.usedBetween(org, at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z"))).toBe(6)
          expect(yield* ledger.usedBetween(org, at("2026-11-01T00:00:00Z"), at("2026-11-10T00:00:00Z"))).toBe(2)
          expect(yield* ledger.usedBetween(org, at("2026-11-10T00:00:00Z"), at("2026-11-11T00:00:00Z"))).toBe(4)
          expect(yield* ledger.usedBetween(org, at("2026-10-01T00:00:00Z"), at("2026-11-01T00:00:00Z"))).toBe(0)
        }))

      it.effect("concurrent reservations never pass the allowance", () =>
        Effect.gen(function*() {
          const ledger = yield* AiCredits.AiCreditLedger
          const org = yield* newOrg
          const results = yield* Effect.forEach(
            Array.from({ length: 30 }, () => charge(org, 1, 10)),
            (c) => ledger.reserve(c),
            { concurrency: "unbounded" }
          )
          expect(results.filter((r) => r._tag === "Reserved")).toHaveLength(10)
          expect(yield* counted(org)).toBe(10)
          expect(yield* ledger.usedBetween(org, DateTime.unsafeMake(0), windowEnd)).toBe(10)
        }))
    })
  })
}
