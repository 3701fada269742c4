/**
 * The analytics aggregates: posts by derived status, and destinations by platform and status with the
 * sums of their synced metrics. Read from the maintained day and month rollups
 * (`AnalyticsRollupSql`, a few hundred rows for any period), plus the base rows of the partial days
 * at the edges of a range that does not start or end on a UTC day (an index range on creation time).
 * A key restricted to some accounts counts from the base rows: its visibility is a property of each
 * post's whole set of targets, which no per-account aggregate can answer.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { AnalyticsStore, metricNames } from "@herald/core/analytics/AnalyticsStore"
import type { AnalyticsCounts, AnalyticsQuery, MetricName } from "@herald/core/analytics/AnalyticsStore"
import { DestinationStatus } from "@herald/core/domain/Destination"
import { Platform } from "@herald/core/domain/Platform"
import { PostStatus } from "@herald/core/domain/Post"
import { RollupChanges } from "@herald/core/publishing/RollupChanges"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as RollupSql from "./internal/AnalyticsRollupSql.js"
import { visibleThrough } from "./internal/PostVisibilitySql.js"
import { DbNumber, orPersistence } from "./internal/Rows.js"

const StatusRow = Schema.Struct({ status: PostStatus, count: DbNumber })

const GroupRow = Schema.Struct({
  platform: Platform,
  status: DestinationStatus,
  count: DbNumber,
  ...Object.fromEntries(metricNames.map((m) => [m, Schema.NullOr(DbNumber)])) as Record<
    MetricName,
    Schema.NullOr<typeof DbNumber>
  >
})

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decodeStatuses = Schema.decodeUnknown(Schema.Array(StatusRow))
  const decodeGroups = Schema.decodeUnknown(Schema.Array(GroupRow))

  /** The posts of the query, as conditions on the alias `p`. */
  const postFilters = (q: AnalyticsQuery): Statement.Fragment => {
    const filters: Array<Statement.Fragment> = [sql`p.organization_id = ${q.organizationId}`]
    if (q.from !== undefined) filters.push(sql`p.created_at >= ${DateTime.toEpochMillis(q.from)}`)
    if (q.to !== undefined) filters.push(sql`p.created_at < ${DateTime.toEpochMillis(q.to)}`)
    if (q.visibleAccountIds !== undefined) filters.push(visibleThrough(sql, "p", q.visibleAccountIds))
    return sql.and(filters)
  }

  /** One metric of a destination's JSON `metrics`, as an integer. */
  const metric = (name: MetricName): Statement.Fragment =>
    sql.onDialectOrElse({
      // `name` is one of the fixed metric names, never caller input.
      pg: () => sql`COALESCE(SUM((d.metrics::jsonb ->> ${sql.literal(`'${name}'`)})::bigint), 0)`,
      orElse: () => sql`COALESCE(SUM(json_extract(d.metrics, ${sql.literal(`'$.${name}'`)})), 0)`
    })

  /** Posts counted by their maintained status (`PostListingSql`), from the status index. */
  const postsByStatus = (q: AnalyticsQuery) =>
    sql`SELECT p.status AS status, COUNT(*) AS count FROM posts p WHERE ${postFilters(q)} GROUP BY p.status`.pipe(
      Effect.flatMap(decodeStatuses)
    )

  /**
   * The destinations of the query's posts. `narrow`: the posts are those of less than a day (a range's
   * partial edge), so on Postgres each post's destinations are read through `destinations_by_post`
   * (a LATERAL subquery the planner keeps, `OFFSET 0`): otherwise it hashes every destination of the
   * organization for a few hundred posts. SQLite's plan walks the posts' range first already.
   */
  const destinationGroups = (q: AnalyticsQuery, narrow = false) =>
    sql`SELECT d.platform AS platform, d.status AS status, COUNT(*) AS count, ${
      sql.csv(metricNames.map((m) => sql`${metric(m)} AS ${sql.literal(m)}`))
    }
      FROM ${
      narrow
        ? sql.onDialectOrElse({
          pg: () => sql`posts p CROSS JOIN LATERAL (SELECT * FROM destinations d WHERE d.post_id = p.id OFFSET 0) d`,
          orElse: () => sql`destinations d JOIN posts p ON p.id = d.post_id`
        })
        : sql`destinations d JOIN posts p ON p.id = d.post_id`
    }
      WHERE d.organization_id = ${q.organizationId} AND ${postFilters(q)}
      GROUP BY d.platform, d.status`.pipe(Effect.flatMap(decodeGroups))

  /**
   * Postgres: the organization's appended deltas moved into the rollups first (bounded; what is left
   * is still added by the reads). A failure leaves the deltas where they are, which reads still count.
   */
  const foldDeltas = (organizationId: AnalyticsQuery["organizationId"]) =>
    sql.onDialectOrElse({
      pg: () =>
        Effect.ignore(Effect.forEach(RollupSql.foldDeltas(10_000), (text) => sql.unsafe(text, [organizationId]))),
      orElse: () => Effect.void
    })

  /** The rollup rows of the plan's day and month buckets, as conditions on the alias `r`. */
  const bucketsOf = (plan: RollupSql.Plan): Statement.Fragment | undefined => {
    const ranges = [
      ...plan.days.map((range) => ({ grain: "day", range })),
      ...plan.months.map((range) => ({ grain: "month", range }))
    ]
    if (ranges.length === 0) return undefined
    return sql.or(ranges.map(({ grain, range }) =>
      sql.and([
        sql`r.grain = ${grain}`,
        ...(range.from === undefined ? [] : [sql`r.bucket >= ${range.from}`]),
        ...(range.to === undefined ? [] : [sql`r.bucket < ${range.to}`])
      ])
    ))
  }

  const rolledPosts = (organizationId: AnalyticsQuery["organizationId"], buckets: Statement.Fragment) =>
    sql`SELECT r.status AS status, SUM(r.posts) AS count FROM ${sql.literal(RollupSql.postRows)} r
      WHERE r.organization_id = ${organizationId} AND (${buckets}) GROUP BY r.status`.pipe(
      Effect.flatMap(decodeStatuses)
    )

  const rolledGroups = (organizationId: AnalyticsQuery["organizationId"], buckets: Statement.Fragment) =>
    sql`SELECT r.platform AS platform, r.status AS status, SUM(r.destinations) AS count, ${
      sql.csv(metricNames.map((m) => sql`SUM(r.${sql.literal(m)}) AS ${sql.literal(m)}`))
    } FROM ${sql.literal(RollupSql.destinationRows)} r
      WHERE r.organization_id = ${organizationId} AND (${buckets}) GROUP BY r.platform, r.status`.pipe(
      Effect.flatMap(decodeGroups)
    )

  type Group = Schema.Schema.Type<typeof GroupRow>

  /** Sums rows of the same key (rollup buckets and base edges), dropping those that sum to nothing. */
  const combine = (
    posts: ReadonlyArray<ReadonlyArray<Schema.Schema.Type<typeof StatusRow>>>,
    groups: ReadonlyArray<ReadonlyArray<Group>>
  ): AnalyticsCounts => {
    const byStatus = new Map<PostStatus, number>()
    for (const row of posts.flat()) byStatus.set(row.status, (byStatus.get(row.status) ?? 0) + row.count)
    const byGroup = new Map<
      string,
      { platform: Platform; status: DestinationStatus; count: number; metrics: Record<MetricName, number> }
    >()
    for (const g of groups.flat()) {
      const key = `${g.platform}\u0000${g.status}`
      const entry = byGroup.get(key) ?? {
        platform: g.platform,
        status: g.status,
        count: 0,
        metrics: Object.fromEntries(metricNames.map((m) => [m, 0])) as Record<MetricName, number>
      }
      entry.count += g.count
      for (const m of metricNames) entry.metrics[m] += g[m] ?? 0
      byGroup.set(key, entry)
    }
    return {
      posts: [...byStatus].filter(([, count]) => count !== 0).map(([status, count]) => ({ status, count })),
      destinations: [...byGroup.values()].filter((g) => g.count !== 0)
    }
  }

  /** The counts from the base rows alone (a restricted key, and the partial days of a range). */
  const fromRows = (q: AnalyticsQuery, narrow = false) => Effect.all([postsByStatus(q), destinationGroups(q, narrow)])

  const summarize = (q: AnalyticsQuery): Effect.Effect<AnalyticsCounts, unknown> => {
    if (q.visibleAccountIds !== undefined) {
      return Effect.map(fromRows(q), ([posts, groups]) => combine([posts], [groups]))
    }
    const plan = RollupSql.plan({
      from: q.from === undefined ? undefined : DateTime.toEpochMillis(q.from),
      to: q.to === undefined ? undefined : DateTime.toEpochMillis(q.to)
    })
    const buckets = bucketsOf(plan)
    return Effect.zipRight(
      foldDeltas(q.organizationId),
      Effect.all([
        buckets === undefined ? Effect.succeed([[], []] as const) : Effect.all([
          rolledPosts(q.organizationId, buckets),
          rolledGroups(q.organizationId, buckets)
        ]),
        Effect.forEach(plan.base, (edge) =>
          fromRows({
            organizationId: q.organizationId,
            from: DateTime.unsafeMake(edge.from),
            to: DateTime.unsafeMake(edge.to)
          }, true))
      ]).pipe(Effect.map(([rolled, edges]) =>
        combine([
          rolled[0],
          ...edges.map((e) => e[0])
        ], [rolled[1], ...edges.map((e) => e[1])])
      ))
    )
  }

  return AnalyticsStore.of({
    summarize: (q) => summarize(q).pipe(orPersistence("AnalyticsStore.summarize"))
  })
})

export const layer: Layer.Layer<AnalyticsStore, never, SqlClient.SqlClient> = Layer.effect(AnalyticsStore, make)

/**
 * Housekeeping's folding of the rollup deltas (`RollupChanges`): on Postgres every organization's,
 * up to `limit` per table in one statement each; SQLite's triggers update the rollups in place and
 * leave none.
 */
export const changesLayer: Layer.Layer<RollupChanges, never, SqlClient.SqlClient> = Layer.effect(
  RollupChanges,
  Effect.map(SqlClient.SqlClient, (client) => {
    const sql = client.withoutTransforms()
    return RollupChanges.of({
      fold: (limit) =>
        sql.onDialectOrElse({
          pg: () =>
            Effect.map(
              Effect.forEach(
                RollupSql.foldDeltas(Math.max(1, Math.trunc(limit)), "all"),
                (text) => sql.unsafe<{ n: unknown }>(text)
              ),
              (results) => results.reduce((sum, rows) => sum + Number(rows[0]?.n ?? 0), 0)
            ),
          orElse: () => Effect.succeed(0)
        }).pipe(orPersistence("RollupChanges.fold"))
    })
  })
)
