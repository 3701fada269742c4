import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as NodePasswordHasher from "../src/NodePasswordHasher.js"

// Small parameters keep the test quick; the format and the checks are the same.
const hasher = NodePasswordHasher.make({ N: 1024, r: 8, p: 1 })
const secret = (s: string) => Redacted.make(s)

describe("NodePasswordHasher (scrypt)", () => {
  it.effect("verifies the right password only; the hash names its parameters and hides the password", () =>
    Effect.gen(function*() {
      const hash = yield* hasher.hash(secret("correct horse battery"))
      expect(hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
      expect(hash).not.toContain("correct horse battery")
      expect(yield* hasher.verify(secret("correct horse battery"), hash)).toBe(true)
      expect(yield* hasher.verify(secret("correct horse batterY"), hash)).toBe(false)
    }))

  it.effect("salts: the same password hashes differently each time", () =>
    Effect.gen(function*() {
      const a = yield* hasher.hash(secret("same password"))
      const b = yield* hasher.hash(secret("same password"))
      expect(a).not.toBe(b)
    }))

  it.effect("a hash made with other parameters still verifies (they are read from the hash)", () =>
    Effect.gen(function*() {
      const older = yield* NodePasswordHasher.make({ N: 2048, r: 4, p: 2 }).hash(secret("passphrase here"))
      expect(yield* hasher.verify(secret("passphrase here"), older)).toBe(true)
    }))

  it.effect("an unreadable or absurd hash is false, not a failure", () =>
    Effect.gen(function*() {
      for (
        const bad of [
          "",
          "plain",
          "scrypt$1024$8$1$c2FsdA==",
          "bcrypt$1$1$1$c2FsdA==$a2V5",
          "scrypt$99999999$8$1$c2FsdA==$" + "A".repeat(44)
        ]
      ) {
        expect(yield* hasher.verify(secret("anything at all"), bad)).toBe(false)
      }
    }))

  it("the default parameters are OWASP's scrypt N=2^15, r=8, p=3", () => {
    expect(NodePasswordHasher.defaultParameters).toEqual({ N: 32768, r: 8, p: 3 })
  })
})
