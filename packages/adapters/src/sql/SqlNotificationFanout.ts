/**
 * The SQL `EventStore` of `SqlEventFanout` (events and their webhook deliveries), plus in-app
 * notifications: an append that holds an event someone is notified of (`Notifications.notifyingTypes`)
 * also writes those notifications, in the same transaction (a savepoint inside the caller's). So, like
 * webhooks, every emitter notifies without knowing about it, and an event is never committed without
 * its notifications. An append without such an event (most of the dispatcher's) costs nothing more.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Role } from "@herald/core/access/Organization"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { OrganizationId, PostId, UserId } from "@herald/core/kernel/Ids"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Notifications from "@herald/core/workflow/Notifications"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { orPersistence } from "./internal/Rows.js"
import * as SqlEventFanout from "./SqlEventFanout.js"
import * as SqlNotificationStore from "./SqlNotificationStore.js"

const isPostId = Schema.is(PostId)

const ReviewerRows = Schema.Array(Schema.Struct({ id: UserId, role: Role, organization_id: OrganizationId }))
const PostRows = Schema.Array(Schema.Struct({ id: PostId, created_by: Schema.NullOr(UserId), content: Schema.String }))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const base = yield* SqlEventFanout.make
  const store = yield* SqlNotificationStore.make
  const ids = yield* IdGenerator

  const notify = (events: Parameters<typeof base.append>[0]) =>
    Effect.gen(function*() {
      const relevant = events.filter((e) => Notifications.notifyingTypes.has(e.type))
      const organizations = [...new Set(relevant.map((e) => e.organizationId))]
      const postIds = [...new Set(relevant.map((e) => e.data["post_id"]).filter(isPostId))]
      const reviewerRows = yield* sql`SELECT id, role, organization_id FROM users
        WHERE organization_id IN ${sql.in(organizations)} AND role IN ('owner', 'admin')
        ORDER BY created_at, id`.pipe(Effect.flatMap(Schema.decodeUnknown(ReviewerRows)))
      const postRows = postIds.length === 0
        ? []
        : yield* sql`SELECT id, created_by, content FROM posts WHERE id IN ${sql.in(postIds)}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(PostRows))
        )
      const posts = new Map(postRows.map((p) => [p.id, p]))
      const audience: Notifications.Audience = {
        reviewers: (organizationId) =>
          reviewerRows.filter((u) => u.organization_id === organizationId).map((u) => ({ id: u.id, role: u.role })),
        post: (postId) =>
          Option.map(Option.fromNullable(posts.get(postId)), (p) => ({
            createdBy: Option.fromNullable(p.created_by),
            content: p.content
          }))
      }
      const planned = yield* Notifications.plan(relevant, audience).pipe(Effect.provideService(IdGenerator, ids))
      yield* store.insert(planned)
    })

  return EventStore.of({
    ...base,
    append: (events) =>
      Notifications.notifies(events)
        ? sql.withTransaction(Effect.zipRight(base.append(events), notify(events))).pipe(
          orPersistence("EventStore.append")
        )
        : base.append(events)
  })
})

/** The event store of `SqlEventFanout`, plus in-app notifications. */
export const layer: Layer.Layer<EventStore, never, SqlClient.SqlClient | IdGenerator> = Layer.effect(EventStore, make)
