import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The AI credit ledger: one row per charge (reserved before the provider is called, settled after at
 * what was delivered). The month's total that `GET /me` shows and that reservations are checked
 * against is the `usage_counters` row `ai_credits:<organization>`; this table is the history that
 * `usedBetween` sums (analytics), by organization and time.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE ai_credit_charges (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    operation TEXT NOT NULL,
    model TEXT NOT NULL,
    reserved INTEGER NOT NULL,
    credits INTEGER NOT NULL,
    settled INTEGER NOT NULL,
    window_end BIGINT NOT NULL,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX ai_credit_charges_by_org_time ON ai_credit_charges (organization_id, created_at)`
})
