/**
 * Invitations to join an organization: an email, the role the invitee will have, who invited them and
 * until when the link works. The link's token is shown once; the store keeps only its SHA-256.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { PersistenceError } from "../kernel/Errors.js"
import { OrganizationId, UserId } from "../kernel/Ids.js"
import { Role } from "./Organization.js"

export const InvitationId = Schema.UUID.pipe(Schema.brand("InvitationId"))
export type InvitationId = typeof InvitationId.Type

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: InvitationId,
  organizationId: OrganizationId,
  /** Normalized (trimmed, lower-cased): the invitee signs in with it. */
  email: Schema.String,
  role: Role,
  invitedBy: UserId,
  expiresAt: Schema.DateTimeUtc,
  createdAt: Schema.DateTimeUtc
}) {}

export class InvitationStore extends Context.Tag("@herald/core/access/InvitationStore")<InvitationStore, {
  /**
   * Stores the invitation under the token's hash, replacing every earlier invitation of the same email
   * to the same organization (only the newest link works), and clearing expired ones.
   */
  readonly insert: (invitation: Invitation, tokenHash: string) => Effect.Effect<void, PersistenceError>
  /** The organization's invitations that have not expired at `now`, oldest first. */
  readonly listOpen: (
    organizationId: OrganizationId,
    now: DateTime.Utc
  ) => Effect.Effect<ReadonlyArray<Invitation>, PersistenceError>
  /** The invitation of the token's hash, when it exists and has not expired at `now` (it stays usable). */
  readonly findByTokenHash: (
    hash: string,
    now: DateTime.Utc
  ) => Effect.Effect<Option.Option<Invitation>, PersistenceError>
  /**
   * Takes the invitation once: removes it and returns it when it has not expired at `now`; None
   * otherwise. Two concurrent takers cannot both succeed.
   */
  readonly take: (hash: string, now: DateTime.Utc) => Effect.Effect<Option.Option<Invitation>, PersistenceError>
  /** Withdraws an invitation of the organization; false when there is none with that id. */
  readonly remove: (organizationId: OrganizationId, id: InvitationId) => Effect.Effect<boolean, PersistenceError>
}>() {}
