import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The API-key rate-limit windows (`RequestCounters`) on Postgres: an UNLOGGED table, so counting a
 * request writes no WAL and its commit waits for no flush; a Postgres crash empties it (each key gets
 * its window's budget again). SQLite keeps these counters in the server's memory and has no table.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      sql`CREATE UNLOGGED TABLE request_counters (
        key TEXT NOT NULL,
        window_end BIGINT NOT NULL,
        count BIGINT NOT NULL,
        PRIMARY KEY (key, window_end)
      )`,
    orElse: () => Effect.void
  })
})
