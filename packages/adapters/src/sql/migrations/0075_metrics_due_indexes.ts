import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The metrics sweep's claim (`SqlMetricsStore`) as index range scans. A published destination is due
 * for metrics when its next fetch is due (`next_metrics_at <= now`) or, never scheduled yet
 * (`next_metrics_at IS NULL`, schedule not finished), when its first delay has passed since
 * `published_at`. As one OR ordered by `COALESCE(next_metrics_at, published_at)` the claim could not
 * use `destinations_metrics_due (platform, next_metrics_at, published_at)` for more than the platform:
 * it read every published destination of the platform (those whose schedule ended included, most of
 * a year-old store) and sorted them. The claim now reads each case from its own index, in its order:
 * - `destinations_metrics_next`: scheduled fetches, `(platform, next_metrics_at, id)` over the rows that
 *   have one (a few days of publishes, not the whole store);
 * - `destinations_metrics_first`: never scheduled, `(platform, metrics_step, published_at, id)`; the
 *   claim's `metrics_step < steps` range skips the destinations whose schedule ended.
 * Together they hold the same rows as the index they replace.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX destinations_metrics_next ON destinations (platform, next_metrics_at, id)
    WHERE status = 'published' AND next_metrics_at IS NOT NULL`
  yield* sql`CREATE INDEX destinations_metrics_first ON destinations (platform, metrics_step, published_at, id)
    WHERE status = 'published' AND next_metrics_at IS NULL`
  yield* sql`DROP INDEX destinations_metrics_due`
})
