import { describe, expect, it } from "@effect/vitest"
import { Duration, FastCheck as fc, Option } from "effect"
import * as WebhookActivity from "../src/webhooks/WebhookActivity.js"

const runs = { fastCheck: { numRuns: 500 } }

describe("webhook delivery ladder", () => {
  it("waits 30 s, 2 min, 10 min, 1 h and 6 h between the six attempts, then is dead", () => {
    const delays = [1, 2, 3, 4, 5].map((n) =>
      Duration.toSeconds(Option.getOrThrow(WebhookActivity.nextAttemptDelay(n)))
    )
    expect(delays).toEqual([30, 120, 600, 3600, 21600])
    expect(WebhookActivity.nextAttemptDelay(6)).toEqual(Option.none())
  })

  it.prop("a delivery is dead exactly after its sixth failed attempt", [fc.integer({ min: 1, max: 100 })], ([n]) => {
    expect(Option.isNone(WebhookActivity.nextAttemptDelay(n))).toBe(n >= 6)
  }, runs)
})

describe("webhook delivery ladder, over whole deliveries", () => {
  const schedule = () => {
    const waits: Array<number> = []
    let attempt = 1
    for (;;) {
      const next = WebhookActivity.nextAttemptDelay(attempt)
      if (Option.isNone(next)) return { attempts: attempt, waits }
      waits.push(Duration.toSeconds(next.value))
      attempt++
    }
  }

  it("a delivery that always fails is tried 6 times over 7 h 12 min 30 s, then dead", () => {
    const { attempts, waits } = schedule()
    expect(attempts).toBe(6)
    expect(waits.reduce((x, y) => x + y, 0)).toBe(30 + 120 + 600 + 3600 + 21600)
  })

  it.prop("each wait is longer than the one before", [fc.integer({ min: 1, max: 4 })], ([n]) => {
    const a = Option.getOrThrow(WebhookActivity.nextAttemptDelay(n))
    const b = Option.getOrThrow(WebhookActivity.nextAttemptDelay(n + 1))
    expect(Duration.lessThan(a, b)).toBe(true)
  }, runs)
})

/** Runs of failed deliveries (false) of 0 to 25, separated by a success (true): runs near 20 are common. */
const outcomesArb = fc.array(fc.integer({ min: 0, max: 25 }), { maxLength: 5 }).map((lengths) =>
  lengths.flatMap((n, i) => [...(i > 0 ? [true] : []), ...Array<boolean>(n).fill(false)])
)

describe("webhook subscription activity", () => {
  it.prop("over any run of outcomes: inactive exactly once 20 failures came in a row; the counter is the current run", [
    outcomesArb
  ], ([outcomes]) => {
    let a: WebhookActivity.Activity = { isActive: true, consecutiveFailures: 0 }
    let run = 0
    let longest = 0
    for (const ok of outcomes) {
      a = ok ? WebhookActivity.afterDeliverySuccess(a) : WebhookActivity.afterDeliveryFailure(a)
      run = ok ? 0 : run + 1
      longest = Math.max(longest, run)
      expect(a.consecutiveFailures).toBe(run)
      expect(a.isActive).toBe(longest < 20)
    }
  }, runs)

  const failures = (n: number, start = { isActive: true, consecutiveFailures: 0 }) => {
    let a = start
    for (let i = 0; i < n; i++) a = WebhookActivity.afterDeliveryFailure(a)
    return a
  }

  it.prop("stays active below 20 consecutive failures and is disabled at 20, keeping the counter", [
    fc.integer({ min: 0, max: 60 })
  ], ([n]) => {
    const a = failures(n)
    expect(a.isActive).toBe(n < 20)
    expect(a.consecutiveFailures).toBe(n)
  }, runs)

  it.prop(
    "a success in between resets the run",
    [fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 19 })],
    ([before, after]) => {
      const a = failures(after, WebhookActivity.afterDeliverySuccess(failures(before)))
      expect(a).toEqual({ isActive: true, consecutiveFailures: after })
    },
    runs
  )

  it.prop("re-enabling resets the counter; disabling keeps it", [fc.integer({ min: 0, max: 60 })], ([n]) => {
    expect(WebhookActivity.setActive(failures(n), true)).toEqual({ isActive: true, consecutiveFailures: 0 })
    expect(WebhookActivity.setActive(failures(n), false)).toEqual({ isActive: false, consecutiveFailures: n })
  }, runs)
})
