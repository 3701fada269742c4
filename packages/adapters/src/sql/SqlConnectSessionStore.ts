import * as SqlClient from "@effect/sql/SqlClient"
import {
  ConnectSession,
  ConnectSessionId,
  ConnectSessionStore,
  StoredSessionStatus
} from "@herald/core/accounts/ConnectSessionStore"
import { AccountId, OrganizationId } from "@herald/core/kernel/Ids"
import { OAuthPlatform } from "@herald/core/domain/Platform"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const column = <const K extends string, S extends Schema.Schema.Any>(key: K, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

const DbAccountId = Schema.compose(DbNumber, AccountId)

export const ConnectSessionRow = Schema.transform(
  Schema.Struct({
    id: ConnectSessionId,
    organizationId: column("organization_id", OrganizationId),
    platform: OAuthPlatform,
    nonce: Schema.String,
    reconnectAccountId: column("reconnect_account_id", Schema.OptionFromNullOr(DbAccountId)),
    status: StoredSessionStatus,
    accountId: column("account_id", Schema.OptionFromNullOr(DbAccountId)),
    reason: Schema.OptionFromNullOr(Schema.String),
    expiresAt: column("expires_at", Instant),
    settledAt: column("settled_at", Schema.OptionFromNullOr(Instant)),
    createdAt: column("created_at", Instant)
  }),
  Schema.instanceOf(ConnectSession),
  { strict: true, decode: (fields) => new ConnectSession(fields, true), encode: (s) => s }
)

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(ConnectSessionRow))

  return ConnectSessionStore.of({
    insert: (session) =>
      Schema.encode(ConnectSessionRow)(session).pipe(
        Effect.flatMap((row) => sql`INSERT INTO connect_sessions ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("ConnectSessionStore.insert")
      ),
    findById: (organizationId, id) =>
      sql`SELECT * FROM connect_sessions WHERE id = ${id} AND organization_id = ${organizationId}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("ConnectSessionStore.findById")
      ),
    purgeExpired: (before) =>
      sql`DELETE FROM connect_sessions WHERE expires_at < ${DateTime.toEpochMillis(before)} RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("ConnectSessionStore.purgeExpired")
      ),
    settle: (nonce, outcome, at) => {
      const accountId = outcome.status === "completed" ? outcome.accountId : null
      const reason = outcome.status === "cancelled" ? outcome.reason : null
      return sql`UPDATE connect_sessions
        SET status = ${outcome.status}, account_id = ${accountId}, reason = ${reason},
          settled_at = ${DateTime.toEpochMillis(at)}
        WHERE nonce = ${nonce} AND status = 'pending' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("ConnectSessionStore.settle")
      )
    }
  })
})

export const layer: Layer.Layer<ConnectSessionStore, never, SqlClient.SqlClient> = Layer.effect(
  ConnectSessionStore,
  make
)
