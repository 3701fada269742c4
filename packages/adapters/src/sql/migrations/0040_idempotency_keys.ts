import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `idempotency_keys`: the create requests sent with an `Idempotency-Key` header, one row per
 * organization and key (the primary key is what lets only one of two concurrent requests take a
 * key). `state` is `in_flight` while the first request runs (`holder` is its request id), then
 * `completed` with the status and response body to answer again (sealed with the credentials cipher
 * where one is configured: a webhook's secret is in its create answer). A row counts until
 * `expires_at` (24 hours after `started_at`); housekeeping deletes expired rows by `expires_at`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE idempotency_keys (
    organization_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    holder TEXT NOT NULL,
    status_code INTEGER,
    response_body TEXT,
    started_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (organization_id, idempotency_key)
  )`
  yield* sql`CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)`
})
