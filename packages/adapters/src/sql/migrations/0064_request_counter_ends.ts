import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Postgres: `request_counters_by_end`, so the purge of rate-limit windows that ended over a day ago
 * (run on a key's first request of each minute) reads only those windows instead of every row of the
 * table (a day of minute and hour windows of every key). SQLite keeps these counters in memory.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`CREATE INDEX request_counters_by_end ON request_counters (window_end)`,
    orElse: () => Effect.void
  })
})
