import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * - `device_authorizations`: device login requests. Both codes are stored as SHA-256 hex only; each
 *   is unique, and the device code is looked up by its hash on every poll.
 * - `connect_sessions`: the connect bridge's sessions, found by id within the organization and by the
 *   nonce of their signed state when the OAuth callback settles them.
 * Both are pruned by expiry (a day after it) when new ones are made, hence the `expires_at` indexes.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE device_authorizations (
    id TEXT PRIMARY KEY,
    device_code_hash TEXT NOT NULL UNIQUE,
    user_code_hash TEXT NOT NULL UNIQUE,
    client_name TEXT,
    status TEXT NOT NULL,
    organization_id TEXT REFERENCES organizations (id) ON DELETE CASCADE,
    api_key_id TEXT,
    interval_seconds INTEGER NOT NULL,
    last_polled_at BIGINT,
    expires_at BIGINT NOT NULL,
    decided_at BIGINT,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at)`
  yield* sql`CREATE TABLE connect_sessions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    platform TEXT NOT NULL,
    nonce TEXT NOT NULL UNIQUE,
    reconnect_account_id BIGINT,
    status TEXT NOT NULL,
    account_id BIGINT,
    reason TEXT,
    expires_at BIGINT NOT NULL,
    settled_at BIGINT,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX connect_sessions_expiry ON connect_sessions (expires_at)`
})
