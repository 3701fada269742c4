import * as SqlClient from "@effect/sql/SqlClient"
import { UserStore } from "@herald/core/access/UserStore"
import { UserId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Instant, orPersistence, UserRow } from "./internal/Rows.js"

const CredentialsRow = Schema.Struct({
  password_hash: Schema.NullOr(Schema.String)
})

const TakenTokenRow = Schema.Struct({ user_id: UserId, expires_at: Instant })

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decodeUsers = Schema.decodeUnknown(Schema.Array(UserRow))
  const decodeCredentials = Schema.decodeUnknown(Schema.Array(CredentialsRow))
  const decodeTaken = Schema.decodeUnknown(Schema.Array(TakenTokenRow))
  const millis = (at: DateTime.Utc) => DateTime.toEpochMillis(at)
  const columns = sql`id, organization_id, email, name, role, created_at`

  return UserStore.of({
    insert: (user) =>
      Schema.encode(UserRow)(user).pipe(
        Effect.flatMap((row) => sql`INSERT INTO users ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("UserStore.insert")
      ),
    findById: (id) =>
      sql`SELECT ${columns} FROM users WHERE id = ${id}`.pipe(
        Effect.flatMap(decodeUsers),
        Effect.map(Arr.head),
        orPersistence("UserStore.findById")
      ),
    findByEmail: (email) =>
      sql`SELECT * FROM users WHERE email = ${email} ORDER BY created_at, id LIMIT 1`.pipe(
        Effect.flatMap((rows) =>
          Effect.zip(decodeUsers(rows), decodeCredentials(rows)).pipe(
            Effect.map(([users, credentials]) =>
              Option.map(Arr.head(users), (user) => ({
                user,
                passwordHash: Option.fromNullable(credentials[0]?.password_hash)
              }))
            )
          )
        ),
        orPersistence("UserStore.findByEmail")
      ),
    list: (organizationId) =>
      Option.match(organizationId, {
        onNone: () => sql`SELECT ${columns} FROM users ORDER BY created_at, id`,
        onSome: (id) => sql`SELECT ${columns} FROM users WHERE organization_id = ${id} ORDER BY created_at, id`
      }).pipe(Effect.flatMap(decodeUsers), orPersistence("UserStore.list")),
    setRole: (id, role) =>
      sql`UPDATE users SET role = ${role} WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("UserStore.setRole")
      ),
    setPasswordHash: (id, hash) =>
      sql`UPDATE users SET password_hash = ${hash} WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("UserStore.setPasswordHash")
      ),
    remove: (id) =>
      sql.withTransaction(
        sql`DELETE FROM password_tokens WHERE user_id = ${id}`.pipe(
          Effect.zipRight(sql`DELETE FROM users WHERE id = ${id} RETURNING id`)
        )
      ).pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("UserStore.remove")
      ),
    insertPasswordToken: (token) =>
      sql.withTransaction(
        sql`INSERT INTO password_tokens ${
          sql.insert({
            token_hash: token.tokenHash,
            user_id: token.userId,
            expires_at: millis(token.expiresAt),
            created_at: millis(token.createdAt)
          })
        }`.pipe(
          // The newest token of a user is the only one: earlier ones (and one issued in the same
          // millisecond) stop working. Tokens past their expiry are of no use to anyone: each new
          // token clears them too.
          Effect.zipRight(sql`DELETE FROM password_tokens
            WHERE (user_id = ${token.userId} AND token_hash <> ${token.tokenHash}
                AND created_at <= ${millis(token.createdAt)})
              OR expires_at <= ${millis(token.createdAt)}`)
        )
      ).pipe(Effect.asVoid, orPersistence("UserStore.insertPasswordToken")),
    consumePasswordToken: (hash, now) =>
      sql.withTransaction(
        // DELETE ... RETURNING takes the row once: a concurrent taker finds nothing to delete.
        sql`DELETE FROM password_tokens WHERE token_hash = ${hash} RETURNING user_id, expires_at`.pipe(
          Effect.flatMap(decodeTaken),
          Effect.map((taken) =>
            Option.filter(Arr.head(taken), (row) => DateTime.lessThan(now, row.expires_at)).pipe(
              Option.map((row) => row.user_id)
            )
          ),
          // A token used ends every other token of its user.
          Effect.tap(Option.match({
            onNone: () => Effect.void,
            onSome: (userId) => sql`DELETE FROM password_tokens WHERE user_id = ${userId}`
          }))
        )
      ).pipe(orPersistence("UserStore.consumePasswordToken"))
  })
})

export const layer: Layer.Layer<UserStore, never, SqlClient.SqlClient> = Layer.effect(UserStore, make)
