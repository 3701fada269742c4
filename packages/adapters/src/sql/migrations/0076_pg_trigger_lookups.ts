import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { applyDestinations, countedDestinationColumns } from "../internal/AnalyticsRollupSql.js"

/**
 * Postgres: the statement-level triggers on `destinations` cost what their rows cost, not what the
 * store holds.
 * - The destination rollup triggers (`0061_analytics_rollups`) find each changed destination's post
 *   by its primary key (`AnalyticsRollupSql.PostLookup` "lookup"). Joined, the planner hashed every
 *   post of the store for each claim and each recording of the dispatcher (EXPLAIN ANALYZE of a
 *   status change of 1,533 destinations on a 30k-post store: two sequential scans of 30,001 posts,
 *   ~80 ms each).
 * - No JIT compilation inside the maintained-status and rollup triggers: their statements' estimates
 *   (transition tables without statistics, a correlated aggregate per post) passed the JIT thresholds
 *   for a write of a thousand destinations, and compiling took 1.3 s of a 2 s statement that runs
 *   in 0.4 s without it. Set per function, so other statements keep the server's setting.
 * SQLite's row-level triggers already look the post up by its key.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        const fn = (name: string, body: string) =>
          sql.unsafe(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              ${body};
              RETURN NULL;
            END $$`)
        const moved = (other: string) =>
          `${other}.id = r.id AND (${
            countedDestinationColumns.map((c) => `${other}.${c} IS DISTINCT FROM r.${c}`).join(" OR ")
          })`
        yield* fn(
          "herald_destination_rollups_inserted",
          applyDestinations("pg", [{ from: "new_rows r", sign: 1 }], "deltas", "lookup")
        )
        yield* fn(
          "herald_destination_rollups_deleted",
          applyDestinations("pg", [{ from: "old_rows r", sign: -1 }], "deltas", "lookup")
        )
        yield* fn(
          "herald_destination_rollups_updated",
          applyDestinations(
            "pg",
            [
              { from: "old_rows r JOIN new_rows n ON true", sign: -1, where: moved("n") },
              { from: "new_rows r JOIN old_rows o ON true", sign: 1, where: moved("o") }
            ],
            "deltas",
            "lookup"
          )
        )
        for (
          const name of [
            "herald_destinations_inserted",
            "herald_destinations_deleted",
            "herald_destinations_updated",
            "herald_post_updated",
            "herald_post_rollups_inserted",
            "herald_post_rollups_deleted",
            "herald_post_rollups_updated",
            "herald_destination_rollups_inserted",
            "herald_destination_rollups_deleted",
            "herald_destination_rollups_updated"
          ]
        ) {
          yield* sql.unsafe(`ALTER FUNCTION ${name}() SET jit = off`)
        }
      }),
    orElse: () => Effect.void
  })
})
