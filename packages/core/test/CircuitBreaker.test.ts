import { describe, expect, it } from "@effect/vitest"
import * as CircuitBreaker from "@herald/core/publishing/CircuitBreaker"
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
    purge: () => Effect.void
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

  it.effect("failures spread over hours still count; it closes within 6 hours of the last failure", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(DateTime.unsafeMake("2026-07-01T10:10:00Z")))
      for (let i = 0; i < 5; i++) {
        yield* CircuitBreaker.recordFailure(org, "h")
        if (i < 4) yield* TestClock.adjust("1 hour")
      }
      // 14:10: failures at 10:10 ... 14:10 are all within the window.
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(5)
      yield* Effect.flip(CircuitBreaker.check(org, "h"))
      // 15:30: the 10:10 failure is 5 h 20 min old and still counts.
      yield* TestClock.adjust("80 minutes")
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(5)
      // 16:05: it has aged out (a failure counts for 5 to 6 hours), 4 remain: closed.
      yield* TestClock.adjust("35 minutes")
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(4)
      yield* CircuitBreaker.check(org, "h")
      // 6 hours after the last failure nothing is left.
      yield* TestClock.adjust("6 hours")
      expect(yield* CircuitBreaker.failureCount(org, "h")).toBe(0)
    }).pipe(Effect.provide(memoryCounters)))

  it("the counter key names the organization and the hash", () => {
    const w = CircuitBreaker.window(org, "abc", DateTime.unsafeMake("2026-07-01T10:10:00Z"))
    expect(w.key).toBe(`breaker:${org}:abc`)
    expect(DateTime.formatIso(w.windowEnd)).toBe("2026-07-01T11:00:00.000Z")
  })
})
