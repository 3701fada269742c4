/**
 * Device login: a CLI asks for a device code and a short user code, a person approves the user code
 * (today an operator, with `herald device approve CODE`), and the CLI's next poll receives a new API
 * key, once. Modelled on RFC 8628 (device authorization grant): `pending`, `slow_down` when polled
 * faster than the interval, `denied`, `expired`, `authorized`.
 */
import * as ApiKey from "./ApiKey.js"
import { ApiKeyStore } from "./ApiKeyStore.js"
import { Crypto } from "../kernel/Crypto.js"
import { DeviceAuthorization, DeviceAuthorizationId, DeviceAuthorizationStore } from "./DeviceAuthorizationStore.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { ApiKeyId, type OrganizationId } from "../kernel/Ids.js"
import type { User } from "./Organization.js"
import { OrganizationStore } from "./OrganizationStore.js"
import { Transactor } from "../kernel/Transactor.js"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export interface Settings {
  /** How long a device code lives. */
  readonly lifetimeSeconds: number
  /** The minimum seconds between two polls of one device code. */
  readonly intervalSeconds: number
}

/** 10 minutes, and a poll every 5 seconds (RFC 8628's default interval). */
export const defaultSettings: Settings = { lifetimeSeconds: 600, intervalSeconds: 5 }

export class DeviceLoginSettings
  extends Context.Tag("@herald/core/DeviceLoginSettings")<DeviceLoginSettings, Settings>()
{}

const settings = Effect.map(Effect.serviceOption(DeviceLoginSettings), Option.getOrElse(() => defaultSettings))

// user codes

/** Consonants only: no vowels (no words), no 0/O or 1/I/L look-alikes, nothing case-sensitive. */
export const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
export const userCodeLength = 8

/** `BCDFGHJK` as `BCDF-GHJK`. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`

/**
 * What a person typed, as the stored form: case, spaces and dashes ignored. None when it cannot be
 * a user code (wrong length, or a character outside the alphabet).
 */
export const normalizeUserCode = (typed: string): Option.Option<string> => {
  const code = typed.toUpperCase().replace(/[\s-]/g, "")
  if (code.length !== userCodeLength) return Option.none()
  for (const c of code) if (!userCodeAlphabet.includes(c)) return Option.none()
  return Option.some(code)
}

/** Random bytes to alphabet letters without modulo bias: bytes at or above 240 (12 × 20) are dropped. */
export const userCodeFromBytes = (hex: string): string => {
  const limit = Math.floor(256 / userCodeAlphabet.length) * userCodeAlphabet.length
  let code = ""
  for (let i = 0; i + 2 <= hex.length && code.length < userCodeLength; i += 2) {
    const byte = parseInt(hex.slice(i, i + 2), 16)
    if (byte < limit) code += userCodeAlphabet[byte % userCodeAlphabet.length]
  }
  return code
}

const newUserCode: Effect.Effect<string, never, Crypto> = Effect.gen(function*() {
  const crypto = yield* Crypto
  let code = ""
  while (code.length < userCodeLength) code = userCodeFromBytes(yield* crypto.randomHex(16))
  return code
})

const hashOf = (text: string) => Effect.flatMap(Crypto, (crypto) => crypto.sha256Hex(text))

// start

export interface Started {
  readonly deviceCode: string
  /** Formatted `XXXX-XXXX`. */
  readonly userCode: string
  readonly clientName: Option.Option<string>
  readonly expiresInSeconds: number
  readonly intervalSeconds: number
}

/**
 * A new device code (64 hex characters) and user code; only their hashes are stored. Requests that
 * expired over a day ago are deleted on the way.
 */
