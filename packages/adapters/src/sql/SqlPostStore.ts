import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import type { Destination } from "@herald/core/domain/Destination"
import type { AccountId, PostId } from "@herald/core/kernel/Ids"
import { type Post, PostStatus } from "@herald/core/domain/Post"
import { PostStore } from "@herald/core/posts/PostStore"
import type { PostCount, PostCursor, PostQuery, PostRecord, PostSort, RequeueQuery } from "@herald/core/posts/PostStore"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FastRows from "./internal/FastRows.js"
import * as PgPrepared from "./internal/PgPrepared.js"
import { CountRow, DestinationRow, encodePost, orPersistence, PostRow } from "./internal/Rows.js"
import * as RollupSql from "./internal/AnalyticsRollupSql.js"
import { visibleThrough } from "./internal/PostVisibilitySql.js"

/** Escapes LIKE wildcards so a search term matches literally (used with `ESCAPE '\'`). */
export const likePattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const sortColumns: Record<PostSort, string> = {
  created_at: "l.created_at",
  scheduled_for: "l.scheduled_for",
  updated_at: "l.updated_at",
  published_at: "l.last_published_at"
}

/**
 * A search term the SQLite trigram index can answer: three characters or more (its trigrams), as one
 * FTS5 phrase (double quotes doubled).
 */
const trigramPhrase = (term: string): string | undefined =>
  [...term].length >= 3 ? `"${term.replace(/"/g, "\"\"")}"` : undefined

