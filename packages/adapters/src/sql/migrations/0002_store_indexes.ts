import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * What the stores need beyond the foundation:
 * - `post_targets`: one row per account in a post's `account_ids`, kept by the post store, so the
 *   post list can filter drafts (which have no destinations) by account, platform and visibility
 *   with plain joins instead of dialect-specific JSON functions.
 * - `events.seq` on Postgres: the append order, so events of one instant list in the order they
 *   were appended (SQLite has `rowid` for this).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE post_targets (
    post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL,
    PRIMARY KEY (post_id, account_id)
  )`
  yield* sql`CREATE INDEX post_targets_by_account ON post_targets (account_id)`
  yield* sql.onDialectOrElse({
    pg: () => sql`ALTER TABLE events ADD COLUMN seq BIGSERIAL`.pipe(Effect.asVoid),
    orElse: () => Effect.void
  })
})
