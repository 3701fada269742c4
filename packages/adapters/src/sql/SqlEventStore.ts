import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as FastRows from "./internal/FastRows.js"
import { EventRow, orPersistence } from "./internal/Rows.js"

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(EventRow))
  // Ties on created_at keep the append order.
  const skipLocked = sql.onDialectOrElse({
    pg: () => sql.literal("FOR UPDATE OF e SKIP LOCKED"),
    orElse: () => sql.literal("")
  })
  const appendOrder = sql.onDialectOrElse({ pg: () => sql.literal("seq"), orElse: () => sql.literal("rowid") })

  return EventStore.of({
    append: (events) =>
      events.length === 0 ? Effect.void : Effect.try(() => events.map(FastRows.eventRow)).pipe(
        Effect.flatMap((rows) => sql`INSERT INTO events ${sql.insert(rows)}`),
        Effect.asVoid,
        orPersistence("EventStore.append")
      ),
    list: (organizationId, options) => {
      const byPost = options?.postId === undefined ? sql`` : sql`AND post_id = ${options.postId}`
      const limit = options?.limit === undefined ? sql`` : sql`LIMIT ${options.limit}`
      return sql`SELECT * FROM events WHERE organization_id = ${organizationId} ${byPost}
        ORDER BY created_at, ${appendOrder} ${limit}`.pipe(
        Effect.flatMap(decode),
        orPersistence("EventStore.list")
      )
    },
    // One batch: per organization by `events_by_organization` (organization_id, created_at), so the
    // pick reads only events past the cutoff and stops at the limit (no ORDER BY, which would sort
    // every event past the cutoff first). An event a pending delivery still
    // has to send stays: the pending deliveries of its organization's subscriptions are found by the
    // (subscription_id, event_id) unique index. On Postgres rows another pruner picked are skipped.
    prune: (before, limit) =>
      limit <= 0 ? Effect.succeed(0) : sql`DELETE FROM events WHERE id IN (
          SELECT e.id FROM events e
          WHERE e.organization_id IN (SELECT o.id FROM organizations o)
            AND e.created_at < ${DateTime.toEpochMillis(before)}
            AND NOT EXISTS (
              SELECT 1 FROM webhook_subscriptions s
              JOIN webhook_deliveries d ON d.subscription_id = s.id AND d.event_id = e.id
              WHERE s.organization_id = e.organization_id AND d.status = 'pending'
            )
          LIMIT ${Math.trunc(limit)} ${skipLocked}
        ) RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("EventStore.prune")
      ),
    findById: (id) =>
      sql`SELECT * FROM events WHERE id = ${id}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("EventStore.findById")
      )
  })
})

export const layer: Layer.Layer<EventStore, never, SqlClient.SqlClient> = Layer.effect(EventStore, make)
