/**
 * Sign-in, the session behind a cookie, sign-out and sign-out everywhere. The cookie's token is 32
 * random bytes; the store keeps its SHA-256. The CSRF token is derived from the cookie token (a
 * keyed hash), so it needs no storage and a page that cannot read the HttpOnly cookie cannot make it.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import type { UserId } from "../kernel/Ids.js"
import type { Organization, User } from "./Organization.js"
import { OrganizationStore } from "./OrganizationStore.js"
import { PasswordHasher } from "./PasswordHasher.js"
import * as Session from "./Session.js"
import { SessionStore } from "./SessionStore.js"
import { normalizeEmail } from "./Users.js"
import { UserStore } from "./UserStore.js"

export interface SignedIn {
  readonly session: Session.Session
  readonly user: User
  readonly organization: Organization
}

const settings = Effect.map(
  Effect.serviceOption(Session.SessionSettings),
  Option.getOrElse(() => Session.defaultSettings)
)

const invalidCredentials = DomainError.of("invalid_credentials", "Wrong email or password")

/** The CSRF token that goes with a session token. */
export const csrfTokenFor = (token: string) =>
  Effect.flatMap(Crypto, (crypto) => crypto.hmacSha256Hex(token, "herald-csrf"))

/**
 * Checks the email and password and opens a session; the same 401 `invalid_credentials` whether the
 * email is unknown, has no password yet, or the password is wrong (and the unknown email still pays
 * for one hash, so timing does not tell them apart).
 */
export const signIn = (email: string, password: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const hasher = yield* PasswordHasher
    const found = yield* (yield* UserStore).findByEmail(normalizeEmail(email))
    const hash = Option.flatMap(found, (c) => c.passwordHash)
    if (Option.isNone(found) || Option.isNone(hash)) {
      yield* hasher.hash(password)
      return yield* Effect.fail(invalidCredentials)
    }
    if (!(yield* hasher.verify(password, hash.value))) return yield* Effect.fail(invalidCredentials)
    const user = found.value.user
    const organization = yield* (yield* OrganizationStore).findById(user.organizationId)
    if (Option.isNone(organization)) return yield* Effect.fail(invalidCredentials)
    const crypto = yield* Crypto
    const token = yield* crypto.randomHex(32)
    const now = yield* DateTime.now
    const session = new Session.Session({
      id: Session.SessionId.make(yield* (yield* IdGenerator).uuid),
      userId: user.id,
      organizationId: user.organizationId,
      tokenHash: yield* crypto.sha256Hex(token),
      createdAt: now,
      lastSeenAt: now
    })
    const store = yield* SessionStore
    yield* store.insert(session)
    // Sign-ins are rare enough to carry the clean-up of sessions that are over for everyone.
    const { absoluteSeconds, idleSeconds } = yield* settings
    yield* store.purge({
      createdBefore: DateTime.unsafeMake(DateTime.toEpochMillis(now) - absoluteSeconds * 1000),
      seenBefore: DateTime.unsafeMake(DateTime.toEpochMillis(now) - idleSeconds * 1000)
    })
    return { token, signedIn: { session, user, organization: organization.value } satisfies SignedIn }
  }).pipe(Effect.withSpan("Sessions.signIn"))

/**
 * The live session of a cookie token, its user (with the role as it is now) and organization; None
 * when unknown, idle too long or too old (such a session is removed). Marks the session as seen.
 */
export const resolve = (token: string) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const store = yield* SessionStore
    const tokenHash = yield* crypto.sha256Hex(token)
    const found = yield* store.findByTokenHash(tokenHash)
    if (Option.isNone(found)) return Option.none<SignedIn>()
    const session = found.value
    // The lookup is by hash; the constant-time comparison guards a store whose lookup is not exact.
    if (!crypto.timingSafeEqual(session.tokenHash, tokenHash)) return Option.none<SignedIn>()
    const now = yield* DateTime.now
    if (Session.state(session, now, yield* settings) !== "active") {
      yield* store.remove(session.id)
      return Option.none<SignedIn>()
    }
    const user = yield* (yield* UserStore).findById(session.userId)
    const organization = yield* (yield* OrganizationStore).findById(session.organizationId)
    if (Option.isNone(user) || Option.isNone(organization)) return Option.none<SignedIn>()
    if (Session.needsTouch(session, now)) yield* store.touch(session.id, now)
    return Option.some<SignedIn>({ session, user: user.value, organization: organization.value })
  }).pipe(Effect.withSpan("Sessions.resolve"))

export const signOut = (session: Session.Session) =>
  Effect.flatMap(SessionStore, (store) => store.remove(session.id)).pipe(Effect.asVoid)

/** Ends every session of the user, on every device. */
export const signOutEverywhere = (userId: UserId) =>
  Effect.flatMap(SessionStore, (store) => store.removeForUser(userId))
