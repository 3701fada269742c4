import * as Schema from "effect/Schema"
import { AccountId, OrganizationId } from "../kernel/Ids.js"
import { Platform } from "./Platform.js"

/**
 * How an account was connected. Instagram can come through Facebook Login (`facebook`) or
 * Instagram Login (`direct`); the account list hides a Facebook-flow row that has a direct sibling.
 */
export const ConnectionFlow = Schema.Literal("direct", "facebook", "credential")
export type ConnectionFlow = typeof ConnectionFlow.Type

export class SocialAccount extends Schema.Class<SocialAccount>("SocialAccount")({
  id: AccountId,
  organizationId: OrganizationId,
  platform: Platform,
  /** The platform's own id for the profile, page, channel or webhook. */
  platformAccountId: Schema.String,
  accountName: Schema.String,
  avatarUrl: Schema.String,
  isActive: Schema.Boolean,
  connectionFlow: ConnectionFlow,
  /** Set when a token was found dead; cleared by a reconnect. */
  needsReconnection: Schema.Boolean,
  tokenExpiresAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  lastSuccessAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  /** Permanent publish failures since the last success. */
  recentFailures: Schema.NonNegativeInt,
  /** Platform credentials, encrypted by the adapter that stores them; never logged or returned. */
  credentials: Schema.OptionFromNullOr(Schema.Redacted(Schema.String)),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}
