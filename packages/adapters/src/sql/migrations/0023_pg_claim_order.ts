import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Postgres: the claim's order as an index. `claimDue` takes queued destinations ORDER BY due_at, id
 * LIMIT n FOR UPDATE SKIP LOCKED; with `destinations_due (due_at)` alone Postgres read and sorted
 * EVERY due row to find the first n (10,000 due in one second: a sequential scan and a sort of 10,000
 * rows per claim, ~10-30 ms of Postgres CPU each). `(due_at, id)` over the queued rows gives the order
 * itself: the claim reads n index entries. It also serves `nextDueAt` (MIN(due_at) of queued rows),
 * so the narrower index is dropped (one index less to maintain on every claim and completion).
 * SQLite is left as it is.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.zipRight(
        sql`CREATE INDEX destinations_due_order ON destinations (due_at, id) WHERE status = 'queued'`,
        sql`DROP INDEX destinations_due`
      ),
    orElse: () => Effect.void
  })
})
