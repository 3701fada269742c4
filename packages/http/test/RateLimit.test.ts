import { it } from "@effect/vitest"
import { ApiKeyId } from "@herald/core/kernel/Ids"
import { incrementWithinOf, RequestCounters } from "@herald/core/access/RequestCounters"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { describe, expect } from "vitest"
import * as RateLimit from "../src/RateLimit.js"

/** Counters in memory, recording purges. */
const memory = () => {
  const counts = new Map<string, number>()
  const purges: Array<number> = []
  const increment: RequestCounters["Type"]["increment"] = (key, end, amount) =>
    Effect.sync(() => {
      const k = `${key}@${DateTime.toEpochMillis(end)}`
      const n = (counts.get(k) ?? 0) + amount
      counts.set(k, n)
      return n
    })
  const layer = Layer.succeed(
    RequestCounters,
    RequestCounters.of({
      increment,
      incrementWithin: incrementWithinOf(increment),
      purge: (before) => Effect.sync(() => void purges.push(DateTime.toEpochMillis(before)))
    })
  )
  return { counts, purges, layer }
}

const key = ApiKeyId.make("00000000-0000-4000-8000-000000000001")

describe("RateLimit", () => {
  it("aligns windows to the clock", () => {
    const t = DateTime.unsafeMake(Date.UTC(2026, 0, 1, 10, 30, 15, 500))
    expect(DateTime.formatIso(RateLimit.windowEnd(t, 60_000))).toBe("2026-01-01T10:31:00.000Z")
    expect(DateTime.formatIso(RateLimit.windowEnd(t, 3_600_000))).toBe("2026-01-01T11:00:00.000Z")
  })

  it.effect("refuses past the minute limit until the next window, and purges old windows", () => {
    const store = memory()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 0, 1, 10, 30, 5))
      for (let i = 0; i < 3; i++) yield* RateLimit.consume(key)
      const refused = yield* Effect.either(RateLimit.consume(key))
      expect(Either.isLeft(refused)).toBe(true)
      if (Either.isLeft(refused)) {
        expect(refused.left.code).toBe("rate_limit_exceeded")
        expect(refused.left.details).toEqual({ limit: 3, remaining: 0, reset_at: "2026-01-01T10:31:00.000Z" })
      }
      // Refused requests do not eat the hour budget.
      expect(store.counts.get(`rate:key:${key}:hour@${Date.UTC(2026, 0, 1, 11)}`)).toBe(3)
      yield* TestClock.adjust("1 minute")
      yield* RateLimit.consume(key)
      yield* Effect.yieldNow()
      expect(store.purges.length).toBe(2) // once per fresh minute window
    }).pipe(Effect.provide(Layer.merge(store.layer, RateLimit.layer({ perMinute: 3, perHour: 100 }))))
  })

  it.effect("refuses past the hour limit with the hour's window", () => {
    const store = memory()
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 0, 1, 10, 59, 59))
      yield* RateLimit.consume(key)
      yield* RateLimit.consume(key)
      const refused = yield* Effect.flip(RateLimit.consume(key))
      expect(refused.details).toMatchObject({ limit: 2, reset_at: "2026-01-01T11:00:00.000Z" })
    }).pipe(Effect.provide(Layer.merge(store.layer, RateLimit.layer({ perMinute: 10, perHour: 2 }))))
  })
})
