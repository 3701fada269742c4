import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Campaign fields existing clients send: `color` (`#rrggbb` or null) and `status` (`active` |
 * `archived`; existing rows become `active`). The list filters on status, newest first.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE campaigns ADD COLUMN color TEXT`
  yield* sql`ALTER TABLE campaigns ADD COLUMN status TEXT NOT NULL DEFAULT 'active'`
  yield* sql`CREATE INDEX campaigns_by_status ON campaigns (organization_id, status, created_at)`
})
