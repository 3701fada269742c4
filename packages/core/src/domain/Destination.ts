import type * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AccountId, DestinationId, OrganizationId, PostId } from "../kernel/Ids.js"
import { Platform } from "./Platform.js"

export const DestinationStatus = Schema.Literal("queued", "publishing", "published", "failed")
export type DestinationStatus = typeof DestinationStatus.Type

export class Metrics extends Schema.Class<Metrics>("Metrics")({
  views: Schema.NonNegativeInt,
  likes: Schema.NonNegativeInt,
  comments: Schema.NonNegativeInt,
  shares: Schema.NonNegativeInt,
  impressions: Schema.NonNegativeInt,
  saves: Schema.NonNegativeInt,
  clicks: Schema.NonNegativeInt
}) {
  static readonly zero = new Metrics({
    views: 0,
    likes: 0,
    comments: 0,
    shares: 0,
    impressions: 0,
    saves: 0,
    clicks: 0
  })
}

/** One target account of a post, with its own status. */
export class Destination extends Schema.Class<Destination>("Destination")({
  id: DestinationId,
  postId: PostId,
  organizationId: OrganizationId,
  accountId: AccountId,
  platform: Platform,
  accountName: Schema.String,
  status: DestinationStatus,
  /** When the destination becomes due: the post's scheduled time, a retry's back-off, or now. */
  dueAt: Schema.DateTimeUtc,
  attempts: Schema.NonNegativeInt,
  error: Schema.OptionFromNullOr(Schema.String),
  platformPostId: Schema.OptionFromNullOr(Schema.String),
  platformPostUrl: Schema.OptionFromNullOr(Schema.String),
  publishedAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  failedAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  metrics: Metrics,
  /** When `metrics` were last fetched from the platform; none until the metrics sweep first did. */
  metricsFetchedAt: Schema.OptionFromNullOr(Schema.DateTimeUtc).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => Option.none())
  ),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {
  /** A destination as it starts: queued, never attempted, no outcome yet. */
  static queued(input: {
    readonly id: DestinationId
    readonly post: { readonly id: PostId; readonly organizationId: OrganizationId }
    readonly account: { readonly id: AccountId; readonly platform: Platform; readonly accountName: string }
    readonly dueAt: DateTime.Utc
    readonly now: DateTime.Utc
  }): Destination {
    return new Destination({
      id: input.id,
      postId: input.post.id,
      organizationId: input.post.organizationId,
      accountId: input.account.id,
      platform: input.account.platform,
      accountName: input.account.accountName,
      status: "queued",
      dueAt: input.dueAt,
      attempts: 0,
      error: Option.none(),
      platformPostId: Option.none(),
      platformPostUrl: Option.none(),
      publishedAt: Option.none(),
      failedAt: Option.none(),
      metrics: Metrics.zero,
      createdAt: input.now,
      updatedAt: input.now
    })
  }
}
