import { describe, expect, it } from "@effect/vitest"
import { DateTime, FastCheck as fc, Option } from "effect"
import {
  formatUserCode,
  keyHolder,
  normalizeUserCode,
  placeholderEmail,
  userCodeAlphabet,
  userCodeFromBytes,
  userCodeLength
} from "../src/access/DeviceLogin.js"
import { OrganizationId, UserId } from "../src/kernel/Ids.js"
import { User } from "../src/access/Organization.js"

const hexOf = (bytes: ReadonlyArray<number>) => bytes.map((b) => b.toString(16).padStart(2, "0")).join("")

describe("device login user codes", () => {
  it("the alphabet has no vowels and no look-alike digits or letters", () => {
    expect(userCodeAlphabet).toHaveLength(20)
    expect(userCodeAlphabet).not.toMatch(/[AEIOUY0-9]/)
  })

  it("random bytes give codes of the alphabet only; bytes at or above 240 are dropped (no modulo bias)", () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 16, maxLength: 16 }), (bytes) => {
      const code = userCodeFromBytes(hexOf(bytes))
      const usable = bytes.filter((b) => b < 240)
      expect(code).toHaveLength(Math.min(userCodeLength, usable.length))
      expect([...code].every((c) => userCodeAlphabet.includes(c))).toBe(true)
      expect(code).toBe(usable.slice(0, userCodeLength).map((b) => userCodeAlphabet[b % 20]).join(""))
    }))
    expect(userCodeFromBytes(hexOf([240, 255, 0, 19, 20, 239, 1, 2, 3, 4]))).toBe("BZBZCDFG")
  })

  it("normalizes what a person types: case, spaces and dashes ignored; anything else refused", () => {
    expect(normalizeUserCode(" bcdf-ghjk ")).toEqual(Option.some("BCDFGHJK"))
    expect(normalizeUserCode("BCDF GHJK")).toEqual(Option.some("BCDFGHJK"))
    expect(normalizeUserCode("BCDF-GHJ")).toEqual(Option.none())
    expect(normalizeUserCode("ABCD-EFGH")).toEqual(Option.none())
    expect(normalizeUserCode("BCDF-GHJ0")).toEqual(Option.none())
    expect(formatUserCode("BCDFGHJK")).toBe("BCDF-GHJK")
  })
})

describe("the holder of a device key", () => {
  const org = OrganizationId.make("6f1c2a4e-8a43-4d0c-9f55-0a7a3c2b1d10")
  const user = (role: User["role"], email: string) =>
    new User({
      id: UserId.make(crypto.randomUUID()),
      organizationId: org,
      email,
      name: email,
      role,
      createdAt: DateTime.unsafeMake(0)
    })

  it("is the owner, else an admin, else any user; none without users", () => {
    const member = user("member", "m@example.com")
    const admin = user("admin", "a@example.com")
    const owner = user("owner", "o@example.com")
    expect(Option.map(keyHolder([member, admin, owner]), (u) => u.email)).toEqual(Option.some("o@example.com"))
    expect(Option.map(keyHolder([member, admin]), (u) => u.email)).toEqual(Option.some("a@example.com"))
    expect(Option.map(keyHolder([member]), (u) => u.email)).toEqual(Option.some("m@example.com"))
    expect(keyHolder([])).toEqual(Option.none())
    expect(placeholderEmail).toBe("operator@localhost")
  })
})
