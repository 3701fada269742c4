/**
 * The signed `state` of an OAuth connect link. The link is opened in any browser, without an API
 * key, so the state itself carries who asked: the organization, the platform, when it expires (600 s
 * after issue), a random nonce and, for a reconnect link, the account being repaired.
 *
 * Wire form: `base64url(JSON)` + `.` + hex HMAC-SHA256 of that text under the server's state secret.
 * It is signed, not encrypted: nothing in it is secret. The PKCE verifier in particular never travels:
 * it is derived from the nonce under the same secret (`pkceVerifier`), so the callback recomputes it
 * and no server-side session is needed.
 */
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Crypto } from "../kernel/Crypto.js"
import { AccountId, OrganizationId } from "../kernel/Ids.js"
import { OAuthPlatform } from "../domain/Platform.js"

/** How long a connect or reconnect link lives (spec: 10 minutes). */
export const lifetimeSeconds = 600

export interface ConnectState {
  readonly organizationId: OrganizationId
  readonly platform: OAuthPlatform
  /** Epoch seconds; the state is refused from this instant on. */
  readonly expiresAt: number
  readonly nonce: string
  readonly reconnectAccountId?: AccountId
}

const Wire = Schema.Struct({
  v: Schema.Literal(1),
  o: OrganizationId,
  p: OAuthPlatform,
  e: Schema.Int,
  n: Schema.String.pipe(Schema.minLength(16)),
  r: Schema.optional(AccountId)
})
const WireJson = Schema.parseJson(Wire)

export type ConnectStateProblem = "malformed" | "tampered" | "expired"

export class ConnectStateError extends Data.TaggedError("ConnectStateError")<{
  readonly reason: ConnectStateProblem
}> {
  override get message(): string {
    switch (this.reason) {
      case "expired":
        return "This connect link has expired (links are valid for 10 minutes). Ask for a new link and try again."
      case "tampered":
        return "This connect link is not valid: its state was altered or was not issued by this server."
      case "malformed":
        return "This connect link is incomplete: the state parameter is missing or unreadable."
    }
  }
}

const stateMac = (secret: Redacted.Redacted<string>, payload: string) =>
  Effect.flatMap(Crypto, (crypto) => crypto.hmacSha256Hex(Redacted.value(secret), `herald-connect-state:v1:${payload}`))

/** Issues a state for `input`, expiring `lifetimeSeconds` after `now`. */
export const sign = (
  secret: Redacted.Redacted<string>,
  input: Omit<ConnectState, "expiresAt">,
  now: DateTime.Utc
): Effect.Effect<string, never, Crypto> =>
  Effect.gen(function*() {
    const wire: typeof Wire.Type = {
      v: 1,
      o: input.organizationId,
      p: input.platform,
      e: Math.floor(DateTime.toEpochMillis(now) / 1000) + lifetimeSeconds,
      n: input.nonce,
      ...(input.reconnectAccountId === undefined ? {} : { r: input.reconnectAccountId })
    }
    const payload = Encoding.encodeBase64Url(JSON.stringify(wire))
    return `${payload}.${yield* stateMac(secret, payload)}`
  })

/**
 * Checks the signature first (in constant time), then the expiry: an altered expiry is `tampered`,
 * never `expired`.
 */
export const verify = (
  secret: Redacted.Redacted<string>,
  token: string,
  now: DateTime.Utc
): Effect.Effect<ConnectState, ConnectStateError, Crypto> =>
  Effect.gen(function*() {
    const dot = token.lastIndexOf(".")
    if (dot <= 0 || dot === token.length - 1) return yield* new ConnectStateError({ reason: "malformed" })
    const payload = token.slice(0, dot)
    const mac = token.slice(dot + 1)
    const crypto = yield* Crypto
    const expected = yield* stateMac(secret, payload)
    if (!crypto.timingSafeEqual(mac.toLowerCase(), expected)) {
      return yield* new ConnectStateError({ reason: "tampered" })
    }
    const text = Encoding.decodeBase64UrlString(payload)
    if (Either.isLeft(text)) return yield* new ConnectStateError({ reason: "malformed" })
    const wire = yield* Schema.decodeUnknown(WireJson)(text.right).pipe(
      Effect.mapError(() => new ConnectStateError({ reason: "malformed" }))
    )
    if (Math.floor(DateTime.toEpochMillis(now) / 1000) >= wire.e) {
      return yield* new ConnectStateError({ reason: "expired" })
    }
    return {
      organizationId: wire.o,
      platform: wire.p,
      expiresAt: wire.e,
      nonce: wire.n,
      ...(wire.r === undefined ? {} : { reconnectAccountId: wire.r })
    } satisfies ConnectState
  })

/** The PKCE code verifier of a state: 64 hex characters (RFC 7636 allows 43 to 128 unreserved). */
export const pkceVerifier = (secret: Redacted.Redacted<string>, nonce: string): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) => crypto.hmacSha256Hex(Redacted.value(secret), `herald-pkce:v1:${nonce}`))

/** The S256 code challenge: base64url (unpadded) of the verifier's SHA-256. */
export const pkceChallenge = (verifier: string): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) => crypto.sha256Hex(verifier)).pipe(
    Effect.map((hex) => Encoding.encodeBase64Url(Either.getOrThrow(Encoding.decodeHex(hex))))
  )
