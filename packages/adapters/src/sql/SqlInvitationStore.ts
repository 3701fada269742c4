import * as SqlClient from "@effect/sql/SqlClient"
import { Invitation, InvitationId, InvitationStore } from "@herald/core/access/InvitationStore"
import { Role } from "@herald/core/access/Organization"
import { OrganizationId, UserId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Instant, orPersistence } from "./internal/Rows.js"

const InvitationRow = Schema.Struct({
  id: InvitationId,
  organization_id: OrganizationId,
  email: Schema.String,
  role: Role,
  invited_by: UserId,
  expires_at: Instant,
  created_at: Instant
})

const toInvitation = (row: typeof InvitationRow.Type) =>
  new Invitation({
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    invitedBy: row.invited_by,
    expiresAt: row.expires_at,
    createdAt: row.created_at
  })

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(InvitationRow))
  const millis = (at: DateTime.Utc) => DateTime.toEpochMillis(at)
  const columns = sql`id, organization_id, email, role, invited_by, expires_at, created_at`
  const rows = (self: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    self.pipe(Effect.flatMap(decode), Effect.map(Arr.map(toInvitation)))

  return InvitationStore.of({
    insert: (invitation, tokenHash) =>
      sql.withTransaction(
        // The newest invitation of an email is the only one; expired ones are of no use to anyone.
        sql`DELETE FROM invitations
          WHERE (organization_id = ${invitation.organizationId} AND email = ${invitation.email})
            OR expires_at <= ${millis(invitation.createdAt)}`.pipe(
          Effect.zipRight(sql`INSERT INTO invitations ${
            sql.insert({
              id: invitation.id,
              token_hash: tokenHash,
              organization_id: invitation.organizationId,
              email: invitation.email,
              role: invitation.role,
              invited_by: invitation.invitedBy,
              expires_at: millis(invitation.expiresAt),
              created_at: millis(invitation.createdAt)
            })
          }`)
        )
      ).pipe(Effect.asVoid, orPersistence("InvitationStore.insert")),
    listOpen: (organizationId, now) =>
      rows(sql`SELECT ${columns} FROM invitations
        WHERE organization_id = ${organizationId} AND expires_at > ${millis(now)}
        ORDER BY created_at, id`).pipe(orPersistence("InvitationStore.listOpen")),
    findByTokenHash: (hash, now) =>
      rows(sql`SELECT ${columns} FROM invitations WHERE token_hash = ${hash} AND expires_at > ${millis(now)}`).pipe(
        Effect.map(Arr.head),
        orPersistence("InvitationStore.findByTokenHash")
      ),
    take: (hash, now) =>
      // DELETE ... RETURNING takes the row once: a concurrent taker finds nothing to delete.
      rows(sql`DELETE FROM invitations WHERE token_hash = ${hash} RETURNING ${columns}`).pipe(
        Effect.map((taken) => Option.filter(Arr.head(taken), (i) => DateTime.lessThan(now, i.expiresAt))),
        orPersistence("InvitationStore.take")
      ),
    remove: (organizationId, id) =>
      sql`DELETE FROM invitations WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((deleted) => deleted.length > 0),
        orPersistence("InvitationStore.remove")
      )
  })
})

export const layer: Layer.Layer<InvitationStore, never, SqlClient.SqlClient> = Layer.effect(InvitationStore, make)
