/**
 * Sign-in attempts are limited so that guessing is slow, yet a stranger cannot keep the account's
 * owner out. Counted in fixed windows in the store (`UsageCounters`), so every process on one
 * database shares them; emails reach the counters only hashed.
 *
 * - Per address: 10 attempts a minute and 100 an hour, successful or not, whatever the account.
 * - Per account and address: 10 failed attempts an hour; then that address is refused for that
 *   account until the hour ends, even with the right password. Another address is not affected, so
 *   failures from a stranger's address never lock the owner out at theirs.
 * - Per account, from every address together: past 100 failed attempts in an hour (a guessing run
 *   spread over many addresses), attempts from browsers the account has not signed in from are
 *   slowed to one a minute, all such browsers together; never blocked outright.
 * - A browser that signed in to the account carries a known-device cookie (`herald_device`, HttpOnly,
 *   SameSite=Strict, sent only to the sign-in endpoint, 90 days, a keyed hash bound to the account's
 *   email): its attempts are never slowed. It does not lift the per-address or per-account-and-address
 *   limits.
 * A refusal is 429 `too_many_attempts` with `Retry-After`.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { CredentialCipher } from "@herald/adapters/security/CredentialCipher"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import { Crypto } from "@herald/core/kernel/Crypto"
import { DomainError } from "@herald/core/kernel/Errors"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as RateLimit from "./RateLimit.js"

export interface Limits {
  /** Attempts a minute from one address (all accounts). */
  readonly addressPerMinute: number
  /** Attempts an hour from one address (all accounts). */
  readonly addressPerHour: number
  /** Failed attempts an hour for one account from one address, before that pair is refused. */
  readonly accountAddressFailuresPerHour: number
  /** Failed attempts an hour for one account from all addresses, before unknown browsers are slowed. */
  readonly accountFailuresPerHour: number
}

export const defaults: Limits = {
  addressPerMinute: 10,
  addressPerHour: 100,
  accountAddressFailuresPerHour: 10,
  accountFailuresPerHour: 100
}

export class SignInLimits extends Context.Tag("@herald/http/SignInLimits")<SignInLimits, Limits>() {}

/**
 * HERALD_SIGN_IN_LIMIT_PER_MINUTE (per address, 10), HERALD_SIGN_IN_FAILURES_PER_HOUR (per account
 * and address, 10) and HERALD_SIGN_IN_ACCOUNT_FAILURES_PER_HOUR (per account, before unknown
 * browsers are slowed, 100).
 */
export const layerFromEnv = Layer.effect(
  SignInLimits,
  Effect.gen(function*() {
    const positive = (name: string, fallback: number) =>
      Config.integer(name).pipe(
        Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
        Config.withDefault(fallback)
      )
    const addressPerMinute = yield* positive("HERALD_SIGN_IN_LIMIT_PER_MINUTE", defaults.addressPerMinute)
    const accountAddressFailuresPerHour = yield* positive(
      "HERALD_SIGN_IN_FAILURES_PER_HOUR",
      defaults.accountAddressFailuresPerHour
    )
    const accountFailuresPerHour = yield* positive(
      "HERALD_SIGN_IN_ACCOUNT_FAILURES_PER_HOUR",
      defaults.accountFailuresPerHour
    )
    return {
      addressPerMinute,
      addressPerHour: Math.max(addressPerMinute, defaults.addressPerHour),
      accountAddressFailuresPerHour,
      accountFailuresPerHour
    }
  })
).pipe(Layer.orDie)

const minuteMillis = 60_000
const hourMillis = 3_600_000

const limits = Effect.map(Effect.serviceOption(SignInLimits), Option.getOrElse(() => defaults))

const refused = (message: string, resetAt: DateTime.Utc) =>
  DomainError.of("too_many_attempts", message, { reset_at: DateTime.formatIso(resetAt) })

const emailHash = (email: string) => Effect.flatMap(Crypto, (crypto) => crypto.sha256Hex(email))

const addressOf = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
)

const accountKey = (hash: string) => `signin:account:${hash}`
const pairKey = (hash: string, address: string) => `signin:account:${hash}:address:${address}`
const slowedKey = (hash: string) => `signin:account:${hash}:unknown-device`

// the known-device cookie

