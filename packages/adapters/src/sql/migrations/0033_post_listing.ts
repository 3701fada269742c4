import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as PostListingSql from "../internal/PostListingSql.js"

/**
 * The post list, `/me` and analytics read indexes, not aggregates of every destination:
 * - `posts.status` and `posts.last_published_at`, derived from the post's destinations
 *   (`PostListingSql`), kept by triggers on `destinations` (insert, delete, change of status,
 *   published_at or post) and on `posts` (insert, change of is_draft or scheduled_for), so every
 *   write path keeps them in its own transaction; existing rows are backfilled here;
 * - indexes for the filters and sorts: by status, by approval, by latest publish; the created order
 *   ends with `id` (the list's tie-break) so a page and a deep offset are walks of one index;
 * - the failed destinations of an organization (retry-failed's selection), as a partial index;
 * - content search through the store's own text index: on SQLite an FTS5 table with the trigram
 *   tokenizer (`posts_search`, contentless, keyed by the post's rowid, kept by triggers); on Postgres
 *   a pg_trgm GIN index over `content`, which answers the list's ILIKE itself (when the pg_trgm
 *   extension is available to the server; otherwise search stays a scan).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE posts ADD COLUMN status TEXT NOT NULL DEFAULT 'scheduled'`
  yield* sql`ALTER TABLE posts ADD COLUMN last_published_at BIGINT`
  yield* sql.unsafe(PostListingSql.refresh("1 = 1"))

  yield* sql`DROP INDEX posts_by_created`
  yield* sql`CREATE INDEX posts_by_created ON posts (organization_id, created_at, id)`
  yield* sql`CREATE INDEX posts_by_status ON posts (organization_id, status, created_at, id)`
  yield* sql`CREATE INDEX posts_by_approval ON posts (organization_id, approval_status, created_at, id)`
  yield* sql`CREATE INDEX posts_by_published ON posts (organization_id, last_published_at, id)`
  // retry-failed's selection: the organization's failed destinations only.
  yield* sql`CREATE INDEX destinations_failed ON destinations (organization_id, platform) WHERE status = 'failed'`

  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        // Statement-level for destinations: a dispatch batch refreshes its posts in one UPDATE.
        yield* sql.unsafe(`CREATE FUNCTION herald_destinations_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${PostListingSql.refresh("posts.id IN (SELECT post_id FROM new_rows)")};
            RETURN NULL;
          END $$`)
        yield* sql.unsafe(`CREATE FUNCTION herald_destinations_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${PostListingSql.refresh("posts.id IN (SELECT post_id FROM old_rows)")};
            RETURN NULL;
          END $$`)
        yield* sql.unsafe(`CREATE FUNCTION herald_destinations_updated() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${
          PostListingSql.refresh(`posts.id IN (
              SELECT n.post_id FROM new_rows n JOIN old_rows o ON o.id = n.id
              WHERE n.status IS DISTINCT FROM o.status OR n.published_at IS DISTINCT FROM o.published_at
                OR n.post_id IS DISTINCT FROM o.post_id
              UNION SELECT o.post_id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.post_id IS DISTINCT FROM o.post_id)`)
        };
            RETURN NULL;
          END $$`)
        yield* sql`CREATE TRIGGER destinations_inserted AFTER INSERT ON destinations
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_destinations_inserted()`
        yield* sql`CREATE TRIGGER destinations_deleted AFTER DELETE ON destinations
          REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_destinations_deleted()`
        yield* sql`CREATE TRIGGER destinations_updated AFTER UPDATE ON destinations
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
          EXECUTE FUNCTION herald_destinations_updated()`
        // A new post has no destinations yet (they reference it): its status follows from its own row.
        yield* sql.unsafe(`CREATE FUNCTION herald_post_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            NEW.status := CASE WHEN NEW.is_draft = 1 THEN 'draft' ELSE 'scheduled' END;
            RETURN NEW;
          END $$`)
        yield* sql`CREATE TRIGGER posts_inserted BEFORE INSERT ON posts
          FOR EACH ROW EXECUTE FUNCTION herald_post_inserted()`
        yield* sql.unsafe(`CREATE FUNCTION herald_post_updated() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${PostListingSql.refresh("posts.id = NEW.id")};
            RETURN NULL;
          END $$`)
        yield* sql`CREATE TRIGGER posts_updated AFTER UPDATE OF is_draft, scheduled_for ON posts
          FOR EACH ROW WHEN (OLD.is_draft IS DISTINCT FROM NEW.is_draft OR OLD.scheduled_for IS DISTINCT FROM NEW.scheduled_for)
          EXECUTE FUNCTION herald_post_updated()`
        const trgm = yield* sql`SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'`
        if (trgm.length > 0) {
          yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
          yield* sql`CREATE INDEX posts_content_trgm ON posts USING gin (content gin_trgm_ops)`
        }
      }),
    orElse: () =>
      Effect.gen(function*() {
        yield* sql`CREATE TRIGGER destinations_inserted AFTER INSERT ON destinations BEGIN
          ${sql.literal(PostListingSql.refresh("posts.id = NEW.post_id"))};
        END`
        yield* sql`CREATE TRIGGER destinations_deleted AFTER DELETE ON destinations BEGIN
          ${sql.literal(PostListingSql.refresh("posts.id = OLD.post_id"))};
        END`
        yield* sql`CREATE TRIGGER destinations_updated AFTER UPDATE OF status, published_at, post_id ON destinations
          WHEN OLD.status IS NOT NEW.status OR OLD.published_at IS NOT NEW.published_at OR OLD.post_id IS NOT NEW.post_id
        BEGIN
          ${sql.literal(PostListingSql.refresh("posts.id IN (NEW.post_id, OLD.post_id)"))};
        END`
        yield* sql`CREATE TRIGGER posts_inserted AFTER INSERT ON posts WHEN NEW.is_draft = 1 BEGIN
          UPDATE posts SET status = 'draft' WHERE rowid = NEW.rowid;
        END`
        yield* sql`CREATE TRIGGER posts_updated AFTER UPDATE OF is_draft, scheduled_for ON posts
          WHEN OLD.is_draft IS NOT NEW.is_draft OR OLD.scheduled_for IS NOT NEW.scheduled_for
        BEGIN
          ${sql.literal(PostListingSql.refresh("posts.id = NEW.id"))};
        END`
        // Contentless (the text is in `posts`), rowids are the posts' rowids, `post_id` kept beside.
        yield* sql`CREATE VIRTUAL TABLE posts_search USING fts5(post_id UNINDEXED, content, content='',
          contentless_delete=1, contentless_unindexed=1, tokenize='trigram')`
        yield* sql`INSERT INTO posts_search (rowid, post_id, content) SELECT rowid, id, content FROM posts`
        yield* sql`CREATE TRIGGER posts_search_inserted AFTER INSERT ON posts BEGIN
          INSERT OR REPLACE INTO posts_search (rowid, post_id, content) VALUES (NEW.rowid, NEW.id, NEW.content);
        END`
        yield* sql`CREATE TRIGGER posts_search_updated AFTER UPDATE OF content ON posts
          WHEN OLD.content IS NOT NEW.content
        BEGIN
          DELETE FROM posts_search WHERE rowid = OLD.rowid;
          INSERT OR REPLACE INTO posts_search (rowid, post_id, content) VALUES (NEW.rowid, NEW.id, NEW.content);
        END`
        yield* sql`CREATE TRIGGER posts_search_deleted AFTER DELETE ON posts BEGIN
          DELETE FROM posts_search WHERE rowid = OLD.rowid;
        END`
      })
  })
})