export const start = (request: { readonly clientName: Option.Option<string> }) =>
  Effect.gen(function*() {
    const { intervalSeconds, lifetimeSeconds } = yield* settings
    const crypto = yield* Crypto
    const deviceCode = yield* crypto.randomHex(32)
    const userCode = yield* newUserCode
    const now = yield* DateTime.now
    const store = yield* DeviceAuthorizationStore
    // Requests a day past their expiry are of no use to anyone: each start prunes them.
    yield* store.purgeExpired(DateTime.subtract(now, { days: 1 }))
    yield* store.insert(
      new DeviceAuthorization({
        id: DeviceAuthorizationId.make(yield* (yield* IdGenerator).uuid),
        deviceCodeHash: yield* hashOf(deviceCode),
        userCodeHash: yield* hashOf(userCode),
        clientName: request.clientName,
        status: "pending",
        organizationId: Option.none(),
        apiKeyId: Option.none(),
        intervalSeconds,
        lastPolledAt: Option.none(),
        expiresAt: DateTime.add(now, { seconds: lifetimeSeconds }),
        decidedAt: Option.none(),
        createdAt: now
      })
    )
    return {
      deviceCode,
      userCode: formatUserCode(userCode),
      clientName: request.clientName,
      expiresInSeconds: lifetimeSeconds,
      intervalSeconds
    } satisfies Started
  }).pipe(Effect.withSpan("DeviceLogin.start"))

// poll

export type PollResult =
  | { readonly status: "pending" | "denied" | "expired" }
  | { readonly status: "slow_down"; readonly intervalSeconds: number }
  | {
    readonly status: "authorized"
    readonly token: string
    readonly key: ApiKey.ApiKey
    readonly email: string
    readonly organizationId: OrganizationId
  }

/** Scopes of a key minted by device login: everything a CLI does. */
export const deviceKeyScopes: ReadonlyArray<ApiKey.Scope> = ["read", "write", "ai"]

export const deviceKeyName = (clientName: Option.Option<string>): string =>
  `device: ${Option.getOrElse(clientName, () => "CLI")}`

/** Reported when the organization has no users yet (organizations made with `herald orgs create`). */
export const placeholderEmail = "operator@localhost"

/** The person a device key acts for: the organization's owner, else an admin, else any user. */
export const keyHolder = (users: ReadonlyArray<User>): Option.Option<User> =>
  Option.orElse(
    Option.fromNullable(users.find((u) => u.role === "owner")),
    () => Option.fromNullable(users.find((u) => u.role === "admin") ?? users[0])
  )

const invalidCode = DomainError.of(
  "validation_error",
  "Unknown device_code: start a new login with POST /auth/device",
  { reason: "invalid_device_code" }
)

const usedCode = DomainError.of(
  "validation_error",
  "This device_code has already been exchanged for an API key; start a new login with POST /auth/device",
  { reason: "device_code_used" }
)

const mint = (authorization: DeviceAuthorization, organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const now = yield* DateTime.now
    const users = yield* (yield* OrganizationStore).listUsers(organizationId)
    const holder = keyHolder(users)
    const secret = yield* crypto.randomHex(16)
    const token = `${ApiKey.keyPrefix}${secret}`
    const key = new ApiKey.ApiKey({
      id: ApiKeyId.make(yield* (yield* IdGenerator).uuid),
      organizationId,
      createdBy: Option.map(holder, (u) => u.id),
      name: deviceKeyName(authorization.clientName),
      hint: `${ApiKey.keyPrefix}${secret.slice(0, 4)}`,
      hash: yield* crypto.sha256Hex(token),
      scopes: deviceKeyScopes,
      accountIds: Option.none(),
      expiresAt: Option.none(),
      revokedAt: Option.none(),
      createdAt: now
    })
    // Consumed first: of two racing polls only one passes, and the key is inserted in its transaction.
    const won = yield* (yield* DeviceAuthorizationStore).consume(authorization.id, key.id, now)
    if (!won) return yield* Effect.fail(usedCode)
    yield* (yield* ApiKeyStore).insert(key)
    return {
      status: "authorized",
      token,
      key,
      email: Option.match(holder, { onNone: () => placeholderEmail, onSome: (u) => u.email }),
      organizationId
    } satisfies PollResult
  }).pipe((self) => Effect.flatMap(Transactor, (tx) => tx.withTransaction(self)))

