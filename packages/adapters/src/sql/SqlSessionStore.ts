import * as SqlClient from "@effect/sql/SqlClient"
import { Session, SessionId } from "@herald/core/access/Session"
import { SessionStore } from "@herald/core/access/SessionStore"
import { OrganizationId, UserId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Instant, orPersistence } from "./internal/Rows.js"

const SessionRow = Schema.transform(
  Schema.Struct({
    id: SessionId,
    user_id: UserId,
    organization_id: OrganizationId,
    token_hash: Schema.String,
    created_at: Instant,
    last_seen_at: Instant
  }),
  Schema.instanceOf(Session),
  {
    strict: true,
    decode: (row) =>
      new Session({
        id: row.id,
        userId: row.user_id,
        organizationId: row.organization_id,
        tokenHash: row.token_hash,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at
      }, true),
    encode: (session) => ({
      id: session.id,
      user_id: session.userId,
      organization_id: session.organizationId,
      token_hash: session.tokenHash,
      created_at: session.createdAt,
      last_seen_at: session.lastSeenAt
    })
  }
)

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(SessionRow))
  const millis = (at: DateTime.Utc) => DateTime.toEpochMillis(at)

  return SessionStore.of({
    insert: (session) =>
      Schema.encode(SessionRow)(session).pipe(
        Effect.flatMap((row) => sql`INSERT INTO sessions ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("SessionStore.insert")
      ),
    findByTokenHash: (hash) =>
      sql`SELECT * FROM sessions WHERE token_hash = ${hash}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("SessionStore.findByTokenHash")
      ),
    touch: (id, at) =>
      sql`UPDATE sessions SET last_seen_at = ${millis(at)} WHERE id = ${id} AND last_seen_at < ${millis(at)}`.pipe(
        Effect.asVoid,
        orPersistence("SessionStore.touch")
      ),
    remove: (id) =>
      sql`DELETE FROM sessions WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("SessionStore.remove")
      ),
    removeForUser: (userId) =>
      sql`DELETE FROM sessions WHERE user_id = ${userId} RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("SessionStore.removeForUser")
      ),
    purge: ({ createdBefore, seenBefore }) =>
      sql`DELETE FROM sessions WHERE created_at < ${millis(createdBefore)} OR last_seen_at < ${millis(seenBefore)}`
        .pipe(
          Effect.asVoid,
          orPersistence("SessionStore.purge")
        )
  })
})

export const layer: Layer.Layer<SessionStore, never, SqlClient.SqlClient> = Layer.effect(SessionStore, make)
