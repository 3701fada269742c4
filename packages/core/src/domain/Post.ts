import * as Schema from "effect/Schema"
import * as Option from "effect/Option"
import { AccountId, ApiKeyId, CampaignId, MediaId, OrganizationId, PostId, UserId } from "../kernel/Ids.js"
import { Platform } from "./Platform.js"

export const PostStatus = Schema.Literal("draft", "scheduled", "publishing", "published", "partially_failed", "failed")
export type PostStatus = typeof PostStatus.Type

export const ApprovalStatus = Schema.Literal("pending", "approved", "changes_requested")
export type ApprovalStatus = typeof ApprovalStatus.Type

/** Per-platform settings; each platform's allowed keys and values are checked by the platform rules. */
export const PlatformSettings = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type PlatformSettings = typeof PlatformSettings.Type

export class PlatformContentEntry extends Schema.Class<PlatformContentEntry>("PlatformContentEntry")({
  content: Schema.String,
  contentType: Schema.optional(Schema.String),
  settings: Schema.optional(PlatformSettings)
}) {}

/** Overrides keyed by platform value. */
export const PlatformContent = Schema.partial(Schema.Record({ key: Platform, value: PlatformContentEntry }))
export type PlatformContent = typeof PlatformContent.Type

/** One further post of a thread (`threadPosts`), published as a reply to the one before it. */
export class ThreadPost extends Schema.Class<ThreadPost>("ThreadPost")({
  content: Schema.String,
  media_ids: Schema.optional(Schema.Array(MediaId))
}) {}

export class Approval extends Schema.Class<Approval>("Approval")({
  status: ApprovalStatus,
  note: Schema.OptionFromNullOr(Schema.String),
  /** Whether the approval has already authorized its one publish. */
  consumed: Schema.Boolean
}) {}

export class Post extends Schema.Class<Post>("Post")({
  id: PostId,
  organizationId: OrganizationId,
  createdByKey: Schema.OptionFromNullOr(ApiKeyId),
  /**
   * The person who created the post: the signed-in user, or the user who made the API key. A member
   * may change only the posts they created. None when not known (a key without a creator).
   */
  createdBy: Schema.OptionFromNullOr(UserId).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => Option.none())
  ),
  content: Schema.String,
  /** The targets; for a non-draft post these are also its destinations. */
  accountIds: Schema.Array(AccountId),
  platformContent: PlatformContent,
  mediaIds: Schema.Array(MediaId),
  scheduledFor: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  timezone: Schema.OptionFromNullOr(Schema.String),
  campaignId: Schema.OptionFromNullOr(CampaignId),
  isDraft: Schema.Boolean,
  /** The status at creation, frozen; the reported status is derived from destinations. */
  createdStatus: PostStatus,
  approval: Schema.OptionFromNullOr(Approval),
  idempotencyKey: Schema.OptionFromNullOr(Schema.String),
  /** Hash of the creating request body, for the circuit breaker (same body failing repeatedly). */
  requestHash: Schema.OptionFromNullOr(Schema.String),
  threadPosts: Schema.Array(ThreadPost),
  useQueue: Schema.Boolean,
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc,
  /**
   * The `traceparent` of the request that created the post, when it was traced (`TraceContext`): the
   * publishes take it as their parent, so they join that request's trace. Not part of the API.
   */
  traceParent: Schema.OptionFromNullOr(Schema.String).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => Option.none())
  )
}) {}
