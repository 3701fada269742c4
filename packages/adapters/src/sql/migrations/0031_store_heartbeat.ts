import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `store_heartbeat`: one row that readiness (`GET /health/ready`, `GET /health`) updates to learn
 * whether the store can still be written (a full disk, a read-only file or a read-only standby answer
 * reads but refuse writes), not only whether it answers a query.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE store_heartbeat (id INTEGER PRIMARY KEY, beat_at BIGINT NOT NULL)`
  yield* sql`INSERT INTO store_heartbeat (id, beat_at) VALUES (1, 0)`
})
