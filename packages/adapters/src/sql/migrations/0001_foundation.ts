import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Portable column types, the same on SQLite and Postgres: instants are epoch milliseconds (BIGINT),
 * booleans are 0/1 (INTEGER), JSON is TEXT. Only auto-increment ids differ by dialect.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const serial = sql.onDialectOrElse({
    pg: () => sql.literal("BIGSERIAL PRIMARY KEY"),
    orElse: () => sql.literal("INTEGER PRIMARY KEY AUTOINCREMENT")
  })

  yield* sql`CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    plan TEXT NOT NULL,
    subscription_status TEXT NOT NULL,
    trial_ends_at BIGINT,
    created_at BIGINT NOT NULL
  )`

  yield* sql`CREATE TABLE users (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX users_organization ON users (organization_id)`

  yield* sql`CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_by TEXT,
    name TEXT NOT NULL,
    hint TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    account_ids TEXT,
    expires_at BIGINT,
    revoked_at BIGINT,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX api_keys_organization ON api_keys (organization_id)`

  yield* sql`CREATE TABLE social_accounts (
    id ${serial},
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    platform TEXT NOT NULL,
    platform_account_id TEXT NOT NULL,
    account_name TEXT NOT NULL,
    avatar_url TEXT NOT NULL,
    is_active INTEGER NOT NULL,
    connection_flow TEXT NOT NULL,
    needs_reconnection INTEGER NOT NULL,
    token_expires_at BIGINT,
    last_success_at BIGINT,
    recent_failures INTEGER NOT NULL,
    credentials TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (organization_id, platform, platform_account_id)
  )`

  yield* sql`CREATE TABLE campaigns (
    id ${serial},
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX campaigns_organization ON campaigns (organization_id, created_at)`

  yield* sql`CREATE TABLE posts (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_by_key TEXT,
    content TEXT NOT NULL,
    account_ids TEXT NOT NULL,
    platform_content TEXT NOT NULL,
    media_ids TEXT NOT NULL,
    scheduled_for BIGINT,
    timezone TEXT,
    campaign_id BIGINT,
    is_draft INTEGER NOT NULL,
    created_status TEXT NOT NULL,
    approval TEXT,
    approval_status TEXT,
    idempotency_key TEXT,
    request_hash TEXT,
    thread_posts TEXT NOT NULL,
    use_queue INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX posts_by_created ON posts (organization_id, created_at)`
  yield* sql`CREATE INDEX posts_by_scheduled ON posts (organization_id, scheduled_for)`
  yield* sql`CREATE INDEX posts_by_updated ON posts (organization_id, updated_at)`
  yield* sql`CREATE INDEX posts_by_campaign ON posts (organization_id, campaign_id)`

  yield* sql`CREATE TABLE destinations (
    id TEXT PRIMARY KEY,
    post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    platform TEXT NOT NULL,
    account_name TEXT NOT NULL,
    status TEXT NOT NULL,
    due_at BIGINT NOT NULL,
    attempts INTEGER NOT NULL,
    error TEXT,
    platform_post_id TEXT,
    platform_post_url TEXT,
    published_at BIGINT,
    failed_at BIGINT,
    metrics TEXT NOT NULL,
    lease_token TEXT,
    lease_expires_at BIGINT,
    leased_by TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX destinations_by_post ON destinations (post_id)`
  yield* sql`CREATE INDEX destinations_by_account ON destinations (organization_id, account_id)`
  // The dispatcher's two hot queries: due queued work, and leases that ran out.
  yield* sql`CREATE INDEX destinations_due ON destinations (due_at) WHERE status = 'queued'`
  yield* sql`CREATE INDEX destinations_leases ON destinations (lease_expires_at) WHERE status = 'publishing'`

  yield* sql`CREATE TABLE events (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    type TEXT NOT NULL,
    post_id TEXT,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX events_by_organization ON events (organization_id, created_at)`
  yield* sql`CREATE INDEX events_by_post ON events (post_id)`

  yield* sql`CREATE TABLE usage_counters (
    key TEXT NOT NULL,
    window_end BIGINT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (key, window_end)
  )`
  yield* sql`CREATE INDEX usage_counters_by_end ON usage_counters (window_end)`

  yield* sql`CREATE TABLE queues (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    timezone TEXT NOT NULL,
    openings TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`
})
