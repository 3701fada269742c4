/**
 * The people of an organization: invitations by link with a role, joining through one, changing
 * roles and removing users. The rules (see docs/decisions.md, "Team roles and invitations"):
 * - only owners and admins invite, change roles and remove people (403 `insufficient_scope` otherwise,
 *   as on /api/v1);
 * - only an owner grants the owner role, takes it away or removes an owner: an admin manages members
 *   and admins;
 * - the organization's last owner can neither lose the role nor be removed (400 `validation_error`,
 *   reason `last_owner`);
 * - a seat is taken by every user and every open invitation (400 `limit_reached` when the plan's
 *   seats are all taken), so a link handed out can always be used;
 * - an invitation link is single-use and lives 7 days; the store keeps only its SHA-256, and a new
 *   invitation of the same email replaces the earlier link;
 * - a removed user's sessions end at once, and their unused password links with them.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { UserId } from "../kernel/Ids.js"
import { Transactor } from "../kernel/Transactor.js"
import { Invitation, InvitationId, InvitationStore } from "./InvitationStore.js"
import { type Organization, planAllowances, type Role, User } from "./Organization.js"
import { OrganizationStore } from "./OrganizationStore.js"
import { PasswordHasher } from "./PasswordHasher.js"
import { SessionStore } from "./SessionStore.js"
import { isEmail, isOwnerOrAdmin, normalizeEmail, passwordProblem } from "./Users.js"
import { UserStore } from "./UserStore.js"

/** An invitation link works for a week: long enough to reach someone on leave for a few days. */
export const invitationLifetimeSeconds = 7 * 24 * 3600

/** Who acts: the signed-in person's id, organization and current role. */
export interface Actor {
  readonly id: UserId
  readonly organizationId: User["organizationId"]
  readonly role: Role
}

const isUserId = Schema.is(UserId)
const isInvitationId = Schema.is(InvitationId)

/**
 * 403 `insufficient_scope`, the code the role matrix of /api/v1 answers a person who may not do
 * something, with the same `details.required_role` and `details.role`.
 */
const refused = (actor: Actor, requiredRole: string, message: string) =>
  DomainError.fail("insufficient_scope", message, { required_role: requiredRole, role: actor.role })

const requireManager = (actor: Actor) =>
  isOwnerOrAdmin(actor.role)
    ? Effect.void
    : refused(actor, "owner or admin", "Only an owner or an admin of the organization may manage its people")

/** A user of the actor's organization; 404 for anyone else (another organization's users are not shown). */
const userOfOrganization = (actor: Actor, userId: string) =>
  Effect.gen(function*() {
    if (!isUserId(userId)) return yield* DomainError.notFound("User")
    const found = yield* (yield* UserStore).findById(userId)
    if (Option.isNone(found) || found.value.organizationId !== actor.organizationId) {
      return yield* DomainError.notFound("User")
    }
    return found.value
  })

const lastOwner = DomainError.of(
  "validation_error",
  "The organization's only owner cannot lose the owner role or be removed: make someone else an owner first",
  { reason: "last_owner" }
)

const seatsOf = (organization: Organization) => planAllowances[organization.plan].teamSeats

const organizationOf = (actor: Actor) =>
  Effect.gen(function*() {
    const found = yield* (yield* OrganizationStore).findById(actor.organizationId)
    if (Option.isNone(found)) return yield* DomainError.notFound("Organization")
    return found.value
  })

const noSeat = (organization: Organization, used: number) => {
  const seats = seatsOf(organization)
  return DomainError.fail(
    "limit_reached",
    `The ${organization.plan} plan has ${seats} team seat${seats === 1 ? "" : "s"}, and ${used} ${
      used === 1 ? "is" : "are"
    } ` +
      "taken (users and open invitations): remove a user, withdraw an invitation or upgrade the plan",
    { limit: seats, used, plan: organization.plan }
  )
}

/**
 * Invites `email` with `role`: returns the invitation and its token (shown once, for the link). A
 * new invitation of the same email replaces the earlier one, and so does not take a second seat.
 */
export const invite = (actor: Actor, options: { readonly email: string; readonly role: Role }) =>
  Effect.gen(function*() {
    yield* requireManager(actor)
    if (options.role === "owner" && actor.role !== "owner") {
      return yield* refused(actor, "owner", "Only an owner may invite another owner")
    }
    const email = normalizeEmail(options.email)
    if (!isEmail(email)) {
      return yield* DomainError.fail("validation_error", `Not an email address: ${options.email}`, { field: "email" })
    }
    if (Option.isSome(yield* (yield* UserStore).findByEmail(email))) {
      return yield* DomainError.fail("validation_error", `A user with the email ${email} already exists`, {
        field: "email",
        reason: "email_taken"
      })
    }
    const organization = yield* organizationOf(actor)
    const now = yield* DateTime.now
    const invitations = yield* InvitationStore
    const open = (yield* invitations.listOpen(actor.organizationId, now)).filter((i) => i.email !== email)
    const used = (yield* (yield* UserStore).list(Option.some(actor.organizationId))).length + open.length
    if (used >= seatsOf(organization)) return yield* noSeat(organization, used)
    const crypto = yield* Crypto
    const token = yield* crypto.randomHex(32)
    const invitation = new Invitation({
      id: InvitationId.make(yield* (yield* IdGenerator).uuid),
      organizationId: actor.organizationId,
      email,
      role: options.role,
      invitedBy: actor.id,
      expiresAt: DateTime.unsafeMake(DateTime.toEpochMillis(now) + invitationLifetimeSeconds * 1000),
      createdAt: now
    })
    yield* invitations.insert(invitation, yield* crypto.sha256Hex(token))
    return { invitation, token }
  }).pipe(Effect.withSpan("Team.invite"))

