import { describe, expect, it } from "@effect/vitest"
import { DateTime, FastCheck as fc, Option } from "effect"
import { assess, recentFailureThreshold } from "../src/accounts/AccountHealth.js"

const now = DateTime.unsafeMake("2026-11-22T12:00:00Z")
const day = 86_400_000
const accountArb = fc.record({
  isActive: fc.boolean(),
  needsReconnection: fc.boolean(),
  expiresInMs: fc.option(fc.integer({ min: -30 * day, max: 60 * day }), { nil: undefined }),
  recentFailures: fc.integer({ min: 0, max: 10 })
}).map((a) => ({
  isActive: a.isActive,
  needsReconnection: a.needsReconnection,
  recentFailures: a.recentFailures,
  tokenExpiresAt: a.expiresInMs === undefined
    ? Option.none()
    : Option.some(DateTime.unsafeMake(DateTime.toEpochMillis(now) + a.expiresInMs)),
  expiresInMs: a.expiresInMs
}))
const runs = { fastCheck: { numRuns: 500 } }

describe("account health", () => {
  it.prop("broken exactly when inactive, needing reconnection or with an expired token; then it cannot post", [
    accountArb
  ], ([a]) => {
    const expired = a.expiresInMs !== undefined && a.expiresInMs <= 0
    const broken = !a.isActive || a.needsReconnection || expired
    const h = assess(a, now)
    expect(h.status === "broken").toBe(broken)
    expect(h.canPost).toBe(!broken)
    expect(h.needsReconnection).toBe(a.needsReconnection || expired)
  }, runs)

  it.prop("warning exactly when not broken but expiring within 7 days or failing repeatedly", [accountArb], ([a]) => {
    const h = assess(a, now)
    const soon = a.expiresInMs !== undefined && a.expiresInMs > 0 && a.expiresInMs <= 7 * day
    const failing = a.recentFailures >= recentFailureThreshold
    if (h.status !== "broken") expect(h.status === "warning").toBe(soon || failing)
    expect(h.reasons.includes("token_expiring_soon")).toBe(soon)
    expect(h.reasons.includes("recent_permanent_failures")).toBe(failing)
  }, runs)

  it.prop("every reason is reported once, broken reasons first", [accountArb], ([a]) => {
    const h = assess(a, now)
    expect(new Set(h.reasons).size).toBe(h.reasons.length)
    const brokenSet = new Set(["account_inactive", "needs_reconnection", "token_expired"])
    const firstWarning = h.reasons.findIndex((r) => !brokenSet.has(r))
    if (firstWarning >= 0) expect(h.reasons.slice(firstWarning).every((r) => !brokenSet.has(r))).toBe(true)
  }, runs)

  it.prop("reasons are exactly the applicable ones, always in the same order", [accountArb], ([a]) => {
    const expired = a.expiresInMs !== undefined && a.expiresInMs <= 0
    const applies = {
      account_inactive: !a.isActive,
      needs_reconnection: a.needsReconnection,
      token_expired: expired,
      token_expiring_soon: a.expiresInMs !== undefined && a.expiresInMs > 0 && a.expiresInMs <= 7 * day,
      recent_permanent_failures: a.recentFailures >= recentFailureThreshold
    }
    const order = [
      "account_inactive",
      "needs_reconnection",
      "token_expired",
      "token_expiring_soon",
      "recent_permanent_failures"
    ] as const
    const h = assess(a, now)
    expect(h.reasons).toEqual(order.filter((r) => applies[r]))
    expect(h.status === "healthy").toBe(h.reasons.length === 0)
  }, runs)

  it("a token expiring exactly now is expired; exactly 7 days out is expiring soon; just beyond is fine", () => {
    const at = (ms: number) => ({
      isActive: true,
      needsReconnection: false,
      recentFailures: 0,
      tokenExpiresAt: Option.some(DateTime.unsafeMake(DateTime.toEpochMillis(now) + ms))
    })
    expect(assess(at(0), now).reasons).toEqual(["token_expired"])
    expect(assess(at(7 * day), now).reasons).toEqual(["token_expiring_soon"])
    expect(assess(at(7 * day + 1), now).status).toBe("healthy")
  })

  it("a healthy account has no reasons", () => {
    expect(assess({ isActive: true, needsReconnection: false, recentFailures: 0, tokenExpiresAt: Option.none() }, now))
      .toEqual({ status: "healthy", canPost: true, needsReconnection: false, reasons: [] })
  })
})
