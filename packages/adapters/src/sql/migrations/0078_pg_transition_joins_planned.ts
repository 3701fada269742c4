import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * Postgres: the trigger functions that join a statement's old and new rows (transition tables) plan
 * that join at each run, for the rows the statement changed. PL/pgSQL keeps the plan of a static
 * statement for the session, made at its first run: a first run on a handful of rows (estimated as
 * one) planned a nested loop over the two tables, which later compared every old row with every new
 * one: rescheduling 2,000 posts after a small destination change spent 1.2 s in 4,000,000
 * comparisons (auto_explain, "Rows Removed by Join Filter: 4000000"), 10,000 posts about a minute.
 * Run through EXECUTE, the statement is planned each time (a fraction of a millisecond) with the
 * tables' real sizes: a hash or merge join. Each function's statement is taken from its current
 * definition, so what it computes does not change; `jit = off` is kept (`0076`).
 */
const functions = ["herald_destinations_updated", "herald_post_rollups_updated", "herald_destination_rollups_updated"]

const Source = Schema.Struct({ prosrc: Schema.String })

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.forEach(functions, (name) =>
        Effect.gen(function*() {
          const rows = yield* sql`SELECT prosrc FROM pg_proc WHERE proname = ${name}`
          const { prosrc } = yield* Schema.decodeUnknown(Source)(rows[0])
          const match = /^\s*BEGIN\s+([\s\S]*?);\s*RETURN NULL;\s*END\s*$/.exec(prosrc)
          if (match === null || match[1]!.includes("$q$")) {
            return yield* Effect.dieMessage(`${name}: not the single statement this migration rewrites`)
          }
          yield* sql.unsafe(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
            BEGIN
              EXECUTE $q$${match[1]}$q$;
              RETURN NULL;
            END $$`)
        }), { discard: true }),
    orElse: () => Effect.void
  })
})
