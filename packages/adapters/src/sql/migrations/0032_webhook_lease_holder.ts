import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `webhook_subscriptions.leased_by`: the process (`processes.id`) holding the subscription's delivery
 * claim, so that a claim held by a dead process (its heartbeat stale, or its row gone) is taken over
 * as soon as any live deliverer looks, instead of when the claim's long lease runs out.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_subscriptions ADD COLUMN leased_by TEXT`
})
