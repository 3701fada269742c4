/**
 * Sign-in attempts are limited per client address and per account, in fixed windows counted in the
 * store (`UsageCounters`), so every process on one database shares them:
 * - per address: 10 attempts a minute and 100 an hour, successful or not;
 * - per account (the email, known or not, so the limit does not tell which emails exist): 10 failed
 *   attempts an hour; the 11th attempt in that hour is refused even with the right password.
 * A refusal is 429 `too_many_attempts` with `Retry-After`. Emails reach the counters only hashed.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import { Crypto } from "@herald/core/kernel/Crypto"
import { DomainError } from "@herald/core/kernel/Errors"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as RateLimit from "./RateLimit.js"

export interface Limits {
  readonly addressPerMinute: number
  readonly addressPerHour: number
  readonly accountFailuresPerHour: number
}

export const defaults: Limits = { addressPerMinute: 10, addressPerHour: 100, accountFailuresPerHour: 10 }

export class SignInLimits extends Context.Tag("@herald/http/SignInLimits")<SignInLimits, Limits>() {}

/** HERALD_SIGN_IN_LIMIT_PER_MINUTE (per address, 10) and HERALD_SIGN_IN_FAILURES_PER_HOUR (per account, 10). */
export const layerFromEnv = Layer.effect(
  SignInLimits,
  Effect.gen(function*() {
    const positive = (name: string, fallback: number) =>
      Config.integer(name).pipe(
        Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
        Config.withDefault(fallback)
      )
    const addressPerMinute = yield* positive("HERALD_SIGN_IN_LIMIT_PER_MINUTE", defaults.addressPerMinute)
    const accountFailuresPerHour = yield* positive("HERALD_SIGN_IN_FAILURES_PER_HOUR", defaults.accountFailuresPerHour)
    return {
      addressPerMinute,
      addressPerHour: Math.max(addressPerMinute, defaults.addressPerHour),
      accountFailuresPerHour
    }
  })
).pipe(Layer.orDie)

const minuteMillis = 60_000
const hourMillis = 3_600_000

const limits = Effect.map(Effect.serviceOption(SignInLimits), Option.getOrElse(() => defaults))

const refused = (message: string, resetAt: DateTime.Utc) =>
  DomainError.of("too_many_attempts", message, { reset_at: DateTime.formatIso(resetAt) })

const accountKey = (email: string) =>
  Effect.map(Effect.flatMap(Crypto, (crypto) => crypto.sha256Hex(email)), (hash) => `signin:account:${hash}`)

/** Counts the attempt against the address, and refuses it when the address or the account is over. */
export const admit = (email: string) =>
  Effect.gen(function*() {
    const { accountFailuresPerHour, addressPerHour, addressPerMinute } = yield* limits
    const counters = yield* UsageCounters
    const request = yield* HttpServerRequest.HttpServerRequest
    const address = Option.getOrElse(request.remoteAddress, () => "unknown")
    const now = yield* DateTime.now
    const minuteEnd = RateLimit.windowEnd(now, minuteMillis)
    const hourEnd = RateLimit.windowEnd(now, hourMillis)
    if ((yield* counters.increment(`signin:address:${address}:minute`, minuteEnd, 1)) > addressPerMinute) {
      return yield* Effect.fail(refused("Too many sign-in attempts from this address; wait a minute", minuteEnd))
    }
    if ((yield* counters.increment(`signin:address:${address}:hour`, hourEnd, 1)) > addressPerHour) {
      return yield* Effect.fail(refused("Too many sign-in attempts from this address; try again later", hourEnd))
    }
    if ((yield* counters.get(yield* accountKey(email), hourEnd)) >= accountFailuresPerHour) {
      return yield* Effect.fail(refused("Too many failed sign-ins for this account; try again later", hourEnd))
    }
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))

/** Records a failed attempt of the account. */
export const recordFailure = (email: string) =>
  Effect.gen(function*() {
    const hourEnd = RateLimit.windowEnd(yield* DateTime.now, hourMillis)
    yield* (yield* UsageCounters).increment(yield* accountKey(email), hourEnd, 1)
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))
