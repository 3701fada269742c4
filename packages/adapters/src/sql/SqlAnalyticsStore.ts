/**
 * The analytics aggregates in two grouped queries: posts by derived status, and destinations by
 * platform and status with the sums of their synced metrics (stored as JSON in `metrics`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { AnalyticsStore, metricNames } from "@herald/core/analytics/AnalyticsStore"
import type { AnalyticsQuery, MetricName } from "@herald/core/analytics/AnalyticsStore"
import { DestinationStatus } from "@herald/core/posts/Destination"
import { Platform } from "@herald/core/platforms/Platform"
import { PostStatus } from "@herald/core/posts/Post"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
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

  const destinationGroups = (q: AnalyticsQuery) =>
    sql`SELECT d.platform AS platform, d.status AS status, COUNT(*) AS count, ${
      sql.csv(metricNames.map((m) => sql`${metric(m)} AS ${sql.literal(m)}`))
    }
      FROM destinations d JOIN posts p ON p.id = d.post_id
      WHERE d.organization_id = ${q.organizationId} AND ${postFilters(q)}
      GROUP BY d.platform, d.status`.pipe(Effect.flatMap(decodeGroups))

  return AnalyticsStore.of({
    summarize: (q) =>
      Effect.all([postsByStatus(q), destinationGroups(q)]).pipe(
        Effect.map(([posts, groups]) => ({
          posts,
          destinations: groups.map((g) => ({
            platform: g.platform,
            status: g.status,
            count: g.count,
            metrics: Object.fromEntries(metricNames.map((m) => [m, g[m] ?? 0])) as Record<MetricName, number>
          }))
        })),
        orPersistence("AnalyticsStore.summarize")
      )
  })
})

export const layer: Layer.Layer<AnalyticsStore, never, SqlClient.SqlClient> = Layer.effect(AnalyticsStore, make)