/**
 * One poll of the device: unknown or already exchanged codes are 400 `validation_error`; a poll
 * sooner than the interval after the previous one is `slow_down` (and counts as the previous poll);
 * then `expired`, `denied`, `pending`, or `authorized` with a newly minted key, exactly once.
 */
export const poll = (deviceCode: string) =>
  Effect.gen(function*() {
    const store = yield* DeviceAuthorizationStore
    const found = yield* store.findByDeviceCodeHash(yield* hashOf(deviceCode.trim().toLowerCase()))
    if (Option.isNone(found)) return yield* Effect.fail(invalidCode)
    const authorization = found.value
    if (authorization.status === "consumed") return yield* Effect.fail(usedCode)
    const now = yield* DateTime.now
    yield* store.recordPoll(authorization.id, now)
    if (Option.isSome(authorization.lastPolledAt)) {
      const since = DateTime.toEpochMillis(now) - DateTime.toEpochMillis(authorization.lastPolledAt.value)
      if (since < authorization.intervalSeconds * 1000) {
        return { status: "slow_down", intervalSeconds: authorization.intervalSeconds } satisfies PollResult
      }
    }
    if (authorization.status === "denied") return { status: "denied" } satisfies PollResult
    if (!DateTime.lessThan(now, authorization.expiresAt)) return { status: "expired" } satisfies PollResult
    if (authorization.status === "pending" || Option.isNone(authorization.organizationId)) {
      return { status: "pending" } satisfies PollResult
    }
    return yield* mint(authorization, authorization.organizationId.value)
  }).pipe(Effect.withSpan("DeviceLogin.poll"))

// the operator's decision

/** What the verification page and the operator see of a pending request. */
export interface Lookup {
  readonly authorization: DeviceAuthorization
  readonly userCode: string
  /** `pending` past its expiry reads `expired`. */
  readonly state: "pending" | "authorized" | "denied" | "consumed" | "expired"
}

export const lookup = (typedCode: string) =>
  Effect.gen(function*() {
    const code = normalizeUserCode(typedCode)
    if (Option.isNone(code)) return Option.none<Lookup>()
    const found = yield* (yield* DeviceAuthorizationStore).findByUserCodeHash(yield* hashOf(code.value))
    if (Option.isNone(found)) return Option.none<Lookup>()
    const now = yield* DateTime.now
    const authorization = found.value
    const expired = !DateTime.lessThan(now, authorization.expiresAt) &&
      (authorization.status === "pending" || authorization.status === "authorized")
    return Option.some<Lookup>({
      authorization,
      userCode: formatUserCode(code.value),
      state: expired ? "expired" : authorization.status
    })
  })

/**
 * Approves the request of `userCode` for the organization, or denies it. Refused (400
 * `validation_error` / 404 `not_found`) when the code is unknown, expired or already decided.
 */
export const decide = (
  typedCode: string,
  decision: { readonly status: "authorized"; readonly organizationId: OrganizationId } | { readonly status: "denied" }
) =>
  Effect.gen(function*() {
    const found = yield* lookup(typedCode)
    if (Option.isNone(found)) {
      return yield* DomainError.fail("not_found", `No device login request with the code ${typedCode}`)
    }
    const { authorization, state, userCode } = found.value
    if (state !== "pending") {
      return yield* DomainError.fail(
        "validation_error",
        state === "expired"
          ? `The device code ${userCode} has expired; the device must start a new login`
          : `The device code ${userCode} was already ${state === "denied" ? "denied" : "approved"}`,
        { reason: state }
      )
    }
    const done = yield* (yield* DeviceAuthorizationStore).decide(authorization.id, decision, yield* DateTime.now)
    if (!done) {
      return yield* DomainError.fail("validation_error", `The device code ${userCode} is no longer pending`, {
        reason: "not_pending"
      })
    }
    return found.value
  }).pipe(Effect.withSpan("DeviceLogin.decide"))
