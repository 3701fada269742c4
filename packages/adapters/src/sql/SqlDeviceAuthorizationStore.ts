import * as SqlClient from "@effect/sql/SqlClient"
import {
  DeviceAuthorization,
  DeviceAuthorizationId,
  DeviceAuthorizationStatus,
  DeviceAuthorizationStore
} from "@herald/core/access/DeviceAuthorizationStore"
import { ApiKeyId, OrganizationId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const column = <const K extends string, S extends Schema.Schema.Any>(key: K, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

export const DeviceAuthorizationRow = Schema.transform(
  Schema.Struct({
    id: DeviceAuthorizationId,
    deviceCodeHash: column("device_code_hash", Schema.String),
    userCodeHash: column("user_code_hash", Schema.String),
    clientName: column("client_name", Schema.OptionFromNullOr(Schema.String)),
    status: DeviceAuthorizationStatus,
    organizationId: column("organization_id", Schema.OptionFromNullOr(OrganizationId)),
    apiKeyId: column("api_key_id", Schema.OptionFromNullOr(ApiKeyId)),
    intervalSeconds: column("interval_seconds", Schema.compose(DbNumber, Schema.Int)),
    lastPolledAt: column("last_polled_at", Schema.OptionFromNullOr(Instant)),
    expiresAt: column("expires_at", Instant),
    decidedAt: column("decided_at", Schema.OptionFromNullOr(Instant)),
    createdAt: column("created_at", Instant)
  }),
  Schema.instanceOf(DeviceAuthorization),
  { strict: true, decode: (fields) => new DeviceAuthorization(fields, true), encode: (a) => a }
)

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(DeviceAuthorizationRow))
  const one = (operation: string) => <E, R>(self: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    self.pipe(Effect.flatMap(decode), Effect.map(Arr.head), orPersistence(operation))

  return DeviceAuthorizationStore.of({
    insert: (authorization) =>
      Schema.encode(DeviceAuthorizationRow)(authorization).pipe(
        Effect.flatMap((row) => sql`INSERT INTO device_authorizations ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("DeviceAuthorizationStore.insert")
      ),
    findByDeviceCodeHash: (hash) =>
      sql`SELECT * FROM device_authorizations WHERE device_code_hash = ${hash}`.pipe(
        one("DeviceAuthorizationStore.findByDeviceCodeHash")
      ),
    findByUserCodeHash: (hash) =>
      sql`SELECT * FROM device_authorizations WHERE user_code_hash = ${hash}`.pipe(
        one("DeviceAuthorizationStore.findByUserCodeHash")
      ),
    recordPoll: (id, at) =>
      sql`UPDATE device_authorizations SET last_polled_at = ${DateTime.toEpochMillis(at)} WHERE id = ${id}`.pipe(
        Effect.asVoid,
        orPersistence("DeviceAuthorizationStore.recordPoll")
      ),
    decide: (id, decision, at) => {
      const millis = DateTime.toEpochMillis(at)
      const organizationId = decision.status === "authorized" ? decision.organizationId : null
      return sql`UPDATE device_authorizations
        SET status = ${decision.status}, organization_id = ${organizationId}, decided_at = ${millis}
        WHERE id = ${id} AND status = 'pending' AND expires_at > ${millis} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("DeviceAuthorizationStore.decide")
      )
    },
    purgeExpired: (before) =>
      sql`DELETE FROM device_authorizations WHERE expires_at < ${DateTime.toEpochMillis(before)} RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("DeviceAuthorizationStore.purgeExpired")
      ),
    consume: (id, apiKeyId, _at) =>
      sql`UPDATE device_authorizations SET status = 'consumed', api_key_id = ${apiKeyId}
        WHERE id = ${id} AND status = 'authorized' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("DeviceAuthorizationStore.consume")
      )
  })
})

export const layer: Layer.Layer<DeviceAuthorizationStore, never, SqlClient.SqlClient> = Layer.effect(
  DeviceAuthorizationStore,
  make
)
