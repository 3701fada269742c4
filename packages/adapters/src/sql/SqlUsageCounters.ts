import * as SqlClient from "@effect/sql/SqlClient"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { CountRow, orPersistence } from "./internal/Rows.js"

const decode = Schema.decodeUnknown(Schema.Array(CountRow))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const skipLocked = sql.onDialectOrElse({
    pg: () => sql.literal("FOR UPDATE SKIP LOCKED"),
    orElse: () => sql.literal("")
  })

  return UsageCounters.of({
    // One atomic upsert: concurrent increments of one window serialize on its row.
    increment: (key, windowEnd, amount) =>
      sql`INSERT INTO usage_counters (key, window_end, count)
        VALUES (${key}, ${DateTime.toEpochMillis(windowEnd)}, ${amount})
        ON CONFLICT (key, window_end) DO UPDATE SET count = usage_counters.count + excluded.count
        RETURNING count`.pipe(
        Effect.flatMap(decode),
        Effect.map((rows) => rows[0]?.count ?? 0),
        orPersistence("UsageCounters.increment")
      ),
    get: (key, windowEnd) =>
      sql`SELECT count FROM usage_counters WHERE key = ${key} AND window_end = ${DateTime.toEpochMillis(windowEnd)}`
        .pipe(
          Effect.flatMap(decode),
          Effect.map((rows) => rows[0]?.count ?? 0),
          orPersistence("UsageCounters.get")
        ),
    // One batch of ended windows by `usage_counters_by_end`, oldest first. On Postgres a window whose
    // row another transaction holds (a settlement's lock row, an increment in flight) is skipped, not
    // waited for: it goes in a later batch.
    purge: (before, limit) =>
      limit <= 0 ? Effect.succeed(0) : sql`DELETE FROM usage_counters WHERE (key, window_end) IN (
          SELECT key, window_end FROM usage_counters WHERE window_end < ${DateTime.toEpochMillis(before)}
          ORDER BY window_end LIMIT ${Math.trunc(limit)} ${skipLocked}
        ) RETURNING window_end`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("UsageCounters.purge")
      )
  })
})

export const layer: Layer.Layer<UsageCounters, never, SqlClient.SqlClient> = Layer.effect(UsageCounters, make)
