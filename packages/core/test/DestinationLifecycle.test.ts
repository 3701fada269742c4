import { describe, expect, it } from "@effect/vitest"
import { Duration, Either, FastCheck as fc } from "effect"
import type { DestinationStatus } from "../src/domain/Destination.js"
import {
  decideAfterFailure,
  DestinationEvent,
  IllegalTransition,
  maxAttempts,
  retryDelay,
  transition
} from "../src/posts/DestinationLifecycle.js"

const events = [
  DestinationEvent.Claim(),
  DestinationEvent.Succeed(),
  DestinationEvent.FailTransient(),
  DestinationEvent.FailPermanent(),
  DestinationEvent.ResolveUnknown(),
  DestinationEvent.Retry()
] as const
const event = fc.constantFrom(...events)
const status = fc.constantFrom<DestinationStatus>("queued", "publishing", "published", "failed")
const runs = { fastCheck: { numRuns: 500 } }

/** The legal moves, written out independently of the module's table. */
const legal: ReadonlyArray<readonly [DestinationStatus, string, DestinationStatus]> = [
  ["queued", "Claim", "publishing"],
  ["publishing", "Succeed", "published"],
  ["publishing", "FailTransient", "queued"],
  ["publishing", "FailPermanent", "failed"],
  ["publishing", "ResolveUnknown", "failed"],
  ["failed", "Retry", "queued"]
]

describe("destination transitions", () => {
  it.prop("every pair is either one of the legal moves or an IllegalTransition", [status, event], ([from, e]) => {
    const result = transition(from, e)
    const move = legal.find(([f, name]) => f === from && name === e._tag)
    if (move) {
      expect(result).toEqual(Either.right(move[2]))
    } else {
      expect(Either.isLeft(result)).toBe(true)
      const error = Either.getLeft(result)
      expect(error._tag === "Some" && error.value instanceof IllegalTransition).toBe(true)
      if (error._tag === "Some") expect([error.value.from, error.value.event]).toEqual([from, e._tag])
    }
  }, runs)

  it.prop("published is terminal", [event], ([e]) => {
    expect(Either.isLeft(transition("published", e))).toBe(true)
  }, runs)

  it.prop("from queued, no sequence of events reaches published without passing publishing", [
    fc.array(event, { maxLength: 30 })
  ], ([seq]) => {
    let current: DestinationStatus = "queued"
    let previous: DestinationStatus
    for (const e of seq) {
      const next = transition(current, e)
      if (Either.isRight(next)) {
        previous = current
        current = next.right
        if (current === "published") expect(previous).toBe("publishing")
      }
    }
  }, runs)

  it.prop("retryable failures below the limit retry after at least the back-off and the platform's delay", [
    fc.integer({ min: 1, max: maxAttempts - 1 }),
    fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined })
  ], ([attempts, retryAfterSeconds]) => {
    const decision = decideAfterFailure({ attempts, retryable: true, retryAfterSeconds })
    expect(decision._tag).toBe("Retry")
    if (decision._tag === "Retry") {
      expect(Duration.greaterThanOrEqualTo(decision.delay, retryDelay(attempts))).toBe(true)
      expect(Duration.toSeconds(decision.delay)).toBeGreaterThanOrEqual(retryAfterSeconds ?? 0)
    }
  }, runs)

  it.prop("the attempt limit, or a non-retryable failure, fails for good", [
    fc.integer({ min: 1, max: 50 }),
    fc.boolean()
  ], ([attempts, retryable]) => {
    const decision = decideAfterFailure({ attempts, retryable })
    expect(decision._tag === "Fail").toBe(!retryable || attempts >= maxAttempts)
  }, runs)

  it.prop("published is terminal whatever follows", [fc.array(event, { maxLength: 20 })], ([seq]) => {
    let current: DestinationStatus = "published"
    for (const e of seq) current = Either.getOrElse(transition(current, e), () => current)
    expect(current).toBe("published")
  }, runs)

  it.prop("a destination that only ever fails transiently is claimed maxAttempts times, then fails", [
    fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined })
  ], ([retryAfterSeconds]) => {
    let current: DestinationStatus = "queued"
    let attempts = 0
    const waits: Array<number> = []
    while (current !== "failed" && attempts < 100) {
      current = Either.getOrThrow(transition(current, DestinationEvent.Claim()))
      attempts++
      const decision = decideAfterFailure({ attempts, retryable: true, retryAfterSeconds })
      current = Either.getOrThrow(
        transition(
          current,
          decision._tag === "Retry" ? DestinationEvent.FailTransient() : DestinationEvent.FailPermanent()
        )
      )
      if (decision._tag === "Retry") waits.push(Duration.toSeconds(decision.delay))
    }
    expect(current).toBe("failed")
    expect(attempts).toBe(maxAttempts)
    expect(waits.length).toBe(maxAttempts - 1)
  }, runs)

  it.prop("the back-off grows with every attempt", [fc.integer({ min: 1, max: 10 })], ([n]) => {
    expect(Duration.lessThan(retryDelay(n), retryDelay(n + 1))).toBe(true)
  }, runs)

  it("backs off 30 s, then 2 min", () => {
    expect(Duration.toSeconds(retryDelay(1))).toBe(30)
    expect(Duration.toSeconds(retryDelay(2))).toBe(120)
  })
})