export const deviceCookieName = "herald_device"

/** How long a browser stays known after it signed in. */
export const deviceLifetimeSeconds = 90 * 24 * 3600

const deviceKey = Effect.flatMap(CredentialCipher, (cipher) => cipher.deriveSecret("sign-in-device/v1")).pipe(
  Effect.map(Redacted.value),
  Effect.orDie
)

/** The cookie's value for the account: `<issued at, unix seconds>.<keyed hash of email hash and time>`. */
const deviceValue = (hash: string, issuedAt: number) =>
  Effect.gen(function*() {
    const mac = yield* (yield* Crypto).hmacSha256Hex(yield* deviceKey, `${hash}.${issuedAt}`)
    return `${issuedAt}.${mac}`
  })

/** Whether the request carries an unexpired known-device cookie of the account. */
const isKnownDevice = (hash: string, now: DateTime.Utc) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const match = /^(\d{1,12})\.([0-9a-f]{64})$/.exec(request.cookies[deviceCookieName] ?? "")
    if (match === null) return false
    const issuedAt = Number(match[1])
    const age = Math.floor(DateTime.toEpochMillis(now) / 1000) - issuedAt
    if (age < 0 || age > deviceLifetimeSeconds) return false
    const expected = yield* deviceValue(hash, issuedAt)
    return (yield* Crypto).timingSafeEqual(`${match[1]}.${match[2]}`, expected)
  })

/** The response with the account's known-device cookie (after a successful sign-in). */
export const withKnownDevice = (response: HttpServerResponse.HttpServerResponse, email: string, secure: boolean) =>
  Effect.gen(function*() {
    const issuedAt = Math.floor(DateTime.toEpochMillis(yield* DateTime.now) / 1000)
    const value = yield* deviceValue(yield* emailHash(email), issuedAt)
    return HttpServerResponse.unsafeSetCookie(response, deviceCookieName, value, {
      path: "/dashboard/api/session",
      maxAge: `${deviceLifetimeSeconds} seconds`,
      httpOnly: true,
      sameSite: "strict",
      secure
    })
  })

// the limits

/** Counts the attempt against the address, and refuses it when a limit says so. */
export const admit = (email: string) =>
  Effect.gen(function*() {
    const { accountAddressFailuresPerHour, accountFailuresPerHour, addressPerHour, addressPerMinute } = yield* limits
    const counters = yield* UsageCounters
    const address = yield* addressOf
    const now = yield* DateTime.now
    const minuteEnd = RateLimit.windowEnd(now, minuteMillis)
    const hourEnd = RateLimit.windowEnd(now, hourMillis)
    if ((yield* counters.increment(`signin:address:${address}:minute`, minuteEnd, 1)) > addressPerMinute) {
      return yield* Effect.fail(refused("Too many sign-in attempts from this address; wait a minute", minuteEnd))
    }
    if ((yield* counters.increment(`signin:address:${address}:hour`, hourEnd, 1)) > addressPerHour) {
      return yield* Effect.fail(refused("Too many sign-in attempts from this address; try again later", hourEnd))
    }
    const hash = yield* emailHash(email)
    if ((yield* counters.get(pairKey(hash, address), hourEnd)) >= accountAddressFailuresPerHour) {
      return yield* Effect.fail(
        refused("Too many failed sign-ins for this account from this address; try again later", hourEnd)
      )
    }
    if (
      (yield* counters.get(accountKey(hash), hourEnd)) >= accountFailuresPerHour &&
      !(yield* isKnownDevice(hash, now)) &&
      (yield* counters.increment(slowedKey(hash), minuteEnd, 1)) > 1
    ) {
      return yield* Effect.fail(refused(
        "Many failed sign-ins for this account: from a browser that has not signed in to it before, one attempt a minute",
        minuteEnd
      ))
    }
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))

/** Records a failed attempt of the account, from the request's address. */
export const recordFailure = (email: string) =>
  Effect.gen(function*() {
    const hourEnd = RateLimit.windowEnd(yield* DateTime.now, hourMillis)
    const counters = yield* UsageCounters
    const hash = yield* emailHash(email)
    yield* counters.increment(accountKey(hash), hourEnd, 1)
    yield* counters.increment(pairKey(hash, yield* addressOf), hourEnd, 1)
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))
