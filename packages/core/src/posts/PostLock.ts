/**
 * A per-post lock held for the rest of a transaction: the engine takes it when it settles one of a
 * post's destinations, and the edits of a post (update, approval) take it before they read the post,
 * so an edit and a settlement of the same post never interleave.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { UsageCounters } from "../access/UsageCounters.js"
import type { PersistenceError } from "../kernel/Errors.js"
import { type PostId } from "../kernel/Ids.js"

/**
 * Serializes the settlements of one post's destinations, so that exactly one of them sees the post
 * settled and fires `post.partially_failed`. The counter's upsert holds a row lock until commit on
 * Postgres (SQLite serializes every transaction anyway); its value is not used.
 */
export const lockPost = (postId: PostId): Effect.Effect<void, PersistenceError, UsageCounters> =>
  Effect.flatMap(
    UsageCounters,
    (counters) => Effect.asVoid(counters.increment(`dispatch:settle:${postId}`, DateTime.unsafeMake(0), 1))
  )
