import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `api_keys.last_used_at`: when the key last authenticated a request (the developer page shows it).
 * Written at most about once a minute per key and process, never on the request's own path.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT`
})
