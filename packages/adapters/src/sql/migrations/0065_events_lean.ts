import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Drops `events_by_post`: no statement the server runs reads events by post (the deliverer reads them
 * by id, the SDK's subscription by organization and time, housekeeping by organization and time), and
 * the index cost about 14 % of the events' bytes, kept up on every append. `EventStore.list` with a
 * post still answers, by the organization's events.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX events_by_post`
})
