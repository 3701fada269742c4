import { describe, expect, it } from "@effect/vitest"
import { DateTime, FastCheck as fc, Option, Redacted } from "effect"
import { OrganizationId, UserId } from "../src/kernel/Ids.js"
import * as Session from "../src/access/Session.js"
import * as Users from "../src/access/Users.js"

const T0 = 1_700_000_000_000
const settings: Session.Settings = { idleSeconds: 3600, absoluteSeconds: 86_400 }

const session = (createdAt: number, lastSeenAt: number) =>
  new Session.Session({
    id: Session.SessionId.make("00000000-0000-4000-8000-000000000001"),
    userId: UserId.make("00000000-0000-4000-8000-000000000002"),
    organizationId: OrganizationId.make("00000000-0000-4000-8000-000000000003"),
    tokenHash: "0".repeat(64),
    createdAt: DateTime.unsafeMake(createdAt),
    lastSeenAt: DateTime.unsafeMake(lastSeenAt)
  })

const at = (millis: number) => DateTime.unsafeMake(millis)

describe("session state", () => {
  it("is active until the idle timeout, idle_expired from it on", () => {
    const s = session(T0, T0 + 1000)
    expect(Session.state(s, at(T0 + 1000 + 3600_000 - 1), settings)).toBe("active")
    expect(Session.state(s, at(T0 + 1000 + 3600_000), settings)).toBe("idle_expired")
  })

  it("ends at the absolute lifetime however recently it was used", () => {
    const busy = session(T0, T0 + 86_400_000 - 10)
    expect(Session.state(busy, at(T0 + 86_400_000 - 1), settings)).toBe("active")
    expect(Session.state(busy, at(T0 + 86_400_000), settings)).toBe("expired")
    expect(Session.expiresAt(busy, settings)).toEqual(at(T0 + 86_400_000))
  })

  it("is never active past either limit (property)", () => {
    fc.assert(fc.property(fc.nat(200_000_000), fc.nat(200_000_000), (seen, now) => {
      const s = session(T0, T0 + Math.min(seen, now))
      const state = Session.state(s, at(T0 + now), settings)
      const idle = now - Math.min(seen, now) >= settings.idleSeconds * 1000
      const old = now >= settings.absoluteSeconds * 1000
      return (state === "active") === (!idle && !old) && (old ? state === "expired" : true)
    }))
  })

  it("is written again only once lastSeenAt is a minute old", () => {
    const s = session(T0, T0)
    expect(Session.needsTouch(s, at(T0 + Session.touchAfterMillis - 1))).toBe(false)
    expect(Session.needsTouch(s, at(T0 + Session.touchAfterMillis))).toBe(true)
  })
})

describe("users", () => {
  it("normalizes emails and recognises addresses", () => {
    expect(Users.normalizeEmail("  Ann@Example.COM ")).toBe("ann@example.com")
    expect(Users.isEmail("ann@example.com")).toBe(true)
    expect(Users.isEmail("owner@localhost")).toBe(true)
    expect(Users.isEmail("ann example.com")).toBe(false)
    expect(Users.isEmail("@example.com")).toBe(false)
  })

  it("a password is 10 to 1024 characters, counted as characters, and never quoted", () => {
    expect(Users.passwordProblem(Redacted.make("123456789"))).toEqual(
      Option.some("The password must be at least 10 characters long")
    )
    expect(Users.passwordProblem(Redacted.make("1234567890"))).toEqual(Option.none())
    expect(Users.passwordProblem(Redacted.make("🔑".repeat(10)))).toEqual(Option.none())
    const long = "x".repeat(1025)
    const problem = Users.passwordProblem(Redacted.make(long))
    expect(Option.isSome(problem) && !problem.value.includes(long)).toBe(true)
  })

  it("only owners and admins manage keys, devices, users and approvals", () => {
    expect(Users.isOwnerOrAdmin("owner")).toBe(true)
    expect(Users.isOwnerOrAdmin("admin")).toBe(true)
    expect(Users.isOwnerOrAdmin("member")).toBe(false)
  })
})
