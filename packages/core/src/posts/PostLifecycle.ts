/**
 * The post status, derived from the destinations every time it is read (the spec leaves the rule
 * open; docs/decisions/posts.md "State machines"). The SQL post list implements the same rule for its filter.
 */
import type { DestinationStatus } from "../domain/Destination.js"
import type { PostStatus } from "../domain/Post.js"

export interface StatusInput {
  readonly isDraft: boolean
  readonly destinations: ReadonlyArray<DestinationStatus>
  /**
   * An immediate publish (no `scheduled_for`: POST /posts without one, or schedule with
   * `publish_now`): its queued destinations are due now, so it is already `publishing`.
   */
  readonly immediate?: boolean
}

const count = (statuses: ReadonlyArray<DestinationStatus>) => {
  let queued = 0
  let publishing = 0
  let published = 0
  let failed = 0
  for (const status of statuses) {
    if (status === "queued") queued++
    else if (status === "publishing") publishing++
    else if (status === "published") published++
    else failed++
  }
  return { queued, publishing, published, failed, total: statuses.length }
}

/**
 * - a draft is `draft`;
 * - nothing started (no destinations, or all `queued`) is `scheduled`, except an immediate publish
 *   with destinations, which is `publishing` from the start (they are due now);
 * - anything in flight (a `publishing` destination, or `queued` beside settled ones) is `publishing`;
 * - all settled: all `published` is `published`, all `failed` is `failed`, a mix is `partially_failed`.
 */
export const derivePostStatus = (input: StatusInput): PostStatus => {
  if (input.isDraft) return "draft"
  const c = count(input.destinations)
  if (c.queued === c.total) return input.immediate === true && c.total > 0 ? "publishing" : "scheduled"
  if (c.publishing > 0 || c.queued > 0) return "publishing"
  if (c.published === c.total) return "published"
  if (c.failed === c.total) return "failed"
  return "partially_failed"
}

export type SettledOutcome = "published" | "failed" | "partially_failed" | "unsettled"

/** How a post's destinations ended, once none is `queued` or `publishing`. */
export const settledOutcome = (statuses: ReadonlyArray<DestinationStatus>): SettledOutcome => {
  const c = count(statuses)
  if (c.total === 0 || c.queued > 0 || c.publishing > 0) return "unsettled"
  if (c.published === c.total) return "published"
  if (c.failed === c.total) return "failed"
  return "partially_failed"
}
