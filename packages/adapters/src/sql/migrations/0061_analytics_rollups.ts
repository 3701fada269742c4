import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import {
  applyDestinations,
  applyPosts,
  countedDestinationColumns,
  countedPostColumns,
  metricNames
} from "../internal/AnalyticsRollupSql.js"

/**
 * Daily and monthly aggregates of posts and destinations per organization (`AnalyticsRollupSql`),
 * kept by triggers on `posts` and `destinations` in the transaction of every write (the API's, the
 * dispatcher's, the metrics sweep's), and backfilled here from the existing rows. Analytics, `/me`
 * and the post list's total read them instead of counting every post.
 *
 * No foreign key to `organizations`: an organization's deletion cascades to its posts, whose
 * triggers still write (and leave) rows for it, which nothing reads.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dialect = yield* sql.onDialectOrElse({
    pg: () => Effect.succeed("pg" as const),
    orElse: () => Effect.succeed("sqlite" as const)
  })
  yield* sql`CREATE TABLE post_rollups (
    organization_id TEXT NOT NULL,
    grain TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    status TEXT NOT NULL,
    posts BIGINT NOT NULL,
    PRIMARY KEY (organization_id, grain, bucket, status)
  )`
  yield* sql.unsafe(`CREATE TABLE destination_rollups (
    organization_id TEXT NOT NULL,
    grain TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    platform TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    destinations BIGINT NOT NULL,
    ${metricNames.map((m) => `${m} BIGINT NOT NULL`).join(",\n    ")},
    PRIMARY KEY (organization_id, grain, bucket, platform, account_id, status)
  )`)

  // Postgres's triggers append here (`AnalyticsRollupSql.Target`); SQLite's leave them empty.
  yield* sql`CREATE TABLE post_rollup_deltas (
    organization_id TEXT NOT NULL,
    grain TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    status TEXT NOT NULL,
    posts BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX post_rollup_deltas_by_bucket ON post_rollup_deltas (organization_id, grain, bucket)`
  yield* sql.unsafe(`CREATE TABLE destination_rollup_deltas (
    organization_id TEXT NOT NULL,
    grain TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    platform TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    destinations BIGINT NOT NULL,
    ${metricNames.map((m) => `${m} BIGINT NOT NULL`).join(",\n    ")}
  )`)
  yield* sql`CREATE INDEX destination_rollup_deltas_by_bucket ON destination_rollup_deltas (organization_id, grain, bucket)`

  // Backfill: every existing post and destination, as one insert each.
  yield* sql.unsafe(applyPosts(dialect, [{ from: "posts r", sign: 1 }]))
  yield* sql.unsafe(applyDestinations(dialect, [{ from: "destinations r", sign: 1 }]))

  if (dialect === "pg") {
    // Statement-level, with transition tables: a batch of the dispatcher or the sweep is one insert,
    // appended to the deltas (no rollup row locked by a writer; `AnalyticsRollupSql.foldDeltas`).
    const fn = (name: string, body: string) =>
      sql.unsafe(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          ${body};
          RETURN NULL;
        END $$`)
    /** `r` changed a counted column against its other version `other` (the same id). */
    const moved = (columns: ReadonlyArray<string>, other: string) =>
      `${other}.id = r.id AND (${columns.map((c) => `${other}.${c} IS DISTINCT FROM r.${c}`).join(" OR ")})`
    yield* fn("herald_post_rollups_inserted", applyPosts(dialect, [{ from: "new_rows r", sign: 1 }], "deltas"))
    yield* fn("herald_post_rollups_deleted", applyPosts(dialect, [{ from: "old_rows r", sign: -1 }], "deltas"))
    yield* fn(
      "herald_post_rollups_updated",
      applyPosts(dialect, [
        { from: "old_rows r JOIN new_rows n ON true", sign: -1, where: moved(countedPostColumns, "n") },
        { from: "new_rows r JOIN old_rows o ON true", sign: 1, where: moved(countedPostColumns, "o") }
      ], "deltas")
    )
    yield* fn(
      "herald_destination_rollups_inserted",
      applyDestinations(dialect, [{ from: "new_rows r", sign: 1 }], "deltas")
    )
    yield* fn(
      "herald_destination_rollups_deleted",
      applyDestinations(dialect, [{ from: "old_rows r", sign: -1 }], "deltas")
    )
    yield* fn(
      "herald_destination_rollups_updated",
      applyDestinations(dialect, [
        { from: "old_rows r JOIN new_rows n ON true", sign: -1, where: moved(countedDestinationColumns, "n") },
        { from: "new_rows r JOIN old_rows o ON true", sign: 1, where: moved(countedDestinationColumns, "o") }
      ], "deltas")
    )
    yield* sql`CREATE TRIGGER post_rollups_inserted AFTER INSERT ON posts
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_post_rollups_inserted()`
    yield* sql`CREATE TRIGGER post_rollups_deleted AFTER DELETE ON posts
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_post_rollups_deleted()`
    yield* sql`CREATE TRIGGER post_rollups_updated AFTER UPDATE ON posts
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
      EXECUTE FUNCTION herald_post_rollups_updated()`
    yield* sql`CREATE TRIGGER destination_rollups_inserted AFTER INSERT ON destinations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_destination_rollups_inserted()`
    yield* sql`CREATE TRIGGER destination_rollups_deleted AFTER DELETE ON destinations
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_destination_rollups_deleted()`
    yield* sql`CREATE TRIGGER destination_rollups_updated AFTER UPDATE ON destinations
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
      EXECUTE FUNCTION herald_destination_rollups_updated()`
  } else {
    // Row-level: NEW and OLD as one-row sources.
    const newPost =
      `(SELECT NEW.organization_id AS organization_id, NEW.created_at AS created_at, NEW.status AS status) r`
    const oldPost =
      `(SELECT OLD.organization_id AS organization_id, OLD.created_at AS created_at, OLD.status AS status) r`
    const destinationRow = (row: "NEW" | "OLD") =>
      `(SELECT ${row}.organization_id AS organization_id, ${row}.post_id AS post_id, ${row}.platform AS platform,
        ${row}.account_id AS account_id, ${row}.status AS status, ${row}.metrics AS metrics) r`
    const trigger = (name: string, on: string, body: ReadonlyArray<string>) =>
      sql.unsafe(`CREATE TRIGGER ${name} ${on} BEGIN
        ${body.map((s) => `${s};`).join("\n")}
      END`)
    const moved = (columns: ReadonlyArray<string>) => columns.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(" OR ")
    yield* trigger("post_rollups_inserted", "AFTER INSERT ON posts", [
      applyPosts(dialect, [{ from: newPost, sign: 1 }])
    ])
    yield* trigger("post_rollups_deleted", "AFTER DELETE ON posts", [
      applyPosts(dialect, [{ from: oldPost, sign: -1 }])
    ])
    yield* trigger(
      "post_rollups_updated",
      `AFTER UPDATE OF ${countedPostColumns.join(", ")} ON posts WHEN ${moved(countedPostColumns)}`,
      [applyPosts(dialect, [{ from: oldPost, sign: -1 }, { from: newPost, sign: 1 }])]
    )
    yield* trigger("destination_rollups_inserted", "AFTER INSERT ON destinations", [
      applyDestinations(dialect, [{ from: destinationRow("NEW"), sign: 1 }])
    ])
    yield* trigger("destination_rollups_deleted", "AFTER DELETE ON destinations", [
      applyDestinations(dialect, [{ from: destinationRow("OLD"), sign: -1 }])
    ])
    yield* trigger(
      "destination_rollups_updated",
      `AFTER UPDATE OF ${countedDestinationColumns.join(", ")} ON destinations WHEN ${
        moved(countedDestinationColumns)
      }`,
      [applyDestinations(dialect, [{ from: destinationRow("OLD"), sign: -1 }, {
        from: destinationRow("NEW"),
        sign: 1
      }])]
    )
  }
})
