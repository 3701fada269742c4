import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * What the housekeeping sweeps read (`Housekeeping` in core):
 * - `media_pending`: the media still `pending_upload`, oldest first, so the sweep of abandoned
 *   uploads reads only those (a small partial index) instead of every medium.
 * - `webhook_deliveries_finished`: finished deliveries (delivered or dead) by when they finished, so
 *   the history pruning reads only what is past the retention period.
 * - `webhook_attempts_by_delivery`: a pruned delivery's attempts are deleted by delivery id (and
 *   Postgres checks the foreign key from the attempts when a delivery is deleted).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX media_pending ON media (created_at) WHERE status = 'pending_upload'`
  yield* sql`CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at)
    WHERE status IN ('delivered', 'dead')`
  yield* sql`CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id)`
})
