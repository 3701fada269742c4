import { describe, expect, it } from "@effect/vitest"
import { Crypto } from "@herald/core/kernel/Crypto"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "../src/NodeCrypto.js"
import * as NodeIdGenerator from "../src/NodeIdGenerator.js"

describe("NodeCrypto", () => {
  it.effect("digests match published test vectors", () =>
    Effect.gen(function*() {
      const crypto = yield* Crypto
      expect(yield* crypto.sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      // RFC 4231 test case 2
      expect(yield* crypto.hmacSha256Hex("Jefe", "what do ya want for nothing?")).toBe(
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      )
      expect(yield* crypto.hmacSha256Base64(new TextEncoder().encode("Jefe"), "what do ya want for nothing?")).toBe(
        Buffer.from("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", "hex").toString("base64")
      )
    }).pipe(Effect.provide(NodeCrypto.layer)))

  it.effect("randomHex gives n random bytes as lowercase hex", () =>
    Effect.gen(function*() {
      const crypto = yield* Crypto
      const a = yield* crypto.randomHex(16)
      const b = yield* crypto.randomHex(16)
      expect(a).toMatch(/^[0-9a-f]{32}$/)
      expect(a).not.toBe(b)
    }).pipe(Effect.provide(NodeCrypto.layer)))

  it.effect("timingSafeEqual compares content and length", () =>
    Effect.gen(function*() {
      const crypto = yield* Crypto
      expect(crypto.timingSafeEqual("sha256=abc", "sha256=abc")).toBe(true)
      expect(crypto.timingSafeEqual("sha256=abc", "sha256=abd")).toBe(false)
      expect(crypto.timingSafeEqual("sha256=abc", "sha256=abcd")).toBe(false)
      expect(crypto.timingSafeEqual("", "")).toBe(true)
      // Compared as UTF-8 bytes: as many characters is not as many bytes.
      expect(crypto.timingSafeEqual("é", "é")).toBe(true)
      expect(crypto.timingSafeEqual("éa", "ab")).toBe(false)
      expect(crypto.timingSafeEqual("", "a")).toBe(false)
    }).pipe(Effect.provide(NodeCrypto.layer)))
})

describe("NodeIdGenerator", () => {
  it.effect("gives distinct v7 UUIDs that sort in creation order and carry the creation millisecond", () =>
    Effect.gen(function*() {
      const ids = yield* IdGenerator
      const before = Date.now()
      const made = yield* Effect.replicateEffect(ids.uuid, 1000)
      const after = Date.now()
      for (const id of made) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(new Set(made).size).toBe(made.length)
      // Text order is creation order (the index of each id table appends instead of scattering).
      expect([...made].sort()).toEqual(made)
      const millis = parseInt(made[0]!.replaceAll("-", "").slice(0, 12), 16)
      expect(millis).toBeGreaterThanOrEqual(before)
      expect(millis).toBeLessThanOrEqual(after)
      // Schema.UUID (every id's schema) accepts them.
      expect(made.every(Schema.is(Schema.UUID))).toBe(true)
    }).pipe(Effect.provide(NodeIdGenerator.layer)))
})
