import { describe, expect, it } from "@effect/vitest"
import { Duration, FastCheck as fc, Option } from "effect"
import * as WebhookActivity from "../src/WebhookActivity.js"

const runs = { fastCheck: { numRuns: 500 } }

describe("webhook delivery ladder", () => {
  it("waits 30 s, 2 min, 10 min, 1 h and 6 h between the six attempts, then is dead", () => {
    const delays = [1, 2, 3, 4, 5].map((n) => Duration.toSeconds(Option.getOrThrow(WebhookActivity.nextAttemptDelay(n))))
    expect(delays).toEqual([30, 120, 600, 3600, 21600])
    expect(WebhookActivity.nextAttemptDelay(6)).toEqual(Option.none())
  })

  it.prop("a delivery is dead exactly after its sixth failed attempt", [fc.integer({ min: 1, max: 100 })], ([n]) => {
    expect(Option.isNone(WebhookActivity.nextAttemptDelay(n))).toBe(n >= 6)
  }, runs)
})

describe("webhook subscription activity", () => {
  const failures = (n: number, start = { isActive: true, consecutiveFailures: 0 }) => {
    let a = start
    for (let i = 0; i < n; i++) a = WebhookActivity.afterDeliveryFailure(a)
    return a
  }

  it.prop("stays active below 20 consecutive failures and is disabled at 20, keeping the counter", [fc.integer({ min: 0, max: 60 })], ([n]) => {
    const a = failures(n)
    expect(a.isActive).toBe(n < 20)
    expect(a.consecutiveFailures).toBe(n)
  }, runs)

  it.prop("a success in between resets the run", [fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 19 })], ([before, after]) => {
    const a = failures(after, WebhookActivity.afterDeliverySuccess(failures(before)))
    expect(a).toEqual({ isActive: true, consecutiveFailures: after })
  }, runs)

  it.prop("re-enabling resets the counter; disabling keeps it", [fc.integer({ min: 0, max: 60 })], ([n]) => {
    expect(WebhookActivity.setActive(failures(n), true)).toEqual({ isActive: true, consecutiveFailures: 0 })
    expect(WebhookActivity.setActive(failures(n), false)).toEqual({ isActive: false, consecutiveFailures: n })
  }, runs)
})
