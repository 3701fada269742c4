/**
 * A post's status and the events its changes write (`post.created`, `post.updated`, `post.deleted`
 * and their data), and building a post's destinations.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SocialAccount } from "../domain/Account.js"
import { Destination } from "../domain/Destination.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { DestinationId, EventId, type OrganizationId } from "../kernel/Ids.js"
import { Post, PostStatus } from "../domain/Post.js"
import * as PostLifecycle from "./PostLifecycle.js"
import { type PostRecord } from "./PostStore.js"
import * as TraceContext from "../kernel/TraceContext.js"
import { Caller } from "./PostPorts.js"

/** The reported status, derived from the destinations (`PostLifecycle.derivePostStatus`). */
export const statusOf = (record: PostRecord): PostStatus =>
  PostLifecycle.derivePostStatus({
    isDraft: record.post.isDraft,
    destinations: record.destinations.map((d) => d.status),
    immediate: Option.isNone(record.post.scheduledFor)
  })

export const makeEvent = (organizationId: OrganizationId, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).uuid
    return new Event({
      id: EventId.make(id),
      organizationId,
      type,
      data,
      createdAt: yield* DateTime.now,
      traceParent: yield* TraceContext.current
    })
  })

export const isoOrNull = (t: Option.Option<DateTime.Utc>): string | null =>
  Option.match(t, { onNone: () => null, onSome: DateTime.formatIso })

/** The data of post.scheduled, post.updated and post.deleted. */
export const eventData = (record: PostRecord, extra: EventData = {}): EventData => ({
  post_id: record.post.id,
  status: statusOf(record),
  scheduled_for: isoOrNull(record.post.scheduledFor),
  account_ids: record.post.accountIds,
  ...extra
})

export const requestedBy = (caller: Caller) => ({
  api_key_id: caller.key.id,
  user_id: Option.getOrNull(caller.key.createdBy)
})

// ---------------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------------

export const newDestinations = (
  post: Post,
  accounts: ReadonlyArray<SocialAccount>,
  dueAt: DateTime.Utc,
  now: DateTime.Utc
) =>
  Effect.forEach(
    accounts,
    (account) =>
      Effect.map(Effect.flatMap(IdGenerator, (ids) => ids.uuid), (id) =>
        Destination.queued({ id: DestinationId.make(id), post, account, dueAt, now }))
  )
