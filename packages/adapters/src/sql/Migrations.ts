import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import foundation from "./migrations/0001_foundation.js"
import storeIndexes from "./migrations/0002_store_indexes.js"
import webhooks from "./migrations/0003_webhooks.js"
import media from "./migrations/0004_media.js"
import housekeeping from "./migrations/0005_housekeeping.js"
import processes from "./migrations/0006_processes.js"
import campaigns from "./migrations/0007_campaigns.js"
import queue from "./migrations/0008_queue.js"
import aiCredits from "./migrations/0009_ai_credits.js"
import deviceLogin from "./migrations/0010_device_login.js"
import metrics from "./migrations/0013_metrics.js"
import mediaAltText from "./migrations/0014_media_alt_text.js"
import requestCounters from "./migrations/0016_request_counters.js"
import usersSessions from "./migrations/0018_users_sessions.js"
import apiKeyLastUsed from "./migrations/0019_api_key_last_used.js"
import pgClaimOrder from "./migrations/0023_pg_claim_order.js"
import webhookAccountScope from "./migrations/0024_webhook_account_scope.js"
import postCreatedBy from "./migrations/0025_post_created_by.js"
import storeHeartbeat from "./migrations/0031_store_heartbeat.js"
import webhookLeaseHolder from "./migrations/0032_webhook_lease_holder.js"
import postListing from "./migrations/0033_post_listing.js"
import idempotencyKeys from "./migrations/0040_idempotency_keys.js"
import traceContext from "./migrations/0060_trace_context.js"
import analyticsRollups from "./migrations/0061_analytics_rollups.js"
import requestCounterEnds from "./migrations/0064_request_counter_ends.js"
import eventsLean from "./migrations/0065_events_lean.js"
import invitations from "./migrations/0068_invitations.js"
import notificationsComments from "./migrations/0069_notifications_comments.js"
import metricsDueIndexes from "./migrations/0075_metrics_due_indexes.js"
import pgTriggerLookups from "./migrations/0076_pg_trigger_lookups.js"
import pgPostUpdatedStatement from "./migrations/0077_pg_post_updated_statement.js"
import pgTransitionJoinsPlanned from "./migrations/0078_pg_transition_joins_planned.js"

/** Herald's own migrations table, so an embedding host's `effect_sql_migrations` never clashes. */
export const table = "herald_migrations"

/**
 * Every migration, in order. A new one is a new `NNNN_name` entry here and a module beside the others.
 */
export const loader = Migrator.fromRecord({
  "0001_foundation": foundation,
  "0002_store_indexes": storeIndexes,
  "0003_webhooks": webhooks,
  "0004_media": media,
  "0005_housekeeping": housekeeping,
  "0006_processes": processes,
  "0007_campaigns": campaigns,
  "0008_queue": queue,
  "0009_ai_credits": aiCredits,
  "0010_device_login": deviceLogin,
  "0013_metrics": metrics,
  "0014_media_alt_text": mediaAltText,
  "0016_request_counters": requestCounters,
  "0018_users_sessions": usersSessions,
  "0019_api_key_last_used": apiKeyLastUsed,
  "0023_pg_claim_order": pgClaimOrder,
  "0024_webhook_account_scope": webhookAccountScope,
  "0025_post_created_by": postCreatedBy,
  "0031_store_heartbeat": storeHeartbeat,
  "0032_webhook_lease_holder": webhookLeaseHolder,
  "0033_post_listing": postListing,
  "0040_idempotency_keys": idempotencyKeys,
  "0060_trace_context": traceContext,
  "0061_analytics_rollups": analyticsRollups,
  "0064_request_counter_ends": requestCounterEnds,
  "0065_events_lean": eventsLean,
  "0068_invitations": invitations,
  "0069_notifications_comments": notificationsComments,
  "0075_metrics_due_indexes": metricsDueIndexes,
  "0076_pg_trigger_lookups": pgTriggerLookups,
  "0077_pg_post_updated_statement": pgPostUpdatedStatement,
  "0078_pg_transition_joins_planned": pgTransitionJoinsPlanned
})

/**
 * The migrations table, made before the migrator runs. The migrator creates it outside its lock, and
 * two processes starting at once on a fresh Postgres database race there (Postgres answers the loser
 * with a unique violation): here the creation is serialized by a transaction-scoped advisory lock.
 * The columns are the migrator's own.
 */
const ensureTable = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    pg: () =>
      sql.withTransaction(
        Effect.zipRight(
          sql`SELECT pg_advisory_xact_lock(${migrationsTableLock})`,
          sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
            migration_id integer primary key,
            created_at timestamp with time zone not null default now(),
            name text not null
          )`
        )
      ).pipe(Effect.asVoid),
    orElse: () => Effect.void
  }))

/** The advisory lock key of the migrations table's creation (any constant shared by every process). */
const migrationsTableLock = 7_301_060

/** Applies pending migrations in one transaction; on Postgres concurrent runners wait on a table lock. */
export const run = Effect.zipRight(ensureTable, Migrator.make({})({ loader, table })).pipe(
  Effect.withSpan("Migrations.run")
)

/** A migration as the loader and the table name it: `0007_campaigns`. */
export const label = (id: number, name: string): string => `${String(id).padStart(4, "0")}_${name}`

export interface Check {
  /** What `run` would apply, in order: every migration newer than the newest applied one. */
  readonly pending: ReadonlyArray<string>
  /** Applied migrations this build does not know: a newer Herald migrated the store. */
  readonly unknown: ReadonlyArray<string>
}

/**
 * What `run` would do to the store, changing nothing: the migrations table is only read (a store
 * without it has every migration pending).
 */
export const check: Effect.Effect<Check, SqlError | Migrator.MigrationError, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const known = yield* loader
    const present = yield* sql.onDialectOrElse({
      pg: () => sql<{ readonly present: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS present`,
      orElse: () =>
        sql<
          { readonly present: number }
        >`SELECT COUNT(*) AS present FROM sqlite_master WHERE type = 'table' AND name = ${table}`
    })
    const applied = present[0]?.present
      ? (yield* sql<{ readonly migration_id: number | string; readonly name: string }>`
        SELECT migration_id, name FROM ${sql(table)} ORDER BY migration_id`.withoutTransform)
        .map((row) => ({ id: Number(row.migration_id), name: row.name }))
      : []
    const newest = Math.max(0, ...applied.map((m) => m.id))
    const knownIds = new Set(known.map(([id]) => id))
    return {
      pending: known.filter(([id]) => id > newest).map(([id, name]) => label(id, name)),
      unknown: applied.filter((m) => !knownIds.has(m.id)).map((m) => label(m.id, m.name))
    }
  }
).pipe(Effect.withSpan("Migrations.check"))
