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
    const x = Buffer.from(a, "utf8")
    const y = Buffer.from(b, "utf8")
    // Equal lengths (a presented hash against a stored one, on every authenticated request): compared
    // in constant time as they are. Otherwise as fixed-length digests, so that no prefix of `a` is
    // compared against `b` (timingSafeEqual itself refuses buffers of different lengths).
    if (x.length === y.length) return NodeCrypto.timingSafeEqual(x, y)
    return NodeCrypto.timingSafeEqual(
      NodeCrypto.createHash("sha256").update(x).digest(),
      NodeCrypto.createHash("sha256").update(y).digest()
    )
  }
})

export const layer: Layer.Layer<Crypto> = Layer.succeed(Crypto, make)
