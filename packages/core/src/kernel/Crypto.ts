import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/** The cryptographic primitives the core needs; an adapter supplies them (Node's crypto). */
export class Crypto extends Context.Tag("@herald/core/kernel/Crypto")<Crypto, {
  /** `n` bytes from a cryptographically secure source, as lowercase hex. */
  readonly randomHex: (bytes: number) => Effect.Effect<string>
  /** Lowercase hex SHA-256 of the UTF-8 text. */
  readonly sha256Hex: (text: string) => Effect.Effect<string>
  /** Lowercase hex HMAC-SHA256 of the UTF-8 text under the UTF-8 key. */
  readonly hmacSha256Hex: (key: string, text: string) => Effect.Effect<string>
  /** Standard (padded) base64 HMAC-SHA256 of the UTF-8 text under the raw key bytes. */
  readonly hmacSha256Base64: (key: Uint8Array, text: string) => Effect.Effect<string>
  /** Compares two strings in time that does not depend on where they differ. */
  readonly timingSafeEqual: (a: string, b: string) => boolean
}>() {}
