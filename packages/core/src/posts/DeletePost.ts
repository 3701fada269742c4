/**
 * DELETE /posts/{id}: a post that is not publishing, with its destinations, and its event.
 */
import * as Effect from "effect/Effect"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { type PostRecord, PostStore } from "./PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import * as Spans from "../kernel/Spans.js"
import { Caller } from "./PostPorts.js"
import { eventData, makeEvent } from "./PostEvents.js"
import { get } from "./PostViews.js"
import { lockAndLoad, notEditable } from "./UpdatePost.js"

/**
 * DELETE /posts/{id}: removes the post and its destinations (published copies stay on the
 * platforms). Refused with 400 `invalid_post_status` while a destination is publishing.
 */
export const remove = (
  caller: Caller,
  rawId: string
): Effect.Effect<
  PostRecord,
  DomainError | PersistenceError,
  PostStore | EventStore | Transactor | IdGenerator | UsageCounters
> =>
  Effect.gen(function*() {
    const existing = yield* get(caller, rawId)
    const transactor = yield* Transactor
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const locked = yield* lockAndLoad(caller, existing.post.id)
      if (locked.destinations.some((d) => d.status === "publishing")) {
        return yield* notEditable(
          "A destination of this post is publishing right now; delete the post once it has settled",
          "publishing"
        )
      }
      yield* (yield* PostStore).delete(locked.post.organizationId, locked.post.id)
      const event = yield* makeEvent(locked.post.organizationId, "post.deleted", eventData(locked))
      yield* (yield* EventStore).append([event])
      return locked
    }))
  }).pipe(Spans.withSpan("Posts.remove"))
