import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Webhook subscriptions, their deliveries (one per event and subscription, created in the event's
 * transaction) and the attempts made for them.
 *
 * - `webhook_subscription_events`: one row per subscribed event type, so the fan-out of an event is a
 *   plain indexed join (no dialect-specific JSON functions); `events` keeps the list as given.
 * - Subscriptions carry a lease (`lease_token`, `lease_expires_at`): the deliverer claims a whole
 *   subscription, so one target is sent to by one process at a time, in event order.
 * - `webhook_deliveries.seq` on Postgres (SQLite uses `rowid`) is the event order per subscription.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const seq = sql.onDialectOrElse({ pg: () => sql.literal("seq BIGSERIAL,"), orElse: () => sql.literal("") })

  yield* sql`CREATE TABLE webhook_subscriptions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    name TEXT,
    secret TEXT NOT NULL,
    is_active INTEGER NOT NULL,
    consecutive_failures INTEGER NOT NULL,
    last_delivery_at BIGINT,
    last_status INTEGER,
    lease_token TEXT,
    lease_expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_subscriptions_by_organization ON webhook_subscriptions (organization_id, created_at)`

  yield* sql`CREATE TABLE webhook_subscription_events (
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    PRIMARY KEY (subscription_id, event_type)
  )`
  yield* sql`CREATE INDEX webhook_subscription_events_by_type
    ON webhook_subscription_events (organization_id, event_type)`

  yield* sql`CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    ${seq}
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at BIGINT,
    lease_token TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (subscription_id, event_id)
  )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (subscription_id, next_attempt_at)
    WHERE status = 'pending'`

  yield* sql`CREATE TABLE webhook_attempts (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    status_code INTEGER,
    duration_ms BIGINT NOT NULL,
    response_body TEXT NOT NULL,
    error TEXT,
    attempted_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_attempts_by_subscription ON webhook_attempts (subscription_id, attempted_at)`
})