/** The organization's open invitations (owners and admins). */
export const listInvitations = (actor: Actor) =>
  Effect.gen(function*() {
    yield* requireManager(actor)
    return yield* (yield* InvitationStore).listOpen(actor.organizationId, yield* DateTime.now)
  })

/** Withdraws an open invitation: its link stops working and its seat is free again. */
export const withdrawInvitation = (actor: Actor, id: string) =>
  Effect.gen(function*() {
    yield* requireManager(actor)
    const removed = isInvitationId(id) && (yield* (yield* InvitationStore).remove(actor.organizationId, id))
    if (!removed) return yield* DomainError.notFound("Invitation")
  })

const invalidInvitation = DomainError.of(
  "invalid_token",
  "This invitation link is unknown, used, withdrawn or expired; ask for a new one"
)

/** What an invitation link offers (the organization, the email and the role), before it is used. */
export const preview = (token: string) =>
  Effect.gen(function*() {
    const hash = yield* (yield* Crypto).sha256Hex(token)
    const found = yield* (yield* InvitationStore).findByTokenHash(hash, yield* DateTime.now)
    if (Option.isNone(found)) return yield* Effect.fail(invalidInvitation)
    const organization = yield* (yield* OrganizationStore).findById(found.value.organizationId)
    if (Option.isNone(organization)) return yield* Effect.fail(invalidInvitation)
    return { invitation: found.value, organization: organization.value }
  })

/**
 * Joins through an invitation: creates the user with the invitation's email and role, the given name
 * and password, and takes the link. A bad name or password leaves the link usable.
 */
export const accept = (
  token: string,
  options: { readonly name: string; readonly password: Redacted.Redacted<string> }
) =>
  Effect.gen(function*() {
    const name = options.name.trim()
    if (name.length === 0 || name.length > 200) {
      return yield* DomainError.fail("validation_error", "The name must be 1 to 200 characters long", { field: "name" })
    }
    const problem = passwordProblem(options.password)
    if (Option.isSome(problem)) {
      return yield* DomainError.fail("validation_error", problem.value, { field: "password" })
    }
    const crypto = yield* Crypto
    const hash = yield* crypto.sha256Hex(token)
    // Hash the password first (slow), so the transaction that takes the link is short.
    const passwordHash = yield* (yield* PasswordHasher).hash(options.password)
    const userId = UserId.make(yield* (yield* IdGenerator).uuid)
    const now = yield* DateTime.now
    const users = yield* UserStore
    return yield* (yield* Transactor).withTransaction(
      Effect.gen(function*() {
        const taken = yield* (yield* InvitationStore).take(hash, now)
        if (Option.isNone(taken)) return yield* Effect.fail(invalidInvitation)
        const invitation = taken.value
        if (Option.isSome(yield* users.findByEmail(invitation.email))) {
          return yield* DomainError.fail(
            "validation_error",
            `A user with the email ${invitation.email} already exists: sign in instead`,
            { field: "email", reason: "email_taken" }
          )
        }
        const organization = yield* (yield* OrganizationStore).findById(invitation.organizationId)
        if (Option.isNone(organization)) return yield* Effect.fail(invalidInvitation)
        // The invitation held a seat; a plan changed down since may have taken it away.
        const used = (yield* users.list(Option.some(invitation.organizationId))).length
        if (used >= seatsOf(organization.value)) return yield* noSeat(organization.value, used)
        const user = new User({
          id: userId,
          organizationId: invitation.organizationId,
          email: invitation.email,
          name,
          role: invitation.role,
          createdAt: now
        })
        yield* users.insert(user)
        yield* users.setPasswordHash(user.id, passwordHash)
        return user
      })
    )
  }).pipe(Effect.withSpan("Team.accept"))

/** Changes a user's role under the rules above. */
export const changeRole = (actor: Actor, userId: string, role: Role) =>
  Effect.gen(function*() {
    yield* requireManager(actor)
    const target = yield* userOfOrganization(actor, userId)
    if ((target.role === "owner" || role === "owner") && actor.role !== "owner" && target.role !== role) {
      return yield* refused(actor, "owner", "Only an owner may grant or take away the owner role")
    }
    if (target.role === role) return target
    const users = yield* UserStore
    return yield* (yield* Transactor).withTransaction(
      Effect.gen(function*() {
        if (target.role === "owner") {
          const owners = (yield* users.list(Option.some(actor.organizationId))).filter((u) => u.role === "owner")
          if (owners.length <= 1) return yield* Effect.fail(lastOwner)
        }
        yield* users.setRole(target.id, role)
        return new User({ ...target, role })
      })
    )
  }).pipe(Effect.withSpan("Team.changeRole"))

/** Removes a user from the organization; their sessions end at once. */
export const remove = (actor: Actor, userId: string) =>
  Effect.gen(function*() {
    yield* requireManager(actor)
    const target = yield* userOfOrganization(actor, userId)
    if (target.role === "owner" && actor.role !== "owner") {
      return yield* refused(actor, "owner", "Only an owner may remove an owner")
    }
    const users = yield* UserStore
    yield* (yield* Transactor).withTransaction(
      Effect.gen(function*() {
        if (target.role === "owner") {
          const owners = (yield* users.list(Option.some(actor.organizationId))).filter((u) => u.role === "owner")
          if (owners.length <= 1) return yield* Effect.fail(lastOwner)
        }
        yield* (yield* SessionStore).removeForUser(target.id)
        yield* users.remove(target.id)
      })
    )
    return target
  }).pipe(Effect.withSpan("Team.remove"))