/** Destinations in the order of the post's `account_ids`, then by creation. */
const orderDestinations = (post: Post, destinations: ReadonlyArray<Destination>): ReadonlyArray<Destination> => {
  const position = (accountId: AccountId) => {
    const i = post.accountIds.indexOf(accountId)
    return i === -1 ? Number.MAX_SAFE_INTEGER : i
  }
  return [...destinations].sort((a, b) => position(a.accountId) - position(b.accountId))
}

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decodePosts = FastRows.decodeRows(FastRows.post, Schema.decodeUnknown(Schema.Array(PostRow)))
  const decodeDestinations = FastRows.decodeRows(
    FastRows.destination,
    Schema.decodeUnknown(Schema.Array(DestinationRow))
  )
  const encodeDestinations = Schema.encode(Schema.Array(DestinationRow))
  const decodeCount = Schema.decodeUnknown(Schema.Array(CountRow))

  const insertDestinations = (destinations: ReadonlyArray<Destination>) =>
    destinations.length === 0
      ? Effect.void
      : encodeDestinations(destinations).pipe(
        Effect.flatMap((rows) => sql`INSERT INTO destinations ${sql.insert(rows.map((row) => ({ ...row })))}`),
        Effect.asVoid
      )

  const insertTargets = (post: Post) => {
    const accountIds = Arr.dedupe(post.accountIds)
    return accountIds.length === 0 ?
      Effect.void :
      sql`INSERT INTO post_targets ${
        sql.insert(accountIds.map((accountId) => ({ post_id: post.id, account_id: accountId })))
      }`.pipe(Effect.asVoid)
  }

  const writeTargets = (post: Post) =>
    Effect.zipRight(sql`DELETE FROM post_targets WHERE post_id = ${post.id}`, insertTargets(post))

  /** `self` in the open transaction if there is one (its failure fails that one), else in its own. */
  const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.serviceOption(SqlClient.TransactionConnection),
      (open) => Option.isSome(open) ? self : sql.withTransaction(self)
    )

  /** Every post's destinations in one query, grouped by post. */
  const destinationsOf = (postIds: ReadonlyArray<PostId>) =>
    postIds.length === 0
      ? Effect.succeed(new Map<string, Array<Destination>>())
      : sql`SELECT * FROM destinations WHERE post_id IN ${sql.in(postIds)} ORDER BY created_at, id`.pipe(
        Effect.flatMap(decodeDestinations),
        Effect.map((destinations) => {
          const byPost = new Map<string, Array<Destination>>()
          for (const d of destinations) {
            const group = byPost.get(d.postId)
            if (group === undefined) byPost.set(d.postId, [d])
            else group.push(d)
          }
          return byPost
        })
      )

  const withDestinations = (posts: ReadonlyArray<Post>) =>
    destinationsOf(posts.map((p) => p.id)).pipe(
      Effect.map((byPost): ReadonlyArray<PostRecord> =>
        posts.map((post) => ({ post, destinations: orderDestinations(post, byPost.get(post.id) ?? []) }))
      )
    )

  const millis = (t: DateTime.Utc) => DateTime.toEpochMillis(t)

  const decodeStatusCounts = Schema.decodeUnknown(
    Schema.Array(Schema.Struct({ status: PostStatus, count: CountRow.fields.count }))
  )

  /**
   * The organization's posts per status from the maintained month rollups (`AnalyticsRollupSql`):
   * a few rows per month of history, whatever the number of posts, plus on Postgres the deltas
   * appended since the analytics read last folded them in.
   */
  const rolledCounts = (organizationId: PostQuery["organizationId"]) =>
    sql`SELECT r.status AS status, SUM(r.posts) AS count FROM ${sql.literal(RollupSql.postRows)} r
      WHERE r.organization_id = ${organizationId} AND r.grain = 'month' GROUP BY r.status`.pipe(
      Effect.flatMap(decodeStatusCounts),
      Effect.map((rows) => {
        const counts = Object.fromEntries(PostStatus.literals.map((status) => [status, 0])) as Record<
          PostStatus,
          number
        >
        for (const row of rows) counts[row.status] = row.count
        return counts
      })
    )

  /** Whether the query filters by nothing but (at most) status: its counts are the rollups'. */
  const onlyStatus = (q: PostQuery) =>
    q.visibleAccountIds === undefined &&
    filtersOf(q).length === (q.statuses !== undefined && q.statuses.length > 0 ? 1 : 0)

  /** `pagination.total`: from the rollups when they answer the filters, else counted through the filter's index. */
  const totalOf = (q: PostQuery, where: Statement.Fragment) =>
    onlyStatus(q)
      ? Effect.map(rolledCounts(q.organizationId), (counts) =>
        [...new Set(q.statuses === undefined || q.statuses.length === 0 ? PostStatus.literals : q.statuses)]
          .reduce((sum, status) =>
            sum + counts[status], 0))
      : sql`SELECT COUNT(*) AS count FROM posts l WHERE ${where}`.pipe(
        Effect.flatMap(decodeCount),
        Effect.map((rows) =>
          rows[0]?.count ?? 0
        )
      )

  const filtersOf = (q: PostQuery): Array<Statement.Fragment> => {
    const filters: Array<Statement.Fragment> = []
    if (q.statuses !== undefined && q.statuses.length > 0) {
      filters.push(sql`l.status IN ${sql.in(q.statuses)}`)
    }
    if (q.platforms !== undefined && q.platforms.length > 0) {
      // Drafts have no destinations: their platforms are those of the accounts they target.
      filters.push(
        sql`(EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = l.id AND d.platform IN ${
          sql.in(q.platforms)
        }) OR (l.is_draft = 1 AND EXISTS (SELECT 1 FROM post_targets t
          JOIN social_accounts a ON a.id = t.account_id
          WHERE t.post_id = l.id AND a.platform IN ${sql.in(q.platforms)})))`
      )
    }
    if (q.accountId !== undefined) {
      filters.push(sql`(EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = l.id AND d.account_id = ${q.accountId})
        OR EXISTS (SELECT 1 FROM post_targets t WHERE t.post_id = l.id AND t.account_id = ${q.accountId}))`)
    }
    if (q.visibleAccountIds !== undefined) filters.push(visibleThrough(sql, "l", q.visibleAccountIds))
    if (q.campaignId !== undefined) filters.push(sql`l.campaign_id = ${q.campaignId}`)
    // Ranges are half-open: `after` is inclusive, `before` exclusive.
    if (q.createdAfter !== undefined) filters.push(sql`l.created_at >= ${millis(q.createdAfter)}`)
    if (q.createdBefore !== undefined) filters.push(sql`l.created_at < ${millis(q.createdBefore)}`)
    if (q.scheduledAfter !== undefined) filters.push(sql`l.scheduled_for >= ${millis(q.scheduledAfter)}`)
    if (q.scheduledBefore !== undefined) filters.push(sql`l.scheduled_for < ${millis(q.scheduledBefore)}`)
    if (q.publishedAfter !== undefined) filters.push(sql`l.last_published_at >= ${millis(q.publishedAfter)}`)
    if (q.publishedBefore !== undefined) filters.push(sql`l.last_published_at < ${millis(q.publishedBefore)}`)
    if (q.updatedAfter !== undefined) filters.push(sql`l.updated_at >= ${millis(q.updatedAfter)}`)
    if (q.search !== undefined && q.search !== "") {
      const pattern = likePattern(q.search)
      // SQLite's LIKE folds ASCII case only; Postgres's ILIKE folds every case.
      // Postgres answers ILIKE from the pg_trgm index on content. SQLite narrows to the posts whose
      // trigrams match (`posts_search`), then LIKE keeps its own case rule on those few.
      const phrase = trigramPhrase(q.search)
      filters.push(sql.onDialectOrElse({
        pg: () => sql`l.content ILIKE ${pattern} ESCAPE '\\'`,
        orElse: () =>
          phrase === undefined
            ? sql`l.content LIKE ${pattern} ESCAPE '\\'`
            : sql`l.id IN (SELECT post_id FROM posts_search WHERE posts_search MATCH ${phrase})
              AND l.content LIKE ${pattern} ESCAPE '\\'`
      }))
    }
    if (q.approval !== undefined && q.approval.length > 0) {
      filters.push(sql`l.approval_status IN ${sql.in(q.approval)}`)
    }
    return filters
  }

  /**
   * The page: the ids are read from an index alone (the filter's, in the sort's order, `offset`
   * entries skipped there), then only the page's rows are fetched, so a deep offset skips index
   * entries, not rows. Posts without a value for a nullable sort column come last in either order;
   * ties break on id.
   */
  const list = (q: PostQuery) =>
    Effect.gen(function*() {
      const where = sql.and([sql`l.organization_id = ${q.organizationId}`, ...filtersOf(q)])
      const column = sql.literal(sortColumns[q.sort])
      const direction = sql.literal(q.order === "asc" ? "ASC" : "DESC")
      const nullsLast = q.sort === "created_at" || q.sort === "updated_at"
        ? sql``
        : sql`CASE WHEN ${column} IS NULL THEN 1 ELSE 0 END, `
      const order = sql`${nullsLast}${column} ${direction}, l.id ${direction}`
      const total = yield* totalOf(q, where)
      const page = q.after === undefined ? where : sql.and([where, keysetAfter(q, q.after)])
      // One more than the page: whether more follow, read with the page itself.
      const rows = yield* sql`SELECT l.* FROM posts l WHERE l.id IN (
          SELECT l.id FROM posts l WHERE ${page} ORDER BY ${order} LIMIT ${q.limit + 1}
          OFFSET ${q.after === undefined ? q.offset : 0}
        ) ORDER BY ${order}`
      const posts = yield* decodePosts(rows)
      const items = yield* withDestinations(posts.slice(0, q.limit))
      return { items, total, hasMore: posts.length > q.limit }
    })

  /**
   * The posts after `cursor` in the query's order, as a row-value comparison on (column, id) that
   * the sort's index answers as a range. Posts without a value for a nullable sort column come last
   * in either order: after a post with a value, every post without one follows.
   */
  const keysetAfter = (q: PostQuery, cursor: PostCursor): Statement.Fragment => {
    const column = sql.literal(sortColumns[q.sort])
    const past = sql.literal(q.order === "asc" ? ">" : "<")
    if (cursor.value === null) return sql`(${column} IS NULL AND l.id ${past} ${cursor.id})`
    const beyond = sql`(${column}, l.id) ${past} (${cursor.value}, ${cursor.id})`
    return q.sort === "created_at" || q.sort === "updated_at" ? beyond : sql`(${beyond} OR ${column} IS NULL)`
  }

  /** The post, its targets and its destinations as separate statements (SQLite; the caller's transaction). */
  const insertSeparately = (record: PostRecord) =>
    Effect.gen(function*() {
      const row = FastRows.postRow(record.post) ?? (yield* encodePost(record.post))
      yield* sql`INSERT INTO posts ${sql.insert(row)}`
      yield* insertTargets(record.post)
      yield* insertDestinations(record.destinations)
    })

  /** `(columns) SELECT values FROM <from>`: an insert of one row for each row of `from` (none: nothing). */
  const selected = (row: Record<string, unknown>, from: string) => {
    const columns = Object.keys(row)
    return sql`(${sql.literal(columns.join(", "))}) SELECT ${sql.csv(columns.map((c) => sql`${row[c]}`))} FROM ${
      sql.literal(from)
    }`
  }

  /** Postgres: the organization's appended rollup deltas folded in first (as the analytics read does). */
  const foldDeltas = (organizationId: PostQuery["organizationId"]) =>
    sql.onDialectOrElse({
      pg: () =>
        Effect.ignore(Effect.forEach(RollupSql.foldDeltas(10_000), (text) => sql.unsafe(text, [organizationId]))),
      orElse: () => Effect.void
    })

  const countByStatus = (q: PostQuery) =>
    onlyStatus(q) && (q.statuses === undefined || q.statuses.length === 0)
      ? Effect.zipRight(foldDeltas(q.organizationId), rolledCounts(q.organizationId))
      : Effect.gen(function*() {
        const where = sql.and([sql`l.organization_id = ${q.organizationId}`, ...filtersOf(q)])
        const rows = yield* sql`SELECT l.status AS status, COUNT(*) AS count
        FROM posts l WHERE ${where} GROUP BY l.status`.pipe(Effect.flatMap(decodeStatusCounts))
        const counts = Object.fromEntries(PostStatus.literals.map((status) => [status, 0])) as Record<
          PostStatus,
          number
        >
        for (const row of rows) counts[row.status] = row.count
        return counts
      })

  /**
   * The failed destinations of the query, posts oldest first, cut at the last whole post within
   * `limit` (a running sum of each post's count), re-queued by one UPDATE; then whether matching
   * ones remain, and the re-queued posts as they now are. In one transaction; the UPDATE's own
   * `status = 'failed'` keeps a concurrent retry from re-queuing a row twice.
   */
  const requeueFailed = (q: RequeueQuery) =>
    Effect.gen(function*() {
      const filters: Array<Statement.Fragment> = [
        sql`d.organization_id = ${q.organizationId}`,
        sql`d.status = 'failed'`,
        sql`p.organization_id = ${q.organizationId}`
      ]
      if (q.platform !== undefined) filters.push(sql`d.platform = ${q.platform}`)
      if (q.accountId !== undefined) filters.push(sql`d.account_id = ${q.accountId}`)
      if (q.maxAttempts !== undefined) filters.push(sql`d.attempts <= ${q.maxAttempts}`)
      if (q.failedAfter !== undefined) filters.push(sql`d.failed_at > ${millis(q.failedAfter)}`)
      if (q.failedBefore !== undefined) filters.push(sql`d.failed_at < ${millis(q.failedBefore)}`)
      if (q.visibleAccountIds !== undefined) filters.push(visibleThrough(sql, "p", q.visibleAccountIds))
      const candidates = sql`SELECT d.id, d.post_id, p.created_at FROM destinations d
        JOIN posts p ON p.id = d.post_id WHERE ${sql.and(filters)}`
      const now = millis(q.now)
      const updated = yield* sql<{ readonly id: string; readonly post_id: string }>`WITH candidates AS (${candidates}),
        per_post AS (SELECT post_id, created_at, COUNT(*) AS n FROM candidates GROUP BY post_id, created_at),
        running AS (
          SELECT post_id, SUM(n) OVER (ORDER BY created_at, post_id ROWS UNBOUNDED PRECEDING) AS upto FROM per_post
        )
        UPDATE destinations SET status = 'queued', due_at = ${now}, attempts = 0, error = NULL, failed_at = NULL,
          updated_at = ${now}
        WHERE status = 'failed' AND id IN (
          SELECT c.id FROM candidates c JOIN running r ON r.post_id = c.post_id WHERE r.upto <= ${q.limit}
        )
        RETURNING id, post_id`
      const remaining = yield* sql`${candidates} LIMIT 1`
      const retried = new Set(updated.map((row) => row.id))
      const postIds = [...new Set(updated.map((row) => row.post_id))]
      const rows = postIds.length === 0
        ? []
        : yield* sql`SELECT * FROM posts WHERE id IN ${sql.in(postIds)} ORDER BY created_at, id`
      const records = yield* decodePosts(rows).pipe(Effect.flatMap(withDestinations))
      return {
        posts: records.map((record) => ({
          record,
          retried: record.destinations.filter((d) => retried.has(d.id)).map((d) => d.id)
        })),
        hasMore: remaining.length > 0
      }
    }).pipe(sql.withTransaction)

  const insertOne = (record: PostRecord) =>
    sql.onDialectOrElse({
      // Postgres: the post, its targets and its destinations in ONE statement (data-modifying CTEs),
      // atomic by itself: one round trip instead of a savepoint and three or four statements.
      pg: () =>
        Effect.gen(function*() {
          const row = FastRows.postRow(record.post) ?? (yield* encodePost(record.post))
          const accountIds = Arr.dedupe(record.post.accountIds)
          const destinations = record.destinations.length === 0 ? [] : yield* encodeDestinations(record.destinations)
          const targets = accountIds.length === 0 ?
            sql`` :
            sql`, targets AS (INSERT INTO post_targets ${
              sql.insert(accountIds.map((accountId) => ({ post_id: record.post.id, account_id: accountId })))
            })`
          const written = destinations.length === 0 ?
            sql`` :
            sql`, written AS (INSERT INTO destinations ${sql.insert(destinations.map((d) => ({ ...d })))})`
          // Prepared (`PgPrepared`): one shape per count of targets and destinations, columns named.
          yield* sql`${sql.literal(PgPrepared.marker)} WITH post AS (INSERT INTO posts ${
            sql.insert(row)
          } RETURNING id)${targets}${written}
            SELECT id FROM post`
        }),
      // SQLite: a new post has no targets to clear; inside the caller's transaction (a create's),
      // no savepoint of its own: a failure here fails that transaction, which rolls back all of it.
      orElse: () => insertSeparately(record).pipe(inTransaction)
    }).pipe(orPersistence("PostStore.insert"))

  return PostStore.of({
    insert: insertOne,
    insertChecked: (record, expected) => {
      const accounts = Arr.dedupeWith(expected, (a, b) => a.id === b.id)
      if (accounts.length === 0) return Effect.as(insertOne(record), true)
      const organizationId = record.post.organizationId
      const matching = sql.or(accounts.map((a) => sql`(id = ${a.id} AND platform = ${a.platform})`))
      return sql.onDialectOrElse({
        // Postgres: the check and the writes in ONE statement. The post is inserted from the check's
        // row (none unless every account matched), its targets and destinations from the post's
        // (none unless it was inserted): a miss stores nothing and returns no row.
        pg: () =>
          Effect.gen(function*() {
            const row = FastRows.postRow(record.post) ?? (yield* encodePost(record.post))
            const accountIds = Arr.dedupe(record.post.accountIds)
            const destinations = record.destinations.length === 0 ? [] : yield* encodeDestinations(record.destinations)
            const targets = accountIds.map((accountId, i) =>
              sql`, ${
                sql.literal(`t${i}`)
              } AS (INSERT INTO post_targets (post_id, account_id) SELECT id, ${accountId} FROM post)`
            )
            const written = destinations.map((d, i) =>
              sql`, ${sql.literal(`d${i}`)} AS (INSERT INTO destinations ${selected(d, "post")})`
            )
            // Prepared (`PgPrepared`): one shape per count of accounts, targets and destinations.
            const rows = yield* sql`${sql.literal(PgPrepared.marker)} WITH ok AS (SELECT 1 FROM social_accounts
              WHERE organization_id = ${organizationId} AND is_active <> 0 AND (${matching})
              HAVING COUNT(*) = ${sql.literal(String(accounts.length))}),
              post AS (INSERT INTO posts ${selected(row, "ok")} RETURNING id)${sql.join("", false)(targets)}${
              sql.join("", false)(written)
            } SELECT id FROM post`
            return rows.length === 1
          }),
        // SQLite: the check, then the writes, in one transaction (writes are serialized on the file).
        orElse: () =>
          Effect.gen(function*() {
            const found = yield* sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM social_accounts
              WHERE organization_id = ${organizationId} AND is_active <> 0 AND (${matching})`
            if (Number(found[0]?.n) !== accounts.length) return false
            yield* insertSeparately(record)
            return true
          }).pipe(inTransaction)
      }).pipe(orPersistence("PostStore.insertChecked"))
    },
    findById: (organizationId, id) =>
      sql`SELECT * FROM posts WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        Effect.flatMap(decodePosts),
        Effect.flatMap(withDestinations),
        Effect.map(Arr.head),
        orPersistence("PostStore.findById")
      ),
    findMany: (ids) =>
      ids.length === 0 ? Effect.succeed([]) : Effect.gen(function*() {
        // The count rides along as one more column (the post's decoders ignore it): the engine's
        // batches need no destination rows, which were most of this read. Ids are deduplicated by a
        // Set: `Array.dedupe` compares every pair with `Equal.equals` (125,000 calls for a batch of 500).
        const rows = yield* sql<{ readonly destination_count: unknown }>`SELECT p.*,
            (SELECT COUNT(*) FROM destinations d WHERE d.post_id = p.id) AS destination_count
          FROM posts p WHERE p.id IN ${sql.in([...new Set(ids)])}`
        const posts = yield* decodePosts(rows)
        return posts.map((post, i): PostCount => ({ post, destinationCount: Number(rows[i]!.destination_count) }))
      }).pipe(orPersistence("PostStore.findMany")),
    list: (query) => list(query).pipe(orPersistence("PostStore.list")),
    countByStatus: (query) => countByStatus(query).pipe(orPersistence("PostStore.countByStatus")),
    requeueFailed: (query) => requeueFailed(query).pipe(orPersistence("PostStore.requeueFailed")),
    update: (post) =>
      Effect.gen(function*() {
        const row = yield* encodePost(post)
        const updated = yield* sql`UPDATE posts SET ${sql.update(row, ["id", "organization_id"])}
          WHERE id = ${post.id} AND organization_id = ${post.organizationId} RETURNING id`
        if (updated.length > 0) yield* writeTargets(post)
      }).pipe(sql.withTransaction, orPersistence("PostStore.update")),
    insertDestinations: (destinations) =>
      insertDestinations(destinations).pipe(orPersistence("PostStore.insertDestinations")),
    updateDestinations: (destinations) =>
      destinations.length === 0 ? Effect.void : encodeDestinations(destinations).pipe(
        Effect.flatMap((rows) =>
          Effect.forEach(
            rows,
            (row) =>
              sql`UPDATE destinations SET ${sql.update({ ...row }, ["id", "post_id", "organization_id"])}
              WHERE id = ${row.id}`,
            { discard: true }
          )
        ),
        sql.withTransaction,
        orPersistence("PostStore.updateDestinations")
      ),
    deleteDestinations: (ids) =>
      ids.length === 0 ? Effect.void : sql`DELETE FROM destinations WHERE id IN ${sql.in(ids)}`.pipe(
        Effect.asVoid,
        orPersistence("PostStore.deleteDestinations")
      ),
    delete: (organizationId, id) =>
      Effect.gen(function*() {
        const found = yield* sql`SELECT id FROM posts WHERE organization_id = ${organizationId} AND id = ${id}`
        if (found.length === 0) return false
        // The foreign keys cascade too; deleting explicitly does not depend on SQLite's pragma.
        yield* sql`DELETE FROM destinations WHERE post_id = ${id}`
        yield* sql`DELETE FROM post_targets WHERE post_id = ${id}`
        yield* sql`DELETE FROM posts WHERE id = ${id}`
        return true
      }).pipe(sql.withTransaction, orPersistence("PostStore.delete"))
  })
})

export const layer: Layer.Layer<PostStore, never, SqlClient.SqlClient> = Layer.effect(PostStore, make)
