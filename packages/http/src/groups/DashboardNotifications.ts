/**
 * The signed-in person's in-app notifications (/dashboard/api/notifications, outside the spec): the
 * newest ones with the unread count (what the navigation's badge shows), and marking some or all read.
 * Each person sees only their own.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import type { Notification } from "@herald/core/workflow/Notification"
import { NotificationKind } from "@herald/core/workflow/Notification"
import * as Notifications from "@herald/core/workflow/Notifications"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath } from "./DashboardSession.js"

export const NotificationView = Schema.Struct({
  id: Schema.String,
  kind: NotificationKind,
  title: Schema.String,
  body: Schema.String,
  post_id: Schema.NullOr(Schema.String),
  account_id: Schema.NullOr(Schema.Int),
  /** Where in the dashboard it leads: the post, or the accounts page. */
  link: Schema.String,
  created_at: Schema.String,
  read_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DashboardNotification" })

export const notificationView = (n: Notification): typeof NotificationView.Type => ({
  id: n.id,
  kind: n.kind,
  title: n.title,
  body: n.body,
  post_id: Option.getOrNull(n.postId),
  account_id: Option.getOrNull(n.accountId),
  link: Option.match(n.postId, { onNone: () => "/accounts", onSome: (id) => `/posts/${id}` }),
  created_at: DateTime.formatIso(n.createdAt),
  read_at: Option.match(n.readAt, { onNone: () => null, onSome: DateTime.formatIso })
})

const ListParams = Schema.Struct({
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 100))),
  unread: Schema.optional(Schema.Literal("true", "false"))
})

const ReadBody = Schema.Struct({
  /** The notifications to mark read; absent marks every one. */
  ids: Schema.optional(Schema.Array(Schema.String).pipe(Schema.maxItems(100)))
})

export const DashboardNotificationsGroup = HttpApiGroup.make("dashboardNotifications")
  .add(
    HttpApiEndpoint.get("list", "/notifications")
      .setUrlParams(ListParams)
      .addSuccess(Schema.Struct({ data: Schema.Array(NotificationView), unread_count: Schema.Int }))
  )
  .add(
    HttpApiEndpoint.post("read", "/notifications/read")
      .setPayload(ApiGroup.payload(ReadBody))
      .addSuccess(Schema.Struct({ marked: Schema.Int, unread_count: Schema.Int }))
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

export const DashboardNotificationsLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardNotificationsGroup),
  "dashboardNotifications",
  (handlers) =>
    handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          const { data, unread } = yield* Notifications.listFor(caller.user.id, {
            limit: urlParams.limit ?? 30,
            unreadOnly: urlParams.unread === "true"
          })
          return { data: data.map(notificationView), unread_count: unread }
        }).pipe(Effect.orDie))
      .handle("read", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          const marked = yield* Notifications.markRead(caller.user.id, Option.fromNullable(payload.ids))
          const { unread } = yield* Notifications.listFor(caller.user.id, { limit: 0, unreadOnly: true })
          return { marked, unread_count: unread }
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
)
