/**
 * The `PasswordHasher` port over scrypt from node:crypto (no extra dependency). Hashes read
 * `scrypt$N$r$p$<salt b64>$<key b64>`; verification takes the parameters from the hash, so raising
 * them later keeps older hashes valid. N = 2^15, r = 8, p = 3 is one of OWASP's recommended scrypt
 * settings (32 MiB per hash); it runs on libuv's pool, off the event loop.
 */
import { PasswordHasher } from "@herald/core/access/PasswordHasher"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"

export interface Parameters {
  readonly N: number
  readonly r: number
  readonly p: number
}

export const defaultParameters: Parameters = { N: 2 ** 15, r: 8, p: 3 }

const keyLength = 32
const saltLength = 16

const derive = (password: string, salt: Buffer, params: Parameters): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    NodeCrypto.scrypt(
      password.normalize("NFC"),
      salt,
      keyLength,
      { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 },
      (error, key) => resume(error === null ? Effect.succeed(key) : Effect.die(error))
    )
  })

const parse = (encoded: string): { params: Parameters; salt: Buffer; key: Buffer } | undefined => {
  const parts = encoded.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return undefined
  const salt = Buffer.from(parts[4]!, "base64")
  const key = Buffer.from(parts[5]!, "base64")
  if (salt.length === 0 || key.length !== keyLength) return undefined
  return { params: { N, r, p }, salt, key }
}

export const make = (params: Parameters = defaultParameters): PasswordHasher["Type"] =>
  PasswordHasher.of({
    hash: (password) =>
      Effect.gen(function*() {
        const salt = NodeCrypto.randomBytes(saltLength)
        const key = yield* derive(Redacted.value(password), salt, params)
        return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), key.toString("base64")].join("$")
      }),
    verify: (password, encoded) =>
      Effect.gen(function*() {
        const parsed = parse(encoded)
        if (parsed === undefined) return false
        const key = yield* derive(Redacted.value(password), parsed.salt, parsed.params)
        return NodeCrypto.timingSafeEqual(key, parsed.key)
      })
  })

export const layer: Layer.Layer<PasswordHasher> = Layer.succeed(PasswordHasher, make())
