/**
 * The SQL `EventStore` with webhook fan-out: appending events also creates one pending delivery per
 * active subscription of the event's organization that names the event type, in the same transaction
 * (a savepoint when the caller already runs one). Every emitter that appends events therefore gets
 * webhooks without knowing about them, and an event is never committed without its deliveries.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Event } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { orPersistence } from "./internal/Rows.js"
import * as SqlEventStore from "./SqlEventStore.js"

const Match = Schema.Array(Schema.Struct({
  subscription_id: Schema.String,
  organization_id: Schema.String,
  event_type: Schema.String
}))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const ids = yield* IdGenerator
  const base = yield* SqlEventStore.make

  /** Deliveries for the events, inserted in event order (which becomes their delivery order). */
  const fanout = (events: ReadonlyArray<Event>) =>
    Effect.gen(function*() {
      const organizations = Arr.dedupe(events.map((e) => e.organizationId))
      const types = Arr.dedupe(events.map((e) => e.type))
      const matches = yield* sql`SELECT se.subscription_id, se.organization_id, se.event_type
        FROM webhook_subscription_events se
        JOIN webhook_subscriptions s ON s.id = se.subscription_id
        WHERE se.organization_id IN ${sql.in(organizations)} AND se.event_type IN ${sql.in(types)}
          AND s.is_active = 1
        ORDER BY s.created_at, s.id`.pipe(Effect.flatMap(Schema.decodeUnknown(Match)))
      if (matches.length === 0) return
      const now = yield* Clock.currentTimeMillis
      const rows: Array<Record<string, string | number>> = []
      for (const event of events) {
        for (const match of matches) {
          if (match.organization_id !== event.organizationId || match.event_type !== event.type) continue
          rows.push({
            id: yield* ids.uuid,
            subscription_id: match.subscription_id,
            organization_id: event.organizationId,
            event_id: event.id,
            event_type: event.type,
            status: "pending",
            attempts: 0,
            next_attempt_at: now,
            created_at: now,
            updated_at: now
          })
        }
      }
      yield* sql`INSERT INTO webhook_deliveries ${sql.insert(rows)}`
    }).pipe(orPersistence("EventStore.fanout"))

  return EventStore.of({
    ...base,
    append: (events) =>
      events.length === 0 ? Effect.void : sql.withTransaction(Effect.zipRight(base.append(events), fanout(events))).pipe(
        orPersistence("EventStore.append")
      )
  })
})

/** The event store of `SqlEventStore`, plus webhook deliveries. Needs an `IdGenerator` for delivery ids. */
export const layer: Layer.Layer<EventStore, never, SqlClient.SqlClient | IdGenerator> = Layer.effect(EventStore, make)
