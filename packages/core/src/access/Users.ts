/**
 * Dashboard users: creation with a role, roles, and passwords set through one-time tokens (the
 * owner's first-start link and `herald users reset-password` both hand out such a token). A password
 * is checked before anything is stored, and setting one ends every session of the user.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { type OrganizationId, UserId } from "../kernel/Ids.js"
import { Transactor } from "../kernel/Transactor.js"
import { planAllowances, type Role, User } from "./Organization.js"
import { OrganizationStore } from "./OrganizationStore.js"
import { PasswordHasher } from "./PasswordHasher.js"
import { SessionStore } from "./SessionStore.js"
import { UserStore } from "./UserStore.js"

/** Emails are compared trimmed and lower-cased, and stored that way. */
export const normalizeEmail = (raw: string): string => raw.trim().toLowerCase()

const emailPattern = /^[^\s@]+@[^\s@]+$/

export const isEmail = (normalized: string): boolean => normalized.length <= 254 && emailPattern.test(normalized)

export const minPasswordLength = 10
/** Long enough for any passphrase; keeps a megabyte "password" from reaching the hasher. */
export const maxPasswordLength = 1024

/** A password-set token lives a day; `herald users reset-password` makes a new one. */
export const passwordTokenLifetimeSeconds = 24 * 3600

/** Who may approve drafts, create and revoke keys, approve device logins and list users. */
export const isOwnerOrAdmin = (role: Role): boolean => role === "owner" || role === "admin"

/** What is wrong with a new password, if anything. The message never quotes the password. */
export const passwordProblem = (password: Redacted.Redacted<string>): Option.Option<string> => {
  const length = [...Redacted.value(password)].length
  if (length < minPasswordLength) {
    return Option.some(`The password must be at least ${minPasswordLength} characters long`)
  }
  if (length > maxPasswordLength) {
    return Option.some(`The password must be at most ${maxPasswordLength} characters long`)
  }
  return Option.none()
}

/**
 * 400 `limit_reached` when every team seat of the organization's plan is taken (the spec's plan
 * table: Lite 1, Starter 2, Growth 3, Scale 5; a trial has Starter's), naming the plan and its seats.
 * Every path that adds a user goes through `create`, which asks this first.
 */
export const ensureSeat = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const org = yield* (yield* OrganizationStore).findById(organizationId)
    if (Option.isNone(org)) return
    const seats = planAllowances[org.value.plan].teamSeats
    const used = (yield* (yield* UserStore).list(Option.some(organizationId))).length
    if (used >= seats) {
      return yield* DomainError.fail(
        "limit_reached",
        `The ${org.value.plan} plan has ${seats} team seat${seats === 1 ? "" : "s"}, and ${used} ${
          used === 1 ? "is" : "are"
        } ` +
          "taken: remove a user or upgrade the plan to add another",
        { limit: seats, used, plan: org.value.plan }
      )
    }
  })

/** A new user of the organization, without a password (issue a password token next). */
export const create = (options: {
  readonly organizationId: OrganizationId
  readonly email: string
  readonly name?: string | undefined
  readonly role: Role
}) =>
  Effect.gen(function*() {
    const email = normalizeEmail(options.email)
    if (!isEmail(email)) {
      return yield* DomainError.fail("validation_error", `Not an email address: ${options.email}`, { field: "email" })
    }
    const users = yield* UserStore
    if (Option.isSome(yield* users.findByEmail(email))) {
      return yield* DomainError.fail("validation_error", `A user with the email ${email} already exists`, {
        field: "email",
        reason: "email_taken"
      })
    }
    yield* ensureSeat(options.organizationId)
    const user = new User({
      id: UserId.make(yield* (yield* IdGenerator).uuid),
      organizationId: options.organizationId,
      email,
      name: options.name ?? email.split("@")[0]!,
      role: options.role,
      createdAt: yield* DateTime.now
    })
    yield* users.insert(user)
    return user
  }).pipe(Effect.withSpan("Users.create"))

/**
 * A one-time password-set token for the user (shown once; the store keeps its SHA-256). It replaces
 * every earlier token of the user: only the newest link issued works.
 */
export const issuePasswordToken = (userId: UserId) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const token = yield* crypto.randomHex(32)
    const now = yield* DateTime.now
    yield* (yield* UserStore).insertPasswordToken({
      tokenHash: yield* crypto.sha256Hex(token),
      userId,
      expiresAt: DateTime.unsafeMake(DateTime.toEpochMillis(now) + passwordTokenLifetimeSeconds * 1000),
      createdAt: now
    })
    return token
  })

/**
 * Sets the password of the token's user and takes the token, and with it every other token of the
 * user. A bad password leaves the token usable; an unknown, used, replaced or expired token is 400
 * `invalid_token`. Every session of the user ends.
 */
export const setPassword = (token: string, password: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const problem = passwordProblem(password)
    if (Option.isSome(problem)) {
      return yield* DomainError.fail("validation_error", problem.value, { field: "password" })
    }
    const crypto = yield* Crypto
    const users = yield* UserStore
    const tokenHash = yield* crypto.sha256Hex(token)
    // Hash first (slow), so the transaction that takes the token and stores the hash is short.
    const hash = yield* (yield* PasswordHasher).hash(password)
    const now = yield* DateTime.now
    const userId = yield* (yield* Transactor).withTransaction(
      Effect.gen(function*() {
        const taken = yield* users.consumePasswordToken(tokenHash, now)
        if (Option.isNone(taken)) {
          return yield* DomainError.fail(
            "invalid_token",
            "This password link is unknown, used or expired; ask for a new one"
          )
        }
        yield* users.setPasswordHash(taken.value, hash)
        return taken.value
      })
    )
    yield* (yield* SessionStore).removeForUser(userId)
    return userId
  }).pipe(Effect.withSpan("Users.setPassword"))

/** Changes a user's role; the organization's last owner cannot stop being one. */
export const setRole = (userId: UserId, role: Role) =>
  Effect.gen(function*() {
    const users = yield* UserStore
    const user = yield* users.findById(userId)
    if (Option.isNone(user)) return yield* DomainError.notFound("User")
    if (user.value.role === "owner" && role !== "owner") {
      const owners = (yield* users.list(Option.some(user.value.organizationId))).filter((u) => u.role === "owner")
      if (owners.length <= 1) {
        return yield* DomainError.fail("validation_error", "The organization's only owner cannot lose the owner role", {
          reason: "last_owner"
        })
      }
    }
    yield* users.setRole(userId, role)
    return new User({ ...user.value, role })
  }).pipe(Effect.withSpan("Users.setRole"))
