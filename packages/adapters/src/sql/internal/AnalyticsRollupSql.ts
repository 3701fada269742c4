/**
 * Per-organization aggregates of posts and destinations by UTC day and UTC month of the post's
 * creation (migration `0061_analytics_rollups`), kept by triggers in the transaction of every write
 * that changes what they count, so analytics, `/me` and the post list's total read a few hundred
 * rows instead of every post of the organization:
 *
 * - `post_rollups`: posts by maintained status (`PostListingSql`), one row per organization, grain
 *   (`day` or `month`), bucket (the grain's first instant, epoch millis) and status;
 * - `destination_rollups`: destinations by platform, account and status, with the sums of their
 *   synced metrics (the JSON `metrics` column the metrics sweep writes), bucketed by their post's
 *   creation time (analytics places a destination in a period by its post's creation).
 *
 * Every change is a signed delta: an insert adds the new row, a delete subtracts the old one, an
 * update that changes a counted column subtracts the old row and adds the new one. Deltas commute,
 * so the order in which SQLite runs its triggers on one statement does not matter.
 *
 * A destination's bucket comes from its post's row: a destination deleted after its post (only an
 * organization's deletion cascades that way) is not subtracted; `PostStore.delete` removes the
 * destinations first.
 */

export const metricNames = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"] as const

export type Dialect = "pg" | "sqlite"

export const dayMillis = 86_400_000

/** The grains, as a derived table `g(grain)` both dialects read. */
const grains = `(SELECT 'day' AS grain UNION ALL SELECT 'month' AS grain) g`

