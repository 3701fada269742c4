/**
 * Stand-ins for the adapters' Node Crypto and IdGenerator layers until they land.
 */
import { Crypto } from "@herald/core/Crypto"
import { IdGenerator } from "@herald/core/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as crypto from "node:crypto"

export const cryptoLayer: Layer.Layer<Crypto> = Layer.succeed(Crypto, Crypto.of({
  randomHex: (bytes) => Effect.sync(() => crypto.randomBytes(bytes).toString("hex")),
  sha256Hex: (text) => Effect.sync(() => crypto.createHash("sha256").update(text, "utf8").digest("hex")),
  hmacSha256Hex: (key, text) =>
    Effect.sync(() => crypto.createHmac("sha256", Buffer.from(key, "utf8")).update(text, "utf8").digest("hex")),
  hmacSha256Base64: (key, text) =>
    Effect.sync(() => crypto.createHmac("sha256", key).update(text, "utf8").digest("base64")),
  timingSafeEqual: (a, b) => {
    const x = Buffer.from(a, "utf8")
    const y = Buffer.from(b, "utf8")
    return x.length === y.length && crypto.timingSafeEqual(x, y)
  }
}))

export const idGeneratorLayer: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, IdGenerator.of({
  uuid: Effect.sync(() => crypto.randomUUID())
}))
