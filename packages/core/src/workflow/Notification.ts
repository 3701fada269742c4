/**
 * In-app notifications: what a person of the organization should know about without looking (a draft
 * waits for their review, their draft was approved or sent back, a post failed, an account needs
 * reconnecting). Each is made from the lifecycle event that causes it (`Notifications.plan`), in the
 * same transaction as the event; the store also keeps whether its e-mail copy is still to be sent.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { PersistenceError } from "../kernel/Errors.js"
import { AccountId, EventId, OrganizationId, PostId, UserId } from "../kernel/Ids.js"

export const NotificationId = Schema.UUID.pipe(Schema.brand("NotificationId"))
export type NotificationId = typeof NotificationId.Type

export const NotificationKind = Schema.Literal(
  "approval_requested",
  "approved",
  "changes_requested",
  "post_failed",
  "account_reconnect_needed",
  /** A comment on a post, to the other side (the author, or the reviewers). */
  "comment"
)
export type NotificationKind = typeof NotificationKind.Type

export class Notification extends Schema.Class<Notification>("Notification")({
  id: NotificationId,
  organizationId: OrganizationId,
  userId: UserId,
  kind: NotificationKind,
  /** The event that caused it. */
  eventId: EventId,
  postId: Schema.OptionFromNullOr(PostId),
  accountId: Schema.OptionFromNullOr(AccountId),
  /** One line, plain text (also the e-mail's subject). */
  title: Schema.String,
  /** A few lines of plain text (also the e-mail's body). */
  body: Schema.String,
  createdAt: Schema.DateTimeUtc,
  readAt: Schema.OptionFromNullOr(Schema.DateTimeUtc)
}) {}

/** A notification whose e-mail copy is due, with where it goes. */
export interface PendingEmail {
  readonly notification: Notification
  readonly email: string
  /** Sending attempts so far, this one included. */
  readonly attempts: number
}

export class NotificationStore extends Context.Tag("@herald/core/workflow/NotificationStore")<NotificationStore, {
  /**
   * Stores the notifications, each unless its user already has an unread one of the same kind about
   * the same post or account (three failed destinations of one post make one notification). Each
   * one's e-mail copy is due at once; only a configured mail sender takes it (`claimEmails`).
   */
  readonly insert: (notifications: ReadonlyArray<Notification>) => Effect.Effect<void, PersistenceError>
  /** The user's notifications, newest first. */
  readonly list: (
    userId: UserId,
    options: { readonly limit: number; readonly unreadOnly: boolean }
  ) => Effect.Effect<ReadonlyArray<Notification>, PersistenceError>
  readonly unreadCount: (userId: UserId) => Effect.Effect<number, PersistenceError>
  /** Marks the user's notifications read (the given ones, or all); returns how many changed. */
  readonly markRead: (
    userId: UserId,
    ids: Option.Option<ReadonlyArray<NotificationId>>,
    at: DateTime.Utc
  ) => Effect.Effect<number, PersistenceError>
  /**
   * Takes up to `limit` e-mails due at `now` (created after `createdAfter`) for `leaseMillis`: another
   * taker does not get them until then, so a sender that stops mid-way leaves them to be retried.
   */
  readonly claimEmails: (options: {
    readonly now: DateTime.Utc
    readonly createdAfter: DateTime.Utc
    readonly limit: number
    readonly leaseMillis: number
  }) => Effect.Effect<ReadonlyArray<PendingEmail>, PersistenceError>
  /** The e-mail went out: never sent again. */
  readonly emailSent: (id: NotificationId, at: DateTime.Utc) => Effect.Effect<void, PersistenceError>
  /** The e-mail failed: due again at `retryAt`, or never when None (given up). */
  readonly emailFailed: (
    id: NotificationId,
    retryAt: Option.Option<DateTime.Utc>
  ) => Effect.Effect<void, PersistenceError>
}>() {}
