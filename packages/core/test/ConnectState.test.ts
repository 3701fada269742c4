/** The signed connect state: round trip, tampering, expiry at 600 s (TestClock), PKCE S256. */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as NodeCrypto from "node:crypto"
import * as ConnectState from "../src/accounts/ConnectState.js"
import { Crypto } from "../src/kernel/Crypto.js"
import { AccountId, OrganizationId } from "../src/kernel/Ids.js"

const CryptoLive = Layer.succeed(
  Crypto,
  Crypto.of({
    randomHex: (n) => Effect.sync(() => NodeCrypto.randomBytes(n).toString("hex")),
    sha256Hex: (text) => Effect.sync(() => NodeCrypto.createHash("sha256").update(text, "utf8").digest("hex")),
    hmacSha256Hex: (key, text) =>
      Effect.sync(() => NodeCrypto.createHmac("sha256", key).update(text, "utf8").digest("hex")),
    hmacSha256Base64: (key, text) =>
      Effect.sync(() => NodeCrypto.createHmac("sha256", key).update(text).digest("base64")),
    timingSafeEqual: (a, b) => a.length === b.length && NodeCrypto.timingSafeEqual(Buffer.from(a), Buffer.from(b))
  })
)

const secret = Redacted.make("state-secret")
const orgId = OrganizationId.make("00000000-0000-4000-8000-000000000001")
const input = { organizationId: orgId, platform: "x" as const, nonce: "0123456789abcdef0123456789abcdef" }

const payloadOf = (token: string) =>
  JSON.parse(
    Encoding.decodeBase64UrlString(token.split(".")[0]!).pipe((e) => {
      if (e._tag === "Left") throw e.left
      return e.right
    })
  ) as Record<string, unknown>

const resign = (payload: Record<string, unknown>, mac: string) =>
  `${Encoding.encodeBase64Url(JSON.stringify(payload))}.${mac}`

describe("ConnectState", () => {
  it.effect("round-trips organization, platform, nonce and reconnect account; expires 600 s after issue", () =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const token = yield* ConnectState.sign(secret, { ...input, reconnectAccountId: AccountId.make(42) }, now)
      const state = yield* ConnectState.verify(secret, token, now)
      expect(state).toEqual({
        organizationId: orgId,
        platform: "x",
        nonce: input.nonce,
        reconnectAccountId: 42,
        expiresAt: Math.floor(DateTime.toEpochMillis(now) / 1000) + 600
      })
      expect(token).not.toContain("state-secret")
    }).pipe(Effect.provide(CryptoLive)))

  it.effect("is valid until 600 s have passed, then expired (TestClock)", () =>
    Effect.gen(function*() {
      const token = yield* ConnectState.sign(secret, input, yield* DateTime.now)
      yield* TestClock.adjust("599 seconds")
      expect((yield* ConnectState.verify(secret, token, yield* DateTime.now)).platform).toBe("x")
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(ConnectState.verify(secret, token, yield* DateTime.now))
      expect(error.reason).toBe("expired")
      expect(error.message).toContain("expired")
    }).pipe(Effect.provide(CryptoLive)))

  it.effect("refuses an altered payload (another organization, a later expiry) as tampered", () =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const token = yield* ConnectState.sign(secret, input, now)
      const mac = token.split(".")[1]!
      const payload = payloadOf(token)
      const otherOrg = resign({ ...payload, o: "00000000-0000-4000-8000-000000000099" }, mac)
      expect((yield* Effect.flip(ConnectState.verify(secret, otherOrg, now))).reason).toBe("tampered")
      const later = resign({ ...payload, e: (payload.e as number) + 86_400 }, mac)
      yield* TestClock.adjust("700 seconds")
      expect((yield* Effect.flip(ConnectState.verify(secret, later, yield* DateTime.now))).reason).toBe("tampered")
    }).pipe(Effect.provide(CryptoLive)))

  it.effect("refuses another server's state, a changed signature and garbage", () =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const token = yield* ConnectState.sign(secret, input, now)
      expect((yield* Effect.flip(ConnectState.verify(Redacted.make("other"), token, now))).reason).toBe("tampered")
      const flipped = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0")
      expect((yield* Effect.flip(ConnectState.verify(secret, flipped, now))).reason).toBe("tampered")
      expect((yield* Effect.flip(ConnectState.verify(secret, "no-dot-here", now))).reason).toBe("malformed")
      expect((yield* Effect.flip(ConnectState.verify(secret, "", now))).reason).toBe("malformed")
    }).pipe(Effect.provide(CryptoLive)))

  it.effect("PKCE: the verifier is derived from the nonce (never carried); the challenge is S256", () =>
    Effect.gen(function*() {
      // S256 per RFC 7636: BASE64URL(SHA256(ASCII(verifier))), unpadded; checked against Node's own.
      const sample = "dBjftJeZ4CVP-mJ92IZRPXVLjUYmR6QF7MTFdmUgqw8"
      expect(yield* ConnectState.pkceChallenge(sample)).toBe(
        NodeCrypto.createHash("sha256").update(sample).digest("base64url")
      )
      const verifier = yield* ConnectState.pkceVerifier(secret, input.nonce)
      expect(verifier).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* ConnectState.pkceVerifier(secret, input.nonce)).toBe(verifier)
      expect(yield* ConnectState.pkceVerifier(secret, "another-nonce-0123456789")).not.toBe(verifier)
      const token = yield* ConnectState.sign(secret, input, yield* DateTime.now)
      expect(token).not.toContain(verifier)
    }).pipe(Effect.provide(CryptoLive)))
})
