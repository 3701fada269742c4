import { describe, expect, it } from "@effect/vitest"
import * as CircuitBreaker from "@herald/core/posts/CircuitBreaker"
import { OrganizationId } from "@herald/core/kernel/Ids"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FastCheck from "effect/FastCheck"
import * as TestClock from "effect/TestClock"

const memoryCounters = Layer.sync(UsageCounters, () => {
  const counts = new Map<string, number>()
  const id = (key: string, end: DateTime.Utc) => `${key}@${DateTime.toEpochMillis(end)}`
  return UsageCounters.of({
    increment: (key, end, amount) =>
      Effect.sync(() => {
        const next = (counts.get(id(key, end)) ?? 0) + amount
        counts.set(id(key, end), next)
        return next
      }),
    get: (key, end) => Effect.sync(() => counts.get(id(key, end)) ?? 0),
    purge: () => Effect.succeed(0)
  })
})

const org = OrganizationId.make("00000000-0000-4000-8000-000000000001")
const other = OrganizationId.make("00000000-0000-4000-8000-000000000002")

describe("canonicalJson", () => {
  it("ignores key order and whitespace at every depth, keeps array order", () => {
    const a = JSON.parse(`{"b": 1, "a": {"y": [1, 2], "x": "s"}}`)
    const b = JSON.parse(`{"a":{"x":"s","y":[1,2]},"b":1}`)
    expect(CircuitBreaker.canonicalJson(a)).toBe(CircuitBreaker.canonicalJson(b))
    expect(CircuitBreaker.canonicalJson(a)).toBe(`{"a":{"x":"s","y":[1,2]},"b":1}`)
    expect(CircuitBreaker.canonicalJson({ a: [2, 1] })).not.toBe(CircuitBreaker.canonicalJson({ a: [1, 2] }))
  })

  it("an idempotency_key changes the input", () => {
    expect(CircuitBreaker.canonicalJson({ content: "x" })).not.toBe(
      CircuitBreaker.canonicalJson({ content: "x", idempotency_key: "k" })
    )
  })

  /** The previous, recursive implementation: the oracle for the iterative one. */
  const recursive = (value: unknown): string => {
    if (value === null || typeof value !== "object") return value === undefined ? "null" : JSON.stringify(value)
    if (Array.isArray(value)) return `[${value.map(recursive).join(",")}]`
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${recursive(v)}`).join(",")}}`
  }

  it.prop("writes what the recursive implementation wrote", [FastCheck.jsonValue({ maxDepth: 6 })], ([value]) => {
    expect(CircuitBreaker.canonicalJson(value)).toBe(recursive(value))
  }, { fastCheck: { numRuns: 500 } })

  it("undefined members are dropped, undefined elements are null", () => {
    expect(CircuitBreaker.canonicalJson({ b: undefined, a: [undefined, 1] })).toBe(`{"a":[null,1]}`)
    expect(CircuitBreaker.canonicalJson(undefined)).toBe("null")
  })

  it("100,000 levels of nesting do not overflow the stack", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep }
    const json = CircuitBreaker.canonicalJson(deep)
    expect(json.length).toBe(1 + 50_000 * 2 + 50_000 * 6)
    expect(json.startsWith(`{"a":[{"a":[`)).toBe(true)
  })
})

