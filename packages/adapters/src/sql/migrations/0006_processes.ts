import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The process table (`ProcessStore` in core): every `herald serve` and `herald worker` registers a row
 * and heartbeats it, so a dead process is noticed in seconds (its heartbeat goes stale) rather than
 * when a long lease runs out.
 * - `destinations.claimed_at`: when the attempt in flight was claimed, the start of the window in
 *   which a platform is asked whether an abandoned attempt reached it.
 * - `destinations_by_holder`: the in-flight destinations of one process, to take over a dead one's.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE processes (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    hostname TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at BIGINT NOT NULL,
    last_heartbeat_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX processes_by_heartbeat ON processes (last_heartbeat_at)`
  yield* sql`ALTER TABLE destinations ADD COLUMN claimed_at BIGINT`
  yield* sql`CREATE INDEX destinations_by_holder ON destinations (leased_by) WHERE status = 'publishing'`
})
