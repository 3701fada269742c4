import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `webhook_subscriptions.account_ids`: the accounts a subscription receives events about, a JSON
 * array of account ids (those of the key that created it); NULL for every account. Existing
 * subscriptions were created by unrestricted keys or before keys were checked, and keep NULL.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_subscriptions ADD COLUMN account_ids TEXT`
})
