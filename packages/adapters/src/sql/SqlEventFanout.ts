/**
 * The SQL `EventStore` with webhook fan-out: appending events also creates one pending delivery per
 * active subscription of the event's organization that names the event type, in the same transaction
 * (a savepoint when the caller already runs one). Every emitter that appends events therefore gets
 * webhooks without knowing about them, and an event is never committed without its deliveries.
 *
 * The fan-out of a whole append is ONE statement (`INSERT … SELECT` over the events just written,
 * joined to the subscriptions), however many events and subscriptions it covers: the dispatcher
 * appends a round's events at once. On Postgres the events' insert is a CTE of that same statement,
 * so an append is one round trip and needs no savepoint inside the caller's transaction. Delivery ids are random (v4) UUIDs made by the database, since
 * how many deliveries an append makes is known only there.
 *
 * A subscription scoped to accounts (`account_ids` not NULL) gets a delivery only for an event about
 * at least one account, all of them in its scope (`EventAccounts.reaches`). The accounts of each event
 * travel with the statement as JSON (they are not stored with the event): SQLite reads them with
 * `json_each`, Postgres compares them by `jsonb` containment.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Event } from "@herald/core/webhooks/Event"
import * as EventAccounts from "@herald/core/webhooks/EventAccounts"
import * as FastRows from "./internal/FastRows.js"
import { orPersistence } from "./internal/Rows.js"
import * as SqlEventStore from "./SqlEventStore.js"

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const base = yield* SqlEventStore.make
  // The events' append order (Postgres `seq`, SQLite `rowid`) becomes their delivery order.
  const appendOrder = sql.onDialectOrElse({ pg: () => sql.literal("e.seq"), orElse: () => sql.literal("e.rowid") })
  const randomUuid = sql.onDialectOrElse({
    pg: () => sql.literal("CAST(gen_random_uuid() AS TEXT)"),
    orElse: () =>
      sql.literal(
        "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2)" +
          " || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-'" +
          " || lower(hex(randomblob(6)))"
      )
  })

  /** SQLite: the deliveries of events already inserted; `accounts` maps each event id to its accounts. */
  const fanout = (events: ReadonlyArray<Event>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const accounts = JSON.stringify(Object.fromEntries(events.map((e) => [e.id, EventAccounts.accountsOf(e)])))
      return sql`INSERT INTO webhook_deliveries
          (id, subscription_id, organization_id, event_id, event_type, status, attempts, next_attempt_at,
           created_at, updated_at)
        SELECT ${randomUuid}, s.id, e.organization_id, e.id, e.type, 'pending', 0,
          CAST(${now} AS BIGINT), CAST(${now} AS BIGINT), CAST(${now} AS BIGINT)
        FROM events e
        JOIN json_each(${accounts}) ea ON ea.key = e.id
        JOIN webhook_subscription_events se ON se.organization_id = e.organization_id AND se.event_type = e.type
        JOIN webhook_subscriptions s ON s.id = se.subscription_id AND s.is_active = 1
        WHERE e.id IN ${sql.in(events.map((e) => e.id))}
          AND (s.account_ids IS NULL OR (json_array_length(ea.value) > 0 AND NOT EXISTS (
            SELECT 1 FROM json_each(ea.value) a
            WHERE a.value NOT IN (SELECT scope.value FROM json_each(s.account_ids) scope))))
        ORDER BY ${appendOrder}, s.created_at, s.id`
    }).pipe(
      Effect.asVoid,
      orPersistence("EventStore.fanout")
    )

  /**
   * Postgres: the events and their deliveries in ONE statement, atomic by itself (no savepoint): the
   * fan-out reads the events the CTE just inserted (RETURNING), in their append order (`seq`).
   */
  const appendPg = (events: ReadonlyArray<Event>) =>
    Effect.gen(function*() {
      // The rows as `SqlEventStore` writes them: an event is valid already, nothing to check again.
      // All of them as ONE JSON parameter, inserted in their order (WITH ORDINALITY): 6 bind parameters
      // per event cost Node their building and binding, and Postgres parsing 3,000 per 500 events. Every
      // text is well-formed: ids are checked ids, and `data` is JSON.stringify's own output.
      // `accounts` (the event's accounts, for scoped subscriptions) is read by the fan-out, not stored.
      const rows = JSON.stringify(
        events.map((e) => ({ ...FastRows.eventRow(e), accounts: EventAccounts.accountsOf(e) }))
      )
      const now = yield* Clock.currentTimeMillis
      yield* sql`WITH r AS (
          SELECT * FROM ROWS FROM (json_to_recordset(CAST(${rows} AS JSON)) AS (
            id TEXT, organization_id TEXT, type TEXT, data TEXT, created_at BIGINT, post_id TEXT, trace_parent TEXT,
            accounts JSONB
          )) WITH ORDINALITY AS r(id, organization_id, type, data, created_at, post_id, trace_parent, accounts, n)
        ), e AS (
          INSERT INTO events (id, organization_id, type, data, created_at, post_id, trace_parent)
          SELECT id, organization_id, type, data, created_at, post_id, trace_parent FROM r
          ORDER BY n
          RETURNING id, organization_id, type, seq
        )
        INSERT INTO webhook_deliveries
          (id, subscription_id, organization_id, event_id, event_type, status, attempts, next_attempt_at,
           created_at, updated_at)
        SELECT ${randomUuid}, s.id, e.organization_id, e.id, e.type, 'pending', 0,
          CAST(${now} AS BIGINT), CAST(${now} AS BIGINT), CAST(${now} AS BIGINT)
        FROM e
        JOIN webhook_subscription_events se ON se.organization_id = e.organization_id AND se.event_type = e.type
        JOIN webhook_subscriptions s ON s.id = se.subscription_id AND s.is_active = 1
        JOIN r ON r.id = e.id
        WHERE s.account_ids IS NULL
          OR (jsonb_array_length(r.accounts) > 0 AND r.accounts <@ CAST(s.account_ids AS JSONB))
        ORDER BY e.seq, s.created_at, s.id`
    })

  return EventStore.of({
    ...base,
    append: (events) =>
      events.length === 0 ? Effect.void : sql.onDialectOrElse({
        pg: () => appendPg(events).pipe(orPersistence("EventStore.append")),
        orElse: () =>
          sql.withTransaction(Effect.zipRight(base.append(events), fanout(events))).pipe(
            orPersistence("EventStore.append")
          )
      })
  })
})

/** The event store of `SqlEventStore`, plus webhook deliveries. */
export const layer: Layer.Layer<EventStore, never, SqlClient.SqlClient> = Layer.effect(EventStore, make)
