import * as SqlClient from "@effect/sql/SqlClient"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import type { Claim } from "@herald/core/publishing/DispatchStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DestinationRow, Instant, LeaseColumns, orPersistence } from "./internal/Rows.js"

const ClaimedAt = Schema.Struct({ claimed_at: Schema.optional(Schema.NullOr(Instant)) })

const ClaimRows = Schema.Array(
  Schema.Struct({ destination: DestinationRow, lease: LeaseColumns, claimed: ClaimedAt })
)

/** A claimed row is a destination plus its lease columns. */
const decodeClaims = (rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(ClaimRows)(rows.map((row) => ({ destination: row, lease: row, claimed: row }))).pipe(
    Effect.map((decoded): ReadonlyArray<Claim> =>
      decoded.map(({ claimed, destination, lease }) => ({
        destination,
        leaseToken: lease.lease_token,
        leaseExpiresAt: lease.lease_expires_at,
        ...(claimed.claimed_at === undefined || claimed.claimed_at === null ? {} : { claimedAt: claimed.claimed_at })
      }))
    )
  )

const byDue = (a: Claim, b: Claim): number =>
  DateTime.toEpochMillis(a.destination.dueAt) - DateTime.toEpochMillis(b.destination.dueAt) ||
  (a.destination.id < b.destination.id ? -1 : a.destination.id > b.destination.id ? 1 : 0)

const NextDue = Schema.Array(Schema.Struct({ next: Schema.NullOr(Instant) }))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const ids = yield* IdGenerator

  return DispatchStore.of({
    claimDue: ({ leaseFor, limit, now, workerId }) =>
      Effect.gen(function*() {
        if (limit <= 0) return []
        const batch = yield* ids.uuid
        const at = DateTime.toEpochMillis(now)
        const expires = at + Duration.toMillis(Duration.decode(leaseFor))
        // One statement per batch. On Postgres, rows another claimer has locked are skipped, so
        // concurrent claimers never take the same destination; SQLite has one writer at a time.
        const lock = sql.onDialectOrElse({
          pg: () => sql.literal("FOR UPDATE SKIP LOCKED"),
          orElse: () => sql.literal("")
        })
        // The pick is a materialized CTE so that it runs exactly once: as an `IN (subquery)` Postgres
        // may rescan it under some plans, and with SKIP LOCKED each scan can pick other rows.
        const rows = yield* sql`WITH picked AS MATERIALIZED (
            SELECT id FROM destinations
            WHERE status = 'queued' AND due_at <= ${at}
            ORDER BY due_at, id
            LIMIT ${limit}
            ${lock}
          )
          UPDATE destinations SET
            status = 'publishing',
            attempts = attempts + 1,
            lease_token = CAST(${batch} AS TEXT) || ':' || id,
            lease_expires_at = ${expires},
            leased_by = ${workerId},
            claimed_at = ${at},
            updated_at = ${at}
          WHERE id IN (SELECT id FROM picked)
          RETURNING *`
        // RETURNING does not keep the subquery's order.
        return [...(yield* decodeClaims(rows))].sort(byDue)
      }).pipe(orPersistence("DispatchStore.claimDue")),

    complete: (claim, completion) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const d = claim.destination
        // Fenced: written only while the destination is still held by this very claim.
        const fence = sql`id = ${d.id} AND status = 'publishing'
          AND lease_token = ${claim.leaseToken} AND attempts = ${d.attempts}`
        const rows = yield* (() => {
          switch (completion._tag) {
            case "Published":
              return sql`UPDATE destinations SET
                  status = 'published',
                  platform_post_id = ${completion.platformPostId},
                  platform_post_url = ${completion.platformPostUrl},
                  published_at = ${DateTime.toEpochMillis(completion.publishedAt)},
                  error = NULL,
                  lease_token = NULL, lease_expires_at = NULL, leased_by = NULL,
                  updated_at = ${now}
                WHERE ${fence} RETURNING id`
            case "Requeued":
              return sql`UPDATE destinations SET
                  status = 'queued',
                  due_at = ${DateTime.toEpochMillis(completion.dueAt)},
                  error = ${completion.error},
                  lease_token = NULL, lease_expires_at = NULL, leased_by = NULL,
                  updated_at = ${now}
                WHERE ${fence} RETURNING id`
            case "Failed":
              return sql`UPDATE destinations SET
                  status = 'failed',
                  error = ${completion.error},
                  failed_at = ${DateTime.toEpochMillis(completion.failedAt)},
                  lease_token = NULL, lease_expires_at = NULL, leased_by = NULL,
                  updated_at = ${now}
                WHERE ${fence} RETURNING id`
          }
        })()
        return rows.length > 0
      }).pipe(orPersistence("DispatchStore.complete")),

    nextDueAt: sql`SELECT MIN(due_at) AS next FROM destinations WHERE status = 'queued'`.pipe(
      Effect.flatMap(Schema.decodeUnknown(NextDue)),
      Effect.map((rows) => Option.fromNullable(rows[0]?.next)),
      orPersistence("DispatchStore.nextDueAt")
    ),

    expiredClaims: (now, limit) =>
      sql`SELECT * FROM destinations
        WHERE status = 'publishing' AND lease_expires_at < ${DateTime.toEpochMillis(now)}
        ORDER BY lease_expires_at, id
        LIMIT ${limit}`.pipe(
        Effect.flatMap(decodeClaims),
        orPersistence("DispatchStore.expiredClaims")
      ),

    renew: (claims, until) =>
      Effect.gen(function*() {
        if (claims.length === 0) return new Set<string>()
        const rows = yield* sql<{ lease_token: string }>`UPDATE destinations
          SET lease_expires_at = ${DateTime.toEpochMillis(until)}
          WHERE status = 'publishing' AND lease_token IN ${sql.in(claims.map((c) => c.leaseToken))}
          RETURNING lease_token`
        return new Set(rows.map((row) => row.lease_token))
      }).pipe(orPersistence("DispatchStore.renew")),

    takeOverAbandoned: ({ deadBefore, leaseFor, limit, now, workerId }) =>
      Effect.gen(function*() {
        if (limit <= 0) return []
        const batch = yield* ids.uuid
        const at = DateTime.toEpochMillis(now)
        const expires = at + Duration.toMillis(Duration.decode(leaseFor))
        const lock = sql.onDialectOrElse({
          pg: () => sql.literal("FOR UPDATE OF destinations SKIP LOCKED"),
          orElse: () => sql.literal("")
        })
        // Exclusive like claimDue: rows another sweeper has locked are skipped (Postgres); SQLite has
        // one writer. The status is checked again in the UPDATE in case a completion won the race.
        const rows = yield* sql`WITH picked AS MATERIALIZED (
            SELECT id FROM destinations
            WHERE status = 'publishing' AND (
              lease_expires_at < ${at}
              OR leased_by IN (SELECT id FROM processes WHERE last_heartbeat_at < ${DateTime.toEpochMillis(deadBefore)})
            )
            ORDER BY lease_expires_at, id
            LIMIT ${limit}
            ${lock}
          )
          UPDATE destinations SET
            lease_token = CAST(${batch} AS TEXT) || ':' || id,
            lease_expires_at = ${expires},
            leased_by = ${workerId},
            updated_at = ${at}
          WHERE id IN (SELECT id FROM picked) AND status = 'publishing'
          RETURNING *`
        return [...(yield* decodeClaims(rows))].sort((a, b) =>
          DateTime.toEpochMillis(a.leaseExpiresAt) - DateTime.toEpochMillis(b.leaseExpiresAt) || byDue(a, b)
        )
      }).pipe(orPersistence("DispatchStore.takeOverAbandoned"))
  })
})

/** Needs an `IdGenerator` for lease tokens. */
export const layer: Layer.Layer<DispatchStore, never, SqlClient.SqlClient | IdGenerator> = Layer.effect(
  DispatchStore,
  make
)
