import * as SqlClient from "@effect/sql/SqlClient"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ApiKey } from "@herald/core/access/ApiKey"
import { ApiKeyId } from "@herald/core/kernel/Ids"
import * as ReadCache from "./internal/ReadCache.js"
import { withVersion } from "./internal/ReadCache.js"
import { ApiKeyRow, Instant, orPersistence } from "./internal/Rows.js"

export const make = Effect.gen(function*() {
  const client = yield* SqlClient.SqlClient
  const sql = client.withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(ApiKeyRow))
  const decodeLastUsed = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: ApiKeyId, last_used_at: Instant })))
  // Every authenticated request looks its key up by hash: served from memory for up to 250 ms, and
  // emptied by this store's own writes (a revocation here is seen at once; see ReadCache.ts).
  const byHash = ReadCache.make<string, Option.Option<ApiKey>>({ keep: Option.isSome, ...withVersion(client) })

  return ApiKeyStore.of({
    insert: (key) =>
      Schema.encode(ApiKeyRow)(key).pipe(
        Effect.flatMap((row) => sql`INSERT INTO api_keys ${sql.insert(row)}`),
        Effect.zipRight(byHash.invalidate),
        orPersistence("ApiKeyStore.insert")
      ),
    findByHash: (hash) =>
      byHash.get(
        hash,
        () =>
          sql`SELECT * FROM api_keys WHERE hash = ${hash}`.pipe(
            Effect.flatMap(decode),
            Effect.map(Arr.head),
            orPersistence("ApiKeyStore.findByHash")
          )
      ),
    findById: (id) =>
      sql`SELECT * FROM api_keys WHERE id = ${id}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("ApiKeyStore.findById")
      ),
    list: (organizationId) =>
      Option.match(organizationId, {
        onNone: () => sql`SELECT * FROM api_keys ORDER BY created_at, id`,
        onSome: (id) => sql`SELECT * FROM api_keys WHERE organization_id = ${id} ORDER BY created_at, id`
      }).pipe(Effect.flatMap(decode), orPersistence("ApiKeyStore.list")),
    revoke: (id, at) =>
      sql`UPDATE api_keys SET revoked_at = ${DateTime.toEpochMillis(at)}
        WHERE id = ${id} AND revoked_at IS NULL RETURNING id`.pipe(
        Effect.ensuring(byHash.invalidate),
        Effect.map((rows) => rows.length > 0),
        orPersistence("ApiKeyStore.revoke")
      ),
    markUsed: (id, at) =>
      sql`UPDATE api_keys SET last_used_at = ${DateTime.toEpochMillis(at)}
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${DateTime.toEpochMillis(at)})`.pipe(
        Effect.asVoid,
        orPersistence("ApiKeyStore.markUsed")
      ),
    lastUsed: (organizationId) =>
      sql`SELECT id, last_used_at FROM api_keys
        WHERE organization_id = ${organizationId} AND last_used_at IS NOT NULL`.pipe(
        Effect.flatMap(decodeLastUsed),
        Effect.map((rows) => new Map(rows.map((row) => [row.id, row.last_used_at] as const))),
        orPersistence("ApiKeyStore.lastUsed")
      )
  })
})

export const layer: Layer.Layer<ApiKeyStore, never, SqlClient.SqlClient> = Layer.effect(ApiKeyStore, make)