describe("the breaker", () => {
  it.effect("opens at the 5th failure within the window, with the spec's details", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(DateTime.unsafeMake("2026-07-01T10:10:00Z")))
      for (let i = 0; i < 4; i++) yield* CircuitBreaker.recordFailure(org, "h1")
      yield* CircuitBreaker.check(org, "h1")
      yield* CircuitBreaker.recordFailure(org, "h1")
      const error = yield* Effect.flip(CircuitBreaker.check(org, "h1"))
      expect(error._tag).toBe("DomainError")
      if (error._tag !== "DomainError") return
      expect(error.code).toBe("permanent_failure_circuit_breaker")
      expect(error.details).toEqual({
        circuit_breaker_open: true,
        content_hash: "h1",
        fail_count: 5,
        threshold: 5,
        ttl_seconds: 21600,
        hint: CircuitBreaker.hint
      })
      // Another body and another organization are not affected.
      yield* CircuitBreaker.check(org, "h2")
      yield* CircuitBreaker.check(other, "h1")
    }).pipe(Effect.provide(memoryCounters)))

  it.effect("the window slides: five failures over just over five hours open it; each counts for exactly 6 hours", () =>
    Effect.gen(function*() {
      // 10:59:00, 12:00, 13:00, 14:00, 15:00:30: five failures across six clock hours, 4 h 01 min 30 s apart end to end.
      yield* TestClock.setTime(DateTime.toEpochMillis(DateTime.unsafeMake("2026-07-01T10:59:00Z")))
      for (const step of [61 * 60_000, 3_600_000, 3_600_000, 3_630_000]) {
        yield* CircuitBreaker.recordFailure(org, "h")
        yield* TestClock.adjust(step)
      }
      yield* CircuitBreaker.recordFailure(org, "h")
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(5)
      yield* Effect.flip(CircuitBreaker.check(org, "h"))
      // 16:58:59.999: the first failure is 1 ms short of 6 hours old and still counts.
      yield* TestClock.setTime(DateTime.toEpochMillis(DateTime.unsafeMake("2026-07-01T16:58:59.999Z")))
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(5)
      // 16:59:00: exactly 6 hours old, it no longer counts: closed.
      yield* TestClock.adjust("1 millis")
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(4)
      yield* CircuitBreaker.check(org, "h")
      // One more failure now: five within the last 6 hours again.
      yield* CircuitBreaker.recordFailure(org, "h")
      yield* Effect.flip(CircuitBreaker.check(org, "h"))
      yield* TestClock.adjust("6 hours")
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(0)
    }).pipe(Effect.provide(memoryCounters)))

  /** Failures at these offsets (ms, ascending) from a start, then a check at `checkAt`: the reference answer. */
  const reference = (offsets: ReadonlyArray<number>, checkAt: number): boolean =>
    offsets.filter((t) => t <= checkAt && checkAt - t < CircuitBreaker.ttlSeconds * 1000).length >=
      CircuitBreaker.threshold

  it.effect.prop(
    "open exactly when 5 failures fall within the last 6 hours (any times, checked after each step)",
    [
      FastCheck.array(FastCheck.integer({ min: 0, max: 4 * 3_600_000 }), { minLength: 0, maxLength: 14 }),
      FastCheck.array(FastCheck.integer({ min: 0, max: 7 * 3_600_000 }), { minLength: 1, maxLength: 4 })
    ],
    ([gaps, probes]) =>
      Effect.gen(function*() {
        const start = DateTime.toEpochMillis(DateTime.unsafeMake("2026-07-01T00:00:00Z"))
        yield* TestClock.setTime(start)
        const offsets: Array<number> = []
        let t = 0
        for (const gap of gaps) {
          t += gap
          yield* TestClock.setTime(start + t)
          yield* CircuitBreaker.recordFailure(org, "p")
          offsets.push(t)
          const open = (yield* Effect.either(CircuitBreaker.check(org, "p")))._tag === "Left"
          expect(open).toBe(reference(offsets, t))
        }
        for (const probe of probes) {
          const at = t + probe
          yield* TestClock.setTime(start + at)
          const open = (yield* Effect.either(CircuitBreaker.check(org, "p")))._tag === "Left"
          expect([at, open]).toEqual([at, reference(offsets, at)])
        }
      }).pipe(Effect.provide(memoryCounters)),
    { fastCheck: { numRuns: 100 }, timeout: 120_000 }
  )

  it.effect("keeps six counters per body however many failures it has", () =>
    Effect.gen(function*() {
      const keys = new Set<string>()
      const counting = Layer.sync(UsageCounters, () => {
        const counts = new Map<string, number>()
        return UsageCounters.of({
          increment: (key, end, amount) =>
            Effect.sync(() => {
              keys.add(key)
              const id = `${key}@${DateTime.toEpochMillis(end)}`
              counts.set(id, (counts.get(id) ?? 0) + amount)
              return counts.get(id)!
            }),
          get: (key, end) => Effect.sync(() => counts.get(`${key}@${DateTime.toEpochMillis(end)}`) ?? 0),
          purge: () => Effect.succeed(0)
        })
      })
      yield* Effect.gen(function*() {
        for (let i = 0; i < 40; i++) {
          yield* CircuitBreaker.recordFailure(org, "many")
          yield* TestClock.adjust("10 minutes")
        }
      }).pipe(Effect.provide(counting))
      expect(keys.size).toBe(CircuitBreaker.threshold + 1)
      expect([...keys].every((k) => k.startsWith(`breaker:${org}:many:`))).toBe(true)
    }))
})
