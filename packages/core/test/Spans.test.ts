import { describe, expect, it } from "@effect/vitest"
import * as Spans from "@herald/core/kernel/Spans"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const parentName = Effect.map(
  Effect.option(Effect.currentParentSpan),
  (span) => Option.match(span, { onNone: () => "none", onSome: (s) => (s._tag === "Span" ? s.name : "external") })
)

describe("Spans.withSpan", () => {
  it.effect("with the tracer on, the effect runs in a span of that name, a child of the caller's", () =>
    Effect.gen(function*() {
      const inner = yield* parentName.pipe(Spans.withSpan("PostStore.insert"))
      expect(inner).toBe("PostStore.insert")
      const span = yield* Effect.currentParentSpan.pipe(Spans.withSpan("inner"), Effect.withSpan("outer"))
      expect(span._tag === "Span" && Option.map(span.parent, (p) => (p._tag === "Span" ? p.name : "external"))).toEqual(
        Option.some("outer")
      )
    }))

  it.effect("with the tracer off, no span is made or provided: the effect sees the caller's context", () =>
    Effect.gen(function*() {
      expect(yield* parentName.pipe(Spans.withSpan("PostStore.insert"))).toBe("none")
      // Effect's own withSpan still provides a (no-op) parent span then: what this skips.
      expect(yield* parentName.pipe(Effect.withSpan("PostStore.insert"))).toBe("PostStore.insert")
      expect(yield* Effect.succeed(42).pipe(Spans.withSpan("x"))).toBe(42)
      expect(yield* Effect.exit(Effect.fail("no").pipe(Spans.withSpan("x")))).toMatchObject({ _tag: "Failure" })
    }).pipe(Effect.withTracerEnabled(false)))
})
