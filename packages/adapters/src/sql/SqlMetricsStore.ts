import type { ResolvedPost } from "@herald/core/platforms/Platforms"
import * as SqlClient from "@effect/sql/SqlClient"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { type MetricsClaim, MetricsStore } from "@herald/core/analytics/MetricsStore"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Statement from "@effect/sql/Statement"
import { DbNumber, DestinationRow, orPersistence } from "./internal/Rows.js"

const ClaimRows = Schema.Array(Schema.Struct({
  destination: DestinationRow,
  lease: Schema.Struct({ metrics_lease: Schema.String, metrics_step: DbNumber })
}))

const decodeClaims = (rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(ClaimRows)(rows.map((row) => ({ destination: row, lease: row }))).pipe(
    Effect.map((decoded): ReadonlyArray<MetricsClaim> =>
      decoded.map(({ destination, lease }) => ({
        destination,
        step: lease.metrics_step,
        leaseToken: lease.metrics_lease
      }))
    )
  )

const millis = (input: Duration.DurationInput) => Duration.toMillis(Duration.decode(input))

const orNull = (instant: Option.Option<DateTime.Utc>) =>
  Option.match(instant, { onNone: () => null, onSome: DateTime.toEpochMillis })

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const ids = yield* IdGenerator

  /**
   * A destination of the platform due at `at`, as two conditions that each an index answers as a
   * range (migration `0075_metrics_due_indexes`): its next fetch is due (`destinations_metrics_next`),
   * or it was never scheduled and its first delay has passed (`destinations_metrics_first`;
   * `metrics_step < steps` skips those whose schedule ended). As one OR the store read every published
   * destination of the platform.
   */
  const scheduledDue = (platform: string, at: number, steps: number) =>
    sql`status = 'published' AND next_metrics_at IS NOT NULL AND platform = ${platform}
      AND next_metrics_at <= ${at} AND metrics_step < ${steps}`
  const firstDue = (platform: string, at: number, steps: number, firstAfter: Duration.DurationInput) =>
    sql`status = 'published' AND next_metrics_at IS NULL AND platform = ${platform}
      AND metrics_step < ${steps} AND published_at <= ${at - millis(firstAfter)}`

  /** Postgres: ids handed over as one array (a primary-key lookup each), as in the dispatcher's claim. */
  const idIn = (ids: Statement.Fragment) =>
    sql.onDialectOrElse({
      pg: () => sql`id = ANY(ARRAY(${ids}))`,
      orElse: () => sql`id IN (${ids})`
    })

  return MetricsStore.of({
    claimDue: ({ firstAfter, leaseFor, limit, now, platform, steps }) =>
      Effect.gen(function*() {
        if (limit <= 0 || steps <= 0) return []
        const batch = yield* ids.uuid
        const at = DateTime.toEpochMillis(now)
        const lock = sql.onDialectOrElse({
          pg: () => sql.literal("FOR UPDATE SKIP LOCKED"),
          orElse: () => sql.literal("")
        })
        // As the dispatcher's claim: one statement, the pick a materialized CTE so that it runs once
        // (SKIP LOCKED on Postgres; SQLite has one writer at a time). The lease is `next_metrics_at`
        // itself, moved past the lease's end, so nobody else finds the destination due meanwhile.
        // Each side limited in its own index order, then merged: the earliest due first, due from
        // `next_metrics_at`, or from `published_at` for a first fetch.
        const rows = yield* sql`WITH picked AS MATERIALIZED (
            SELECT id FROM (
              SELECT id, due FROM (
                SELECT id, next_metrics_at AS due FROM destinations WHERE ${scheduledDue(platform, at, steps)}
                ORDER BY next_metrics_at, id LIMIT ${limit} ${lock}
              ) scheduled
              UNION ALL
              SELECT id, due FROM (
                SELECT id, published_at AS due FROM destinations WHERE ${firstDue(platform, at, steps, firstAfter)}
                ORDER BY published_at, id LIMIT ${limit} ${lock}
              ) never_fetched
            ) due
            ORDER BY due, id
            LIMIT ${limit}
          )
          UPDATE destinations SET
            metrics_lease = CAST(${batch} AS TEXT) || ':' || id,
            next_metrics_at = ${at + millis(leaseFor)}
          WHERE ${idIn(sql`SELECT id FROM picked`)}
          RETURNING *`
        return yield* decodeClaims(rows)
      }).pipe(orPersistence("MetricsStore.claimDue")),

    complete: (claim, completion) =>
      Effect.gen(function*() {
        // The post's final id and URL, when the platform has just given them.
        const renamed = (post: ResolvedPost | undefined) =>
          post === undefined
            ? sql``
            : sql`platform_post_id = ${post.platformPostId}, platform_post_url = ${post.platformPostUrl},`
        const fence = sql`id = ${claim.destination.id} AND metrics_lease = ${claim.leaseToken}`
        const rows = yield* (() => {
          switch (completion._tag) {
            case "Fetched":
              return sql`UPDATE destinations SET
                  ${renamed(completion.platformPost)}
                  metrics = ${JSON.stringify(completion.metrics)},
                  metrics_fetched_at = ${DateTime.toEpochMillis(completion.fetchedAt)},
                  metrics_step = ${completion.step},
                  next_metrics_at = ${orNull(completion.nextAt)},
                  metrics_lease = NULL
                WHERE ${fence} RETURNING id`
            case "Skipped":
              return sql`UPDATE destinations SET
                  ${renamed(completion.platformPost)}
                  metrics_step = ${completion.step},
                  next_metrics_at = ${orNull(completion.nextAt)},
                  metrics_lease = NULL
                WHERE ${fence} RETURNING id`
            case "Deferred":
              return sql`UPDATE destinations SET
                  next_metrics_at = ${DateTime.toEpochMillis(completion.nextAt)},
                  metrics_lease = NULL
                WHERE ${fence} RETURNING id`
          }
        })()
        return rows.length > 0
      }).pipe(orPersistence("MetricsStore.complete")),

    deferPlatform: ({ firstAfter, platform, steps, until }) =>
      Effect.gen(function*() {
        const at = DateTime.toEpochMillis(until)
        const rows = yield* sql`UPDATE destinations SET next_metrics_at = ${at}
          WHERE ${
          idIn(sql`SELECT id FROM destinations WHERE ${scheduledDue(platform, at - 1, steps)}
            UNION ALL SELECT id FROM destinations WHERE ${firstDue(platform, at - 1, steps, firstAfter)}`)
        }
          RETURNING id`
        return rows.length
      }).pipe(orPersistence("MetricsStore.deferPlatform"))
  })
})

/** Needs an `IdGenerator` for lease tokens. */
export const layer: Layer.Layer<MetricsStore, never, SqlClient.SqlClient | IdGenerator> = Layer.effect(
  MetricsStore,
  make
)
