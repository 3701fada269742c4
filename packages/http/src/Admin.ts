/**
 * Operator actions behind the `herald` command: organizations, plans and API keys, and the first-start
 * bootstrap. A key's secret exists only in the value returned by `createKey`; the store keeps its hash.
 */
import * as ApiKey from "@herald/core/access/ApiKey"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { Crypto } from "@herald/core/kernel/Crypto"
import * as DeviceLogin from "@herald/core/access/DeviceLogin"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { AccountId, ApiKeyId, OrganizationId, UserId } from "@herald/core/kernel/Ids"
import * as Organization from "@herald/core/access/Organization"
import { UserStore } from "@herald/core/access/UserStore"
import type { DomainError, PersistenceError } from "@herald/core/kernel/Errors"
import * as Users from "@herald/core/access/Users"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Queues from "@herald/core/workflow/Queues"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

export class AdminError extends Data.TaggedError("AdminError")<{ readonly message: string }> {}

/** Length of the trial a new organization gets unless told otherwise. */
export const defaultTrialDays = 14

export const createOrganization = (options: {
  readonly name: string
  readonly plan?: Organization.Plan | undefined
  readonly status?: Organization.SubscriptionStatus | undefined
  readonly trialDays?: number | undefined
}) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    const now = yield* DateTime.now
    const plan = options.plan ?? "trial"
    const status = options.status ?? (plan === "trial" ? "trialing" : "active")
    const org = new Organization.Organization({
      id: OrganizationId.make(yield* ids.uuid),
      name: options.name,
      plan,
      subscriptionStatus: status,
      trialEndsAt: status === "trialing"
        ? Option.some(DateTime.addDuration(now, Duration.days(options.trialDays ?? defaultTrialDays)))
        : Option.none(),
      createdAt: now
    })
    yield* (yield* OrganizationStore).insert(org)
    return org
  })

export const createOwner = (organizationId: OrganizationId, email: string, name: string) =>
  Effect.gen(function*() {
    const user = new Organization.User({
      id: UserId.make(yield* (yield* IdGenerator).uuid),
      organizationId,
      email,
      name,
      role: "owner",
      createdAt: yield* DateTime.now
    })
    yield* (yield* OrganizationStore).insertUser(user)
    return user
  })

export interface KeyOptions {
  readonly organizationId: OrganizationId
  readonly name?: string | undefined
  readonly scopes?: ReadonlyArray<ApiKey.Scope> | undefined
  readonly accountIds?: ReadonlyArray<AccountId> | undefined
  readonly expiresAt?: DateTime.Utc | undefined
  readonly createdBy?: UserId | undefined
}

/** Makes a key `pe_live_<32 hex>`, stores its SHA-256 and returns the key once. */
export const createKey = (options: KeyOptions) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const secret = yield* crypto.randomHex(16)
    const token = `${ApiKey.keyPrefix}${secret}`
    // An operator creates keys on behalf of the organization: without a named creator, the key is
    // its owner's (posting allowances are per user, and every key of one user shares them).
    const createdBy = options.createdBy !== undefined
      ? Option.some(options.createdBy)
      : Option.map(
        Option.fromNullable(
          (yield* (yield* OrganizationStore).listUsers(options.organizationId)).find((u) => u.role === "owner")
        ),
        (u) => u.id
      )
    const key = new ApiKey.ApiKey({
      id: ApiKeyId.make(yield* (yield* IdGenerator).uuid),
      organizationId: options.organizationId,
      createdBy,
      name: options.name ?? "API key",
      hint: `${ApiKey.keyPrefix}${secret.slice(0, 4)}`,
      hash: yield* crypto.sha256Hex(token),
      scopes: options.scopes ?? ["read", "write", "ai"],
      accountIds: Option.fromNullable(options.accountIds),
      expiresAt: Option.fromNullable(options.expiresAt),
      revokedAt: Option.none(),
      createdAt: yield* DateTime.now
    })
    yield* (yield* ApiKeyStore).insert(key)
    return { key, token }
  })

export const revokeKey = (id: string) =>
  Effect.gen(function*() {
    const keyId = yield* Schema.decodeUnknown(ApiKeyId)(id).pipe(
      Effect.mapError(() => new AdminError({ message: `Not a key id: ${id}` }))
    )
    const done = yield* (yield* ApiKeyStore).revoke(keyId, yield* DateTime.now)
    if (!done) return yield* new AdminError({ message: `No active key ${id}` })
  })

export const findOrganization = (id: string) =>
  Effect.gen(function*() {
    const orgId = yield* Schema.decodeUnknown(OrganizationId)(id).pipe(
      Effect.mapError(() => new AdminError({ message: `Not an organization id: ${id}` }))
    )
    const org = yield* (yield* OrganizationStore).findById(orgId)
    if (Option.isNone(org)) return yield* new AdminError({ message: `No organization ${id}` })
    return org.value
  })

/** The organization a key is created for: the one given, or the only one there is. */
export const resolveOrganization = (id: string | undefined) =>
  Effect.gen(function*() {
    if (id !== undefined) return yield* findOrganization(id)
    const orgs = yield* (yield* OrganizationStore).list
    if (orgs.length === 1) return orgs[0]
    return yield* new AdminError({
      message: orgs.length === 0
        ? "No organization yet: run `herald orgs create NAME` or start the server once"
        : "Several organizations: choose one with --org ID (see `herald orgs list`)"
    })
  })

