import { describe, expect, it } from "@effect/vitest"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as Effect from "effect/Effect"
import { at, type StoresLayer, T0 } from "./Fixtures.js"

export const usageCountersContract = (layer: StoresLayer) =>
  describe("UsageCounters", () => {
    it.effect("counts per key and window, and purges ended windows", () =>
      Effect.gen(function*() {
        const counters = yield* UsageCounters
        const w1 = at(T0 + 60_000)
        const w2 = at(T0 + 120_000)
        expect(yield* counters.get("k", w1)).toBe(0)
        expect(yield* counters.increment("k", w1, 1)).toBe(1)
        expect(yield* counters.increment("k", w1, 5)).toBe(6)
        expect(yield* counters.increment("k", w2, 2)).toBe(2)
        expect(yield* counters.increment("other", w1, 3)).toBe(3)
        expect(yield* counters.get("k", w1)).toBe(6)
        expect(yield* counters.purge(w2, 10)).toBe(2)
        expect(yield* counters.get("k", w1)).toBe(0)
        expect(yield* counters.get("other", w1)).toBe(0)
        expect(yield* counters.get("k", w2)).toBe(2)
      }).pipe(Effect.provide(layer)))

    it.live("200 parallel increments of one window add up to 200", () =>
      Effect.gen(function*() {
        const counters = yield* UsageCounters
        const window = at(T0 + 60_000)
        const totals = yield* Effect.all(
          Array.from({ length: 200 }, () => counters.increment("burst", window, 1)),
          { concurrency: "unbounded" }
        )
        expect(yield* counters.get("burst", window)).toBe(200)
        // Every increment saw a distinct running total.
        expect(new Set(totals).size).toBe(200)
      }).pipe(Effect.provide(layer)))

    it.effect("purge removes at most the limit of the windows ended before the cutoff, and keeps the rest", () =>
      Effect.gen(function*() {
        const counters = yield* UsageCounters
        // Ended long ago (a lock row at window 0, minute windows), and the current window.
        yield* counters.increment("lock", at(0), 1)
        for (let i = 1; i <= 4; i++) yield* counters.increment(`minute-${i}`, at(T0 + i * 60_000), i)
        const current = at(T0 + 3_600_000)
        yield* counters.increment("current", current, 7)
        const cutoff = at(T0 + 10 * 60_000)
        expect(yield* counters.purge(cutoff, 0)).toBe(0)
        expect(yield* counters.purge(cutoff, 3)).toBe(3)
        expect(yield* counters.purge(cutoff, 3)).toBe(2)
        expect(yield* counters.purge(cutoff, 3)).toBe(0)
        expect(yield* counters.get("lock", at(0))).toBe(0)
        expect(yield* counters.get("minute-4", at(T0 + 4 * 60_000))).toBe(0)
        expect(yield* counters.get("current", current)).toBe(7)
      }).pipe(Effect.provide(layer)))
  })
