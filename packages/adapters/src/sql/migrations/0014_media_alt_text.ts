import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** A medium's alternative text (`alt_text`), null when none was given. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE media ADD COLUMN alt_text TEXT`
})
