import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { EventId, OrganizationId } from "../kernel/Ids.js"

/** Every event of the spec's table. Subscriptions name their events explicitly; there is no wildcard. */
export const eventTypes = [
  "post.scheduled",
  "post.publishing",
  "post.published",
  "post.failed",
  "post.partially_failed",
  "post.updated",
  "post.deleted",
  "account.connected",
  "account.disconnected",
  "account.reconnect_needed",
  "media.uploaded",
  "media.deleted",
  "post.approval_requested",
  "post.approved",
  "post.changes_requested"
] as const

export const EventType = Schema.Literal(...eventTypes)
export type EventType = typeof EventType.Type

export const isEventType = Schema.is(EventType)

export const EventData = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type EventData = typeof EventData.Type

/**
 * A lifecycle event, written in the same transaction as the state change that causes it (outbox).
 * `id` is the `event_id` of every webhook delivery of it, stable across retries.
 */
export class Event extends Schema.Class<Event>("Event")({
  id: EventId,
  organizationId: OrganizationId,
  type: EventType,
  data: EventData,
  createdAt: Schema.DateTimeUtc,
  /**
   * The `traceparent` of the span that caused the event, when it was traced (`TraceContext`): its
   * webhook deliveries take it as their parent. Never sent to receivers.
   */
  traceParent: Schema.OptionFromNullOr(Schema.String).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => Option.none())
  )
}) {}