export const setPlan = (id: string, plan: Organization.Plan, status?: Organization.SubscriptionStatus) =>
  Effect.gen(function*() {
    const org = yield* findOrganization(id)
    const nextStatus = status ?? (plan === "trial" ? org.subscriptionStatus : "active")
    const updated = new Organization.Organization({ ...org, plan, subscriptionStatus: nextStatus })
    yield* (yield* OrganizationStore).update(updated)
    return updated
  })

/**
 * On first start against an empty store: a default organization on a trial, its owner (with a
 * one-time password-set token for the dashboard), and one key with every scope. None when the store already has an organization. One transaction, so a crash
 * leaves either all three or none. (Two servers started at the same instant on one empty Postgres
 * could each make one; start one first, or create organizations with `herald orgs create`.)
 */
export const bootstrap = Effect.gen(function*() {
  const transactor = yield* Transactor
  return yield* transactor.withTransaction(
    Effect.gen(function*() {
      const orgs = yield* (yield* OrganizationStore).list
      if (orgs.length > 0) return Option.none()
      const org = yield* createOrganization({ name: "Default organization" })
      const owner = yield* createOwner(org.id, "owner@localhost", "Owner")
      const created = yield* createKey({ organizationId: org.id, name: "bootstrap", createdBy: owner.id })
      // The owner signs in to the dashboard after setting a password through this one-time token.
      const passwordToken = yield* Users.issuePasswordToken(owner.id)
      return Option.some({ organization: org, owner, passwordToken, ...created })
    })
  )
})

/**
 * `herald device approve CODE [--org ID]`: the device's next poll receives a key of the organization
 * (the only one, unless `--org` names it). `herald device deny CODE` refuses it.
 */
export const approveDevice = (code: string, organizationId: string | undefined) =>
  Effect.gen(function*() {
    const org = yield* resolveOrganization(organizationId)
    const decided = yield* DeviceLogin.decide(code, { status: "authorized", organizationId: org.id }).pipe(
      Effect.catchTag("DomainError", (error) => new AdminError({ message: error.message }))
    )
    return { ...decided, organization: org }
  })

export const denyDevice = (code: string) =>
  DeviceLogin.decide(code, { status: "denied" }).pipe(
    Effect.catchTag("DomainError", (error) => new AdminError({ message: error.message }))
  )

/**
 * `herald queue set`: creates or replaces an organization's posting queue (the same use case a host
 * application calls in-process: `Queues.setQueue`). Slots in the notation "mon-fri 09:00,12:30;sat 10:00".
 */
export const setQueue = (
  options: { readonly org: string | undefined; readonly timezone: string; readonly slots: string }
) =>
  Effect.gen(function*() {
    const org = yield* resolveOrganization(options.org)
    return yield* Queues.setQueue({ organizationId: org.id, timezone: options.timezone, openings: options.slots }).pipe(
      Effect.catchTag("DomainError", (e) => new AdminError({ message: e.message }))
    )
  })

/** `herald queue show`: the queue and where the next `count` posts would land. */
export const showQueue = (org: string | undefined, count: number = Queues.defaultForecast) =>
  Effect.flatMap(resolveOrganization(org), (o) => Queues.show(o.id, count))

// dashboard users

/** A user named by id or by email. */
export const findUser = (idOrEmail: string) =>
  Effect.gen(function*() {
    const users = yield* UserStore
    const byId = Schema.is(UserId)(idOrEmail) ? yield* users.findById(idOrEmail) : Option.none()
    if (Option.isSome(byId)) return byId.value
    const byEmail = yield* users.findByEmail(Users.normalizeEmail(idOrEmail))
    if (Option.isSome(byEmail)) return byEmail.value.user
    return yield* new AdminError({ message: `No user ${idOrEmail}` })
  })

const asAdminError = <A, R>(self: Effect.Effect<A, DomainError | PersistenceError, R>) =>
  Effect.catchTag(self, "DomainError", (error) => new AdminError({ message: error.message }))

/** `herald users create EMAIL [--role R] [--org ID]`: the user and a one-time password-set token. */
export const createUser = (options: {
  readonly email: string
  readonly role: Organization.Role
  readonly org: string | undefined
  readonly name: string | undefined
}) =>
  Effect.gen(function*() {
    const org = yield* resolveOrganization(options.org)
    const user = yield* asAdminError(
      Users.create({ organizationId: org.id, email: options.email, name: options.name, role: options.role })
    )
    const passwordToken = yield* Users.issuePasswordToken(user.id)
    return { user, passwordToken }
  })

/** `herald users set-role USER ROLE`. */
export const setUserRole = (idOrEmail: string, role: Organization.Role) =>
  Effect.flatMap(findUser(idOrEmail), (user) => asAdminError(Users.setRole(user.id, role)))

/** `herald users reset-password USER`: a new one-time password-set token (the old password stays until used). */
export const resetPassword = (idOrEmail: string) =>
  Effect.gen(function*() {
    const user = yield* findUser(idOrEmail)
    return { user, passwordToken: yield* Users.issuePasswordToken(user.id) }
  })
