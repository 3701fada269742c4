import { Crypto } from "@herald/core/kernel/Crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"

/** The `Crypto` port over Node's `crypto` module. */
export const make: Crypto["Type"] = Crypto.of({
  randomHex: (bytes) => Effect.sync(() => NodeCrypto.randomBytes(bytes).toString("hex")),
  sha256Hex: (text) => Effect.sync(() => NodeCrypto.createHash("sha256").update(text, "utf8").digest("hex")),
  hmacSha256Hex: (key, text) =>
    Effect.sync(() => NodeCrypto.createHmac("sha256", Buffer.from(key, "utf8")).update(text, "utf8").digest("hex")),
  hmacSha256Base64: (key, text) =>
    Effect.sync(() => NodeCrypto.createHmac("sha256", key).update(text, "utf8").digest("base64")),
  timingSafeEqual: (a, b) => {
    // Compare fixed-length digests, so neither the content nor the length of `a` leaks through timing.
    const x = NodeCrypto.createHash("sha256").update(a, "utf8").digest()
    const y = NodeCrypto.createHash("sha256").update(b, "utf8").digest()
    return NodeCrypto.timingSafeEqual(x, y)
  }
})

export const layer: Layer.Layer<Crypto> = Layer.succeed(Crypto, make)
