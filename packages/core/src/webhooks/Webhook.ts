import * as Schema from "effect/Schema"
import * as Option from "effect/Option"
import { AccountId, DeliveryId, EventId, OrganizationId, WebhookId } from "../kernel/Ids.js"
import { EventType } from "./Event.js"

export class WebhookSubscription extends Schema.Class<WebhookSubscription>("WebhookSubscription")({
  id: WebhookId,
  organizationId: OrganizationId,
  url: Schema.String,
  events: Schema.Array(EventType),
  name: Schema.OptionFromNullOr(Schema.String),
  /**
   * The accounts whose events the subscription receives: the accounts of the key that created it
   * (`EventAccounts`). None: every account, and organization-level events too.
   */
  accountIds: Schema.OptionFromNullOr(Schema.Array(AccountId)).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => Option.none())
  ),
  /** `whsec_` + 64 characters; the signing key. Shown once, at creation. */
  secret: Schema.Redacted(Schema.String),
  isActive: Schema.Boolean,
  /** Consecutive failed deliveries; 20 disables the subscription. */
  consecutiveFailures: Schema.NonNegativeInt,
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}

export const DeliveryStatus = Schema.Literal("pending", "delivered", "dead")
export type DeliveryStatus = typeof DeliveryStatus.Type

/** One event on its way to one subscription, across its attempts (1 to 6). */
export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: DeliveryId,
  subscriptionId: WebhookId,
  organizationId: OrganizationId,
  eventId: EventId,
  eventType: EventType,
  status: DeliveryStatus,
  /** Attempts made so far. */
  attempts: Schema.NonNegativeInt,
  nextAttemptAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}

/** What one attempt saw, kept so a user can see why a target fails. */
export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  /** The per-attempt `X-Service-Delivery-Id`. */
  id: Schema.UUID,
  deliveryId: DeliveryId,
  subscriptionId: WebhookId,
  eventId: EventId,
  eventType: EventType,
  attempt: Schema.Int.pipe(Schema.between(1, 6)),
  ok: Schema.Boolean,
  statusCode: Schema.OptionFromNullOr(Schema.Int),
  durationMs: Schema.NonNegativeInt,
  /** At most the first 2 KB of the receiver's answer. */
  responseBody: Schema.String,
  error: Schema.OptionFromNullOr(Schema.String),
  attemptedAt: Schema.DateTimeUtc
}) {}
