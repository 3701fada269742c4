/**
 * Who is notified of what. Notifications come from the lifecycle events the engine already records
 * (the webhook outbox), in the event's own transaction: every path that requests approval, reviews a
 * draft, fails a destination or finds a dead token notifies without knowing about it, and an event is
 * never committed without its notifications (the SQL event store calls `plan` on append).
 *
 * - `post.approval_requested`: the owners and admins (the spec's approval workflow), not the requester;
 * - `post.approved`, `post.changes_requested`: the post's author, unless they reviewed it themselves;
 * - `post.failed`: the author and the owners and admins;
 * - `account.reconnect_needed`: the owners and admins (they may reconnect accounts).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Role } from "../access/Organization.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { AccountId, type OrganizationId, PostId, type UserId } from "../kernel/Ids.js"
import type { Event, EventType } from "../webhooks/Event.js"
import { Notification, NotificationId, type NotificationKind, NotificationStore } from "./Notification.js"

/** The event types that notify someone. */
export const notifyingTypes: ReadonlySet<EventType> = new Set<EventType>([
  "post.approval_requested",
  "post.approved",
  "post.changes_requested",
  "post.failed",
  "account.reconnect_needed"
])

export const notifies = (events: ReadonlyArray<Event>): boolean => events.some((e) => notifyingTypes.has(e.type))

/** What `plan` needs to know besides the events. */
export interface Audience {
  /** The owners and admins of each organization named by the events. */
  readonly reviewers: (organizationId: OrganizationId) => ReadonlyArray<{ readonly id: UserId; readonly role: Role }>
  /** The post's author and an excerpt of its text, when the post exists. */
  readonly post: (
    postId: PostId
  ) => Option.Option<{ readonly createdBy: Option.Option<UserId>; readonly content: string }>
}

const excerpt = (text: string): string => {
  const line = text.replace(/\s+/g, " ").trim()
  if (line === "") return "(no text)"
  return line.length > 60 ? `${line.slice(0, 59)}…` : line
}

const isPostId = Schema.is(PostId)
const isAccountId = Schema.is(AccountId)

const userIdIn = (value: unknown): Option.Option<string> =>
  typeof value === "object" && value !== null && typeof (value as { user_id?: unknown }).user_id === "string"
    ? Option.some((value as { user_id: string }).user_id)
    : Option.none()

const text = (
  value: unknown
): string | undefined => (typeof value === "string" && value.trim() !== "" ? value : undefined)

interface Planned {
  readonly userIds: ReadonlyArray<UserId>
  readonly kind: NotificationKind
  readonly title: string
  readonly body: string
}

const describe = (event: Event, audience: Audience): Planned | undefined => {
  const data = event.data
  const postId = isPostId(data["post_id"]) ? data["post_id"] : undefined
  const post = postId === undefined ? Option.none() : audience.post(postId)
  const author = Option.flatMap(post, (p) => p.createdBy)
  const about = Option.match(post, { onNone: () => "a post", onSome: (p) => `“${excerpt(p.content)}”` })
  const reviewers = audience.reviewers(event.organizationId).map((u) => u.id)
  const actor = userIdIn(data["requested_by"] ?? data["reviewed_by"])
  const others = (ids: ReadonlyArray<UserId>) => ids.filter((id) => Option.isNone(actor) || actor.value !== id)
  const note = text(data["note"])
  switch (event.type) {
    case "post.approval_requested":
      return {
        userIds: others(reviewers),
        kind: "approval_requested",
        title: `Approval requested: ${about}`,
        body: `A draft waits for your review: ${about}. Approve it or request changes in Herald's Approvals.`
      }
    case "post.approved":
      return {
        userIds: others(Option.toArray(author)),
        kind: "approved",
        title: `Approved: ${about}`,
        body: `Your draft ${about} was approved${
          note === undefined ? "" : ` with the note: ${note}`
        }. It can now be scheduled or published.`
      }
    case "post.changes_requested":
      return {
        userIds: others(Option.toArray(author)),
        kind: "changes_requested",
        title: `Changes requested: ${about}`,
        body: `Your draft ${about} was sent back${
          note === undefined ? "" : ` with the note: ${note}`
        }. Edit it to submit it again.`
      }
    case "post.failed": {
      const platform = text(data["platform"])
      const account = text(data["account_name"])
      const where = platform === undefined ? "" : ` on ${platform}${account === undefined ? "" : ` (${account})`}`
      const reason = text((data["error"] as { message?: unknown } | undefined)?.message)
      return {
        userIds: [...new Set([...Option.toArray(author), ...reviewers])],
        kind: "post_failed",
        title: `Failed to publish: ${about}`,
        body: `The post ${about} could not be published${where}${
          reason === undefined ? "" : `: ${reason}`
        }. Open it in Herald to retry.`
      }
    }
    case "account.reconnect_needed": {
      const platform = text(data["platform"]) ?? "a platform"
      const account = text(data["account_name"]) ?? "An account"
      return {
        userIds: reviewers,
        kind: "account_reconnect_needed",
        title: `Reconnect ${account} (${platform})`,
        body:
          `Herald can no longer post as ${account} on ${platform}: its access ended. Reconnect it in Herald's Accounts; posts to it fail until then.`
      }
    }
    default:
      return undefined
  }
}

/** The notifications the events cause, one per recipient per event (the store drops repeats). */
export const plan = (events: ReadonlyArray<Event>, audience: Audience) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    const out: Array<Notification> = []
    for (const event of events) {
      const planned = describe(event, audience)
      if (planned === undefined) continue
      const postId = event.data["post_id"]
      const accountId = event.data["account_id"]
      for (const userId of planned.userIds) {
        out.push(
          new Notification({
            id: NotificationId.make(yield* ids.uuid),
            organizationId: event.organizationId,
            userId,
            kind: planned.kind,
            eventId: event.id,
            postId: isPostId(postId) ? Option.some(postId) : Option.none(),
            accountId: event.type === "account.reconnect_needed" && isAccountId(accountId)
              ? Option.some(accountId)
              : Option.none(),
            title: planned.title,
            body: planned.body,
            createdAt: event.createdAt,
            readAt: Option.none()
          })
        )
      }
    }
    return out
  })

/** The signed-in user's notifications, newest first, and how many are unread. */
export const listFor = (userId: UserId, options: { readonly limit: number; readonly unreadOnly: boolean }) =>
  Effect.gen(function*() {
    const store = yield* NotificationStore
    const [data, unread] = yield* Effect.all([
      options.limit === 0 ? Effect.succeed([]) : store.list(userId, options),
      store.unreadCount(userId)
    ])
    return { data, unread }
  })

const isNotificationId = Schema.is(NotificationId)

/** Marks some of the user's notifications read (unknown or foreign ids are 404), or all of them. */
export const markRead = (userId: UserId, ids: Option.Option<ReadonlyArray<string>>) =>
  Effect.gen(function*() {
    if (Option.isSome(ids) && !ids.value.every(isNotificationId)) return yield* DomainError.notFound("Notification")
    const typed = Option.map(ids, (list) => list.filter(isNotificationId))
    return yield* (yield* NotificationStore).markRead(userId, typed, yield* DateTime.now)
  })
