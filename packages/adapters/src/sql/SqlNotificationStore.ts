import * as SqlClient from "@effect/sql/SqlClient"
import { AccountId, EventId, OrganizationId, PostId, UserId } from "@herald/core/kernel/Ids"
import { Notification, NotificationId, NotificationKind, NotificationStore } from "@herald/core/workflow/Notification"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const NotificationRow = Schema.Struct({
  id: NotificationId,
  organization_id: OrganizationId,
  user_id: UserId,
  kind: NotificationKind,
  event_id: EventId,
  post_id: Schema.NullOr(PostId),
  account_id: Schema.NullOr(Schema.compose(DbNumber, AccountId)),
  title: Schema.String,
  body: Schema.String,
  created_at: Instant,
  read_at: Schema.NullOr(Instant)
})

const PendingRow = Schema.Struct({ ...NotificationRow.fields, email: Schema.String, email_attempts: DbNumber })

const toNotification = (row: typeof NotificationRow.Type) =>
  new Notification({
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    kind: row.kind,
    eventId: row.event_id,
    postId: Option.fromNullable(row.post_id),
    accountId: Option.fromNullable(row.account_id),
    title: row.title,
    body: row.body,
    createdAt: row.created_at,
    readAt: Option.fromNullable(row.read_at)
  })

/** Same user, kind and subject: the second of such a pair in one batch is a repeat. */
const subjectKey = (n: Notification) =>
  `${n.userId}|${n.kind}|${Option.getOrElse(n.postId, () => "")}|${Option.getOrElse(n.accountId, () => "")}`

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(NotificationRow))
  const decodePending = Schema.decodeUnknown(Schema.Array(PendingRow))
  const millis = (at: DateTime.Utc) => DateTime.toEpochMillis(at)
  const columns = sql`n.id, n.organization_id, n.user_id, n.kind, n.event_id, n.post_id, n.account_id, n.title, n.body,
    n.created_at, n.read_at`

  const insertOne = (n: Notification) => {
    const postId = Option.getOrNull(n.postId)
    const accountId = Option.getOrNull(n.accountId)
    const sameSubject = postId !== null
      ? sql`post_id = ${postId}`
      : accountId !== null
      ? sql`account_id = ${accountId}`
      : sql`event_id = ${n.eventId}`
    const at = millis(n.createdAt)
    return sql`INSERT INTO notifications
        (id, organization_id, user_id, kind, event_id, post_id, account_id, title, body, created_at, read_at,
         email_status, email_attempts, email_next_at)
      SELECT ${n.id}, ${n.organizationId}, ${n.userId}, ${n.kind}, ${n.eventId}, ${postId},
        CAST(${accountId} AS BIGINT), ${n.title}, ${n.body}, CAST(${at} AS BIGINT), NULL,
        'pending', 0, CAST(${at} AS BIGINT)
      WHERE EXISTS (SELECT 1 FROM users WHERE id = ${n.userId})
        AND NOT EXISTS (SELECT 1 FROM notifications
          WHERE user_id = ${n.userId} AND kind = ${n.kind} AND read_at IS NULL AND ${sameSubject})`
  }

  return NotificationStore.of({
    insert: (notifications) => {
      const seen = new Set<string>()
      const distinct = notifications.filter((n) => {
        const key = subjectKey(n)
        if (seen.has(key)) return false
        seen.add(key)
        return true
      })
      return distinct.length === 0
        ? Effect.void
        : sql.withTransaction(Effect.forEach(distinct, insertOne, { discard: true })).pipe(
          orPersistence("NotificationStore.insert")
        )
    },
    list: (userId, options) =>
      sql`SELECT ${columns} FROM notifications n
        WHERE n.user_id = ${userId} ${options.unreadOnly ? sql`AND n.read_at IS NULL` : sql``}
        ORDER BY n.created_at DESC, n.id DESC LIMIT ${options.limit}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.map(toNotification)),
        orPersistence("NotificationStore.list")
      ),
    unreadCount: (userId) =>
      sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM notifications WHERE user_id = ${userId} AND read_at IS NULL`
        .pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0)),
          orPersistence("NotificationStore.unreadCount")
        ),
    markRead: (userId, ids, at) => {
      if (Option.isSome(ids) && ids.value.length === 0) return Effect.succeed(0)
      const which = Option.match(ids, { onNone: () => sql``, onSome: (list) => sql`AND id IN ${sql.in(list)}` })
      return sql`UPDATE notifications SET read_at = ${millis(at)}
          WHERE user_id = ${userId} AND read_at IS NULL ${which} RETURNING id`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("NotificationStore.markRead")
      )
    },
    claimEmails: ({ createdAfter, leaseMillis, limit, now }) =>
      Effect.gen(function*() {
        const due = yield* sql<{ id: string }>`SELECT id FROM notifications
          WHERE email_status = 'pending' AND email_next_at <= ${millis(now)} AND created_at > ${millis(createdAfter)}
          ORDER BY email_next_at, id LIMIT ${limit}`
        if (due.length === 0) return []
        // The time re-checked in the UPDATE: a concurrent taker that read the same rows finds them leased.
        const taken = yield* sql<{ id: string }>`UPDATE notifications
          SET email_next_at = ${millis(now) + leaseMillis}, email_attempts = email_attempts + 1
          WHERE id IN ${sql.in(due.map((r) => r.id))} AND email_status = 'pending' AND email_next_at <= ${millis(now)}
          RETURNING id`
        if (taken.length === 0) return []
        const rows = yield* sql`SELECT ${columns}, u.email, n.email_attempts FROM notifications n
          JOIN users u ON u.id = n.user_id
          WHERE n.id IN ${sql.in(taken.map((r) => r.id))} ORDER BY n.created_at, n.id`.pipe(
          Effect.flatMap(decodePending)
        )
        return rows.map((row) => ({
          notification: toNotification(row),
          email: row.email,
          attempts: row.email_attempts
        }))
      }).pipe(orPersistence("NotificationStore.claimEmails")),
    emailSent: (id) =>
      sql`UPDATE notifications SET email_status = 'sent', email_next_at = NULL WHERE id = ${id}`.pipe(
        Effect.asVoid,
        orPersistence("NotificationStore.emailSent")
      ),
    emailFailed: (id, retryAt) =>
      Option.match(retryAt, {
        onNone: () => sql`UPDATE notifications SET email_status = 'failed', email_next_at = NULL WHERE id = ${id}`,
        onSome: (at) =>
          sql`UPDATE notifications SET email_next_at = ${millis(at)} WHERE id = ${id} AND email_status = 'pending'`
      }).pipe(Effect.asVoid, orPersistence("NotificationStore.emailFailed"))
  })
})

export const layer: Layer.Layer<NotificationStore, never, SqlClient.SqlClient> = Layer.effect(NotificationStore, make)
