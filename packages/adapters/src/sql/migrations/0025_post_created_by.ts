import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `posts.created_by`: the user who created the post (the signed-in user, or the creator of the API
 * key), so a member's rights over a post do not depend on which session or key made it. Existing
 * posts keep NULL: only owners and admins may change them through a browser session.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE posts ADD COLUMN created_by TEXT`
})
