import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as PostListingSql from "../internal/PostListingSql.js"

/**
 * Postgres: a post's status follows a change of its draft flag or its schedule once per statement,
 * not once per row. The row-level trigger of `0033_post_listing` ran its refresh as a statement of its
 * own for every post an UPDATE touched, and each of those fired the statement-level rollup trigger on
 * `posts` (`0061`) again: rescheduling 10,000 posts in one statement took about a minute on a
 * 100k-post store. Now one statement-level trigger (transition tables) refreshes every post whose
 * `is_draft` or `scheduled_for` changed, in one UPDATE; it runs that UPDATE only when such a post
 * exists, so the refresh (which fires the trigger again, with no such change) does not recurse.
 * Transition tables cannot go with a column list, so the trigger fires for every UPDATE of `posts`
 * and looks at the changed columns itself. SQLite keeps its row-level trigger: it has no other kind,
 * and its per-row refresh is a key lookup in the same process.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        const changed = `SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
          WHERE o.is_draft IS DISTINCT FROM n.is_draft OR o.scheduled_for IS DISTINCT FROM n.scheduled_for`
        yield* sql`DROP TRIGGER posts_updated ON posts`
        yield* sql`DROP FUNCTION herald_post_updated()`
        // EXECUTE: planned at each run for the transition tables' real sizes (see 0078).
        yield* sql.unsafe(`CREATE FUNCTION herald_posts_updated() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
          BEGIN
            IF EXISTS (${changed}) THEN
              EXECUTE $q$${PostListingSql.refresh(`posts.id IN (${changed})`)}$q$;
            END IF;
            RETURN NULL;
          END $$`)
        yield* sql`CREATE TRIGGER posts_updated AFTER UPDATE ON posts
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
          EXECUTE FUNCTION herald_posts_updated()`
      }),
    orElse: () => Effect.void
  })
})
