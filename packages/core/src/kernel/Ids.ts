/**
 * Branded identifiers. Accounts and campaigns are integers (the spec says "not a UUID");
 * everything else is a UUID string.
 */
import * as Schema from "effect/Schema"

const Uuid = Schema.UUID

export const OrganizationId = Uuid.pipe(Schema.brand("OrganizationId"))
export type OrganizationId = typeof OrganizationId.Type

export const UserId = Uuid.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const ApiKeyId = Uuid.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type

export const AccountId = Schema.Int.pipe(Schema.positive(), Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type

export const PostId = Uuid.pipe(Schema.brand("PostId"))
export type PostId = typeof PostId.Type

export const DestinationId = Uuid.pipe(Schema.brand("DestinationId"))
export type DestinationId = typeof DestinationId.Type

export const CampaignId = Schema.Int.pipe(Schema.positive(), Schema.brand("CampaignId"))
export type CampaignId = typeof CampaignId.Type

export const MediaId = Uuid.pipe(Schema.brand("MediaId"))
export type MediaId = typeof MediaId.Type

export const WebhookId = Uuid.pipe(Schema.brand("WebhookId"))
export type WebhookId = typeof WebhookId.Type

export const DeliveryId = Uuid.pipe(Schema.brand("DeliveryId"))
export type DeliveryId = typeof DeliveryId.Type

export const EventId = Uuid.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

export const QueueId = Uuid.pipe(Schema.brand("QueueId"))
export type QueueId = typeof QueueId.Type
