/**
 * Dashboard users with their sign-in credentials: the password as a self-describing hash (see
 * `PasswordHasher`), and one-time password-set tokens stored as their SHA-256.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId, UserId } from "../kernel/Ids.js"
import type { Role, User } from "./Organization.js"

export interface UserCredentials {
  readonly user: User
  /** None until the user has set a password. */
  readonly passwordHash: Option.Option<string>
}

export interface PasswordToken {
  readonly tokenHash: string
  readonly userId: UserId
  readonly expiresAt: DateTime.Utc
  readonly createdAt: DateTime.Utc
}

export class UserStore extends Context.Tag("@herald/core/access/UserStore")<UserStore, {
  readonly insert: (user: User) => Effect.Effect<void, PersistenceError>
  readonly findById: (id: UserId) => Effect.Effect<Option.Option<User>, PersistenceError>
  /** By email as stored (callers normalize it); the oldest user when several share it. */
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<UserCredentials>, PersistenceError>
  /** Every user of the organization, or of every organization, oldest first. */
  readonly list: (organizationId: Option.Option<OrganizationId>) => Effect.Effect<ReadonlyArray<User>, PersistenceError>
  /** False when there is no such user. */
  readonly setRole: (id: UserId, role: Role) => Effect.Effect<boolean, PersistenceError>
  readonly setPasswordHash: (id: UserId, hash: string) => Effect.Effect<boolean, PersistenceError>
  /** Removes the user and their password tokens; false when there is no such user. */
  readonly remove: (id: UserId) => Effect.Effect<boolean, PersistenceError>
  /** Stores the token and removes every earlier token of its user: only the newest one works. */
  readonly insertPasswordToken: (token: PasswordToken) => Effect.Effect<void, PersistenceError>
  /**
   * Takes the token once: removes it and returns its user when it exists and has not expired at
   * `now`, removing every other token of that user too; None otherwise. Two concurrent takers cannot
   * both succeed.
   */
  readonly consumePasswordToken: (
    hash: string,
    now: DateTime.Utc
  ) => Effect.Effect<Option.Option<UserId>, PersistenceError>
}>() {}