/** The bucket of the instant `at` (epoch millis) in the grain `g.grain`: its UTC day's or month's start. */
export const bucketOf = (dialect: Dialect, at: string): string =>
  `CASE WHEN g.grain = 'day' THEN (${at} / ${dayMillis}) * ${dayMillis} ELSE ${
    dialect === "pg"
      ? `CAST(EXTRACT(EPOCH FROM date_trunc('month', to_timestamp(${at} / 1000.0) AT TIME ZONE 'UTC')) * 1000 AS BIGINT)`
      : `CAST(strftime('%s', ${at} / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000`
  } END`

/** One metric of the destination row `row`'s JSON metrics, as an integer (0 when absent). */
export const metricOf = (dialect: Dialect, row: string, name: typeof metricNames[number]): string =>
  dialect === "pg"
    ? `COALESCE((${row}.metrics::jsonb ->> '${name}')::bigint, 0)`
    : `COALESCE(json_extract(${row}.metrics, '$.${name}'), 0)`

/** A source of post deltas: rows with the posts' columns, aliased `r`, counted with `sign`. */
export interface Source {
  readonly from: string
  readonly sign: 1 | -1
  /** Extra condition on `r` (and whatever `from` joins). */
  readonly where?: string
}

const union = (parts: ReadonlyArray<string>) => parts.join(" UNION ALL ")

/**
 * Where a trigger writes: `rollups`, upserted in place (SQLite: one writer at a time, so a rollup row
 * never makes one transaction wait for another), or `deltas`, appended (Postgres: an upsert would
 * lock the rollup row until the writer commits, so concurrent writers of one organization and day,
 * such as two dispatchers claiming side by side, would wait on each other; appended rows lock
 * nothing another writer needs). Readers add the deltas to the rollups; `foldDeltas` moves them in.
 */
export type Target = "rollups" | "deltas"

/** Applies the posts of the sources (alias `r`) to `post_rollups` (or appends them to its deltas). */
export const applyPosts = (dialect: Dialect, sources: ReadonlyArray<Source>, target: Target = "rollups"): string =>
  `INSERT INTO ${
    target === "rollups" ? "post_rollups" : "post_rollup_deltas"
  } (organization_id, grain, bucket, status, posts)
    SELECT organization_id, grain, bucket, status, SUM(delta) FROM (${
    union(sources.map((s) =>
      `SELECT r.organization_id AS organization_id, g.grain AS grain, ${bucketOf(dialect, "r.created_at")} AS bucket,
        r.status AS status, ${s.sign} AS delta FROM ${s.from} CROSS JOIN ${grains}${
        s.where === undefined ? "" : ` WHERE ${s.where}`
      }`
    ))
  }) x WHERE true GROUP BY organization_id, grain, bucket, status HAVING SUM(delta) <> 0
    ORDER BY organization_id, grain, bucket, status${
    target === "rollups"
      ? `
    ON CONFLICT (organization_id, grain, bucket, status) DO UPDATE SET posts = post_rollups.posts + excluded.posts`
      : ""
  }`

/**
 * How a destination's post (`p`, for its creation time) is found: `join`, a join the planner may
 * answer by hashing every post (right for a backfill of every destination), or `lookup`, one
 * primary-key lookup per destination row (a LATERAL subquery that `OFFSET 0` keeps from being merged
 * into a join): right for a trigger's few hundred rows, where Postgres hashed every post of the
 * store for each claim and recording (a sequential scan of `posts` per statement, growing with it).
 */
export type PostLookup = "join" | "lookup"

/**
 * Applies the destinations of the sources (alias `r`, joined here to their post `p` for its
 * creation time) to `destination_rollups`.
 */
export const applyDestinations = (
  dialect: Dialect,
  sources: ReadonlyArray<Source>,
  target: Target = "rollups",
  postLookup: PostLookup = "join"
): string =>
  `INSERT INTO ${
    target === "rollups" ? "destination_rollups" : "destination_rollup_deltas"
  } (organization_id, grain, bucket, platform, account_id, status, destinations, ${metricNames.join(", ")})
    SELECT organization_id, grain, bucket, platform, account_id, status, SUM(delta), ${
    metricNames.map((m) => `SUM(${m})`).join(", ")
  } FROM (${
    union(sources.map((s) =>
      `SELECT r.organization_id AS organization_id, g.grain AS grain, ${bucketOf(dialect, "p.created_at")} AS bucket,
        r.platform AS platform, r.account_id AS account_id, r.status AS status, ${s.sign} AS delta, ${
        metricNames.map((m) =>
          `${s.sign} * ${metricOf(dialect, "r", m)} AS ${m}`
        ).join(", ")
      } FROM ${s.from} ${
        postLookup === "join"
          ? "JOIN posts p ON p.id = r.post_id"
          : "CROSS JOIN LATERAL (SELECT pl.created_at FROM posts pl WHERE pl.id = r.post_id OFFSET 0) p"
      } CROSS JOIN ${grains}${s.where === undefined ? "" : ` WHERE ${s.where}`}`
    ))
  }) x WHERE true GROUP BY organization_id, grain, bucket, platform, account_id, status
    HAVING SUM(delta) <> 0 OR ${metricNames.map((m) => `SUM(${m}) <> 0`).join(" OR ")}
    ORDER BY organization_id, grain, bucket, platform, account_id, status${
    target === "rollups" ? upsertDestinations : ""
  }`

const upsertDestinations = `
    ON CONFLICT (organization_id, grain, bucket, platform, account_id, status) DO UPDATE SET
      destinations = destination_rollups.destinations + excluded.destinations, ${
  metricNames.map((m) => `${m} = destination_rollups.${m} + excluded.${m}`).join(", ")
}`

/** The rollup rows and the deltas not folded in yet, as one row source (sum them by key). */
export const postRows = `(SELECT organization_id, grain, bucket, status, posts FROM post_rollups
  UNION ALL SELECT organization_id, grain, bucket, status, posts FROM post_rollup_deltas)`
export const destinationRows = `(SELECT organization_id, grain, bucket, platform, account_id, status, destinations, ${
  metricNames.join(", ")
} FROM destination_rollups UNION ALL SELECT organization_id, grain, bucket, platform, account_id, status, destinations, ${
  metricNames.join(", ")
} FROM destination_rollup_deltas)`

/**
 * Postgres: moves up to `limit` appended deltas into the rollups, in one statement per table (deltas
 * a writer still holds are skipped, and left for the next time): an organization's (its id is `$1`),
 * before a read of its rollups, or any organization's (`scope` "all", housekeeping's small batches,
 * so that the deltas do not pile up between reads). Only these statements write rollup rows on
 * Postgres, so the row locks they take keep no writer waiting. Each statement answers one row, `n`:
 * the delta rows it moved.
 */
export const foldDeltas = (limit: number, scope: "organization" | "all" = "organization"): ReadonlyArray<string> => {
  const where = scope === "organization" ? "WHERE organization_id = $1 " : ""
  return [
    `WITH moved AS (DELETE FROM post_rollup_deltas WHERE ctid IN (
      SELECT ctid FROM post_rollup_deltas ${where}LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ) RETURNING organization_id, grain, bucket, status, posts),
    folded AS (INSERT INTO post_rollups (organization_id, grain, bucket, status, posts)
    SELECT organization_id, grain, bucket, status, SUM(posts) FROM moved
    GROUP BY organization_id, grain, bucket, status ORDER BY organization_id, grain, bucket, status
    ON CONFLICT (organization_id, grain, bucket, status) DO UPDATE SET posts = post_rollups.posts + excluded.posts
    RETURNING 1)
    SELECT COUNT(*) AS n FROM moved`,
    `WITH moved AS (DELETE FROM destination_rollup_deltas WHERE ctid IN (
      SELECT ctid FROM destination_rollup_deltas ${where}LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ) RETURNING *),
    folded AS (INSERT INTO destination_rollups (organization_id, grain, bucket, platform, account_id, status, destinations, ${
      metricNames.join(", ")
    })
    SELECT organization_id, grain, bucket, platform, account_id, status, SUM(destinations), ${
      metricNames.map((m) => `SUM(${m})`).join(", ")
    } FROM moved GROUP BY organization_id, grain, bucket, platform, account_id, status
    ORDER BY organization_id, grain, bucket, platform, account_id, status${upsertDestinations}
    RETURNING 1)
    SELECT COUNT(*) AS n FROM moved`
  ]
}

/** The destination columns a rollup counts: a change of any of them moves the row between groups. */
export const countedDestinationColumns = [
  "status",
  "metrics",
  "platform",
  "account_id",
  "post_id",
  "organization_id"
] as const
/** The post columns a rollup counts. */
export const countedPostColumns = ["status", "created_at", "organization_id"] as const

// ---------------------------------------------------------------------------------------------------
// Reading: which buckets answer a range

/** A half-open range of instants; an absent bound is open. */
export interface Range {
  readonly from?: number | undefined
  readonly to?: number | undefined
}

/** How a range of creation times is answered: base rows for partial days, day and month buckets for the rest. */
export interface Plan {
  /** Ranges shorter than a day at the edges, counted from the base rows (an index range on creation time). */
  readonly base: ReadonlyArray<{ readonly from: number; readonly to: number }>
  readonly days: ReadonlyArray<Range>
  readonly months: ReadonlyArray<Range>
}

const floorDay = (t: number) => Math.floor(t / dayMillis) * dayMillis
const ceilDay = (t: number) => Math.ceil(t / dayMillis) * dayMillis
const floorMonth = (t: number) => {
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}
const ceilMonth = (t: number) => {
  const floor = floorMonth(t)
  if (floor === t) return t
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/**
 * The buckets and edges that cover `[from, to)` exactly: whole UTC months from month rows, whole UTC
 * days around them from day rows, and the parts of days at the edges (a custom range at any
 * instant) from the base rows. The calendar periods (today, week, month, all) need no base rows.
 */
export const plan = (range: Range): Plan => {
  const { from, to } = range
  const d1 = from === undefined ? undefined : ceilDay(from)
  const d2 = to === undefined ? undefined : floorDay(to)
  if (d1 !== undefined && d2 !== undefined && d1 >= d2) {
    return { base: from! < to! ? [{ from: from!, to: to! }] : [], days: [], months: [] }
  }
  const base: Array<{ from: number; to: number }> = []
  if (from !== undefined && from < d1!) base.push({ from, to: d1! })
  if (to !== undefined && d2! < to) base.push({ from: d2!, to })
  const m1 = d1 === undefined ? undefined : ceilMonth(d1)
  const m2 = d2 === undefined ? undefined : floorMonth(d2)
  if (m1 === undefined || m2 === undefined || m1 < m2) {
    const days: Array<Range> = []
    if (d1 !== undefined && d1 < m1!) days.push({ from: d1, to: m1 })
    if (d2 !== undefined && m2! < d2) days.push({ from: m2, to: d2 })
    return { base, days, months: [{ from: m1, to: m2 }] }
  }
  return { base, days: [{ from: d1, to: d2 }], months: [] }
}
