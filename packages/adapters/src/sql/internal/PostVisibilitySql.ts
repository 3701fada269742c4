/**
 * Which posts a key restricted to some accounts may see, in SQL: every target of the post, whether
 * named in its account_ids (`post_targets`) or as a destination, must be one of the key's accounts; a
 * post with no target at all is visible only to unrestricted keys. The post list and the analytics
 * summary both filter by this one fragment.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import type { AccountId } from "@herald/core/kernel/Ids"

/** `post` is the alias the query gives the posts table (a fixed identifier, never caller input). */
export const visibleThrough = (
  sql: SqlClient.SqlClient,
  post: "p" | "l",
  accountIds: ReadonlyArray<AccountId>
): Statement.Fragment => {
  const id = sql.literal(`${post}.id`)
  return accountIds.length === 0
    ? sql`(NOT EXISTS (SELECT 1 FROM destinations vd WHERE vd.post_id = ${id})
        AND NOT EXISTS (SELECT 1 FROM post_targets vt WHERE vt.post_id = ${id}))`
    : sql`(NOT EXISTS (SELECT 1 FROM destinations vd WHERE vd.post_id = ${id} AND vd.account_id NOT IN ${
      sql.in(accountIds)
    })
        AND NOT EXISTS (SELECT 1 FROM post_targets vt WHERE vt.post_id = ${id} AND vt.account_id NOT IN ${
      sql.in(accountIds)
    }))`
}
