import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Dashboard sign-in:
 * - `users.password_hash`: the self-describing scrypt hash; NULL until the user sets a password.
 *   Users are found by email at sign-in (emails are stored lower-cased), hence the index.
 * - `sessions`: browser sessions, found by the SHA-256 of the cookie token; ended per user (sign-out
 *   everywhere) and purged by age and idleness, hence the indexes.
 * - `password_tokens`: one-time password-set tokens by their SHA-256.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE users ADD COLUMN password_hash TEXT`
  yield* sql`CREATE INDEX users_email ON users (email)`
  yield* sql`CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX sessions_user ON sessions (user_id)`
  yield* sql`CREATE INDEX sessions_created ON sessions (created_at)`
  yield* sql`CREATE INDEX sessions_last_seen ON sessions (last_seen_at)`
  yield* sql`CREATE TABLE password_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
  )`
})
