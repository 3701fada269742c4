/**
 * The columns of `posts` that the post list, `/me` and analytics filter, sort and count by, derived
 * from the post's destinations and kept by triggers in the transaction of every write that changes
 * them (migration `0033_post_listing`): whichever store or statement writes a destination, the post's
 * `status` and `last_published_at` change with it, so reads filter and sort through indexes instead of
 * aggregating every destination of the organization.
 *
 * `status` is core's PostLifecycle.derivePostStatus: draft flag; no destinations -> scheduled; all
 * queued -> publishing for an immediate publish (no scheduled_for), else scheduled; any publishing, or
 * queued beside settled -> publishing; all published; all failed; else partially_failed.
 */

const count = (condition: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END)`

/** The derived status of the post row `posts` (an UPDATE's target), from its destinations. */
export const statusOf = `CASE WHEN posts.is_draft = 1 THEN 'draft' ELSE (
    SELECT CASE
      WHEN COUNT(*) = 0 THEN 'scheduled'
      WHEN ${count("d.status = 'queued'")} = COUNT(*) THEN
        CASE WHEN posts.scheduled_for IS NULL THEN 'publishing' ELSE 'scheduled' END
      WHEN ${count("d.status IN ('publishing', 'queued')")} > 0 THEN 'publishing'
      WHEN ${count("d.status = 'published'")} = COUNT(*) THEN 'published'
      WHEN ${count("d.status = 'failed'")} = COUNT(*) THEN 'failed'
      ELSE 'partially_failed'
    END FROM destinations d WHERE d.post_id = posts.id
  ) END`

/** The latest publish time of the post row `posts` over its destinations. */
export const lastPublishedOf = `(SELECT MAX(d.published_at) FROM destinations d WHERE d.post_id = posts.id)`

/**
 * The statement that recomputes both columns for the posts `where` selects (on the table `posts`),
 * writing only the rows whose values change (a claim of one of several queued destinations leaves its
 * post `publishing`: no new row version).
 */
export const refresh = (where: string) =>
  `UPDATE posts SET status = ${statusOf}, last_published_at = ${lastPublishedOf}
    WHERE (${where}) AND (status IS DISTINCT FROM ${statusOf} OR last_published_at IS DISTINCT FROM ${lastPublishedOf})`
