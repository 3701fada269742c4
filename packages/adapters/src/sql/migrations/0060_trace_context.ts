import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `posts.trace_parent` and `events.trace_parent`: the W3C `traceparent` of the span that created the
 * post or caused the event, when it was traced, so that the post's publishes and the event's webhook
 * deliveries, in whichever process, join that trace. Nullable and added only: a server of the
 * previous version keeps writing rows without it (NULL: not traced), and rows written here are read
 * there as before.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE posts ADD COLUMN trace_parent TEXT`
  yield* sql`ALTER TABLE events ADD COLUMN trace_parent TEXT`
})
