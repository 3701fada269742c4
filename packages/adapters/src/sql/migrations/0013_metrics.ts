import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The metrics sweep's columns on `destinations` (`MetricsSweep` in core):
 * - `metrics_fetched_at`: when `metrics` were last fetched from the platform (NULL: never).
 * - `metrics_step`: how many steps of the decaying schedule are done (0 before the first fetch).
 * - `next_metrics_at`: when the next fetch is due; NULL before the first, which is then due at
 *   `published_at` plus the schedule's first delay. A claim moves it to the end of its short lease, so
 *   a process that dies mid-fetch leaves the destination to be claimed again after the lease.
 * - `metrics_lease`: the token of the claim holding the destination, which fences its write.
 * The index covers the published destinations the sweep reads.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE destinations ADD COLUMN metrics_fetched_at BIGINT`
  yield* sql`ALTER TABLE destinations ADD COLUMN metrics_step INTEGER NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE destinations ADD COLUMN next_metrics_at BIGINT`
  yield* sql`ALTER TABLE destinations ADD COLUMN metrics_lease TEXT`
  yield* sql`CREATE INDEX destinations_metrics_due ON destinations (platform, next_metrics_at, published_at)
    WHERE status = 'published'`
})
