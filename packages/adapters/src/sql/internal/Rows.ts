/**
 * Row codecs: every table's columns to and from the domain classes, in one place.
 *
 * Column conventions (the same on SQLite and Postgres): instants are epoch milliseconds (BIGINT),
 * booleans are 0/1 (INTEGER), nested values are JSON text. node-postgres returns BIGINT and NUMERIC
 * as strings, so every number is decoded from `number | string`.
 */
import { ConnectionFlow, SocialAccount } from "@herald/core/domain/Account"
import { ApiKey, Scope } from "@herald/core/access/ApiKey"
import { Destination, DestinationStatus, Metrics } from "@herald/core/domain/Destination"
import { PersistenceError } from "@herald/core/kernel/Errors"
import { Event, EventData, EventType } from "@herald/core/webhooks/Event"
import {
  AccountId,
  ApiKeyId,
  CampaignId,
  DestinationId,
  EventId,
  MediaId,
  OrganizationId,
  PostId,
  UserId
} from "@herald/core/kernel/Ids"
import { Organization, Plan, Role, SubscriptionStatus, User } from "@herald/core/access/Organization"
import { Platform } from "@herald/core/domain/Platform"
import { Approval, PlatformContent, Post, PostStatus, ThreadPost } from "@herald/core/domain/Post"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Spans from "@herald/core/kernel/Spans"

/** A number as either driver returns it: SQLite gives numbers, node-postgres gives int8 as text. */
export const DbNumber = Schema.Union(Schema.Number, Schema.NumberFromString)

/** An instant stored as epoch milliseconds. */
export const Instant = Schema.compose(DbNumber, Schema.DateTimeUtcFromNumber)

/** A boolean stored as 0/1. */
export const Bool = Schema.transform(DbNumber, Schema.Boolean, {
  strict: true,
  decode: (n) => n !== 0,
  encode: (b) => (b ? 1 : 0)
})

const DbAccountId = Schema.compose(DbNumber, AccountId)
const DbCampaignId = Schema.compose(DbNumber, CampaignId)
const DbCount = Schema.compose(DbNumber, Schema.NonNegativeInt)

const column = <const K extends string, S extends Schema.Schema.Any>(key: K, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.OptionFromNullOr(schema)

/**
 * Platform credentials as stored. This is the one place the column is read and written, so that
 * encryption at rest can be slotted in here (a cipher transform) without touching the store.
 */
export const CredentialsColumn = Schema.OptionFromNullOr(Schema.Redacted(Schema.String))

/** Storage failures and rows that do not decode are both reported as `PersistenceError`. */
export const orPersistence = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  self.pipe(
    Effect.mapError((cause) =>
      cause instanceof PersistenceError ? cause : new PersistenceError({ message: `${operation} failed`, cause })
    ),
    // Every store call: no stack capture (an Error per call showed in the profile), and no span at
    // all while the tracer is off (`Spans.withSpan`).
    Spans.withSpan(operation)
  )

// organizations, users

/**
 * A row's columns are decoded by schemas of the same fields the class declares, so building the
 * instance does not check them a second time (a class constructor validates by default; on the
 * dispatcher's hot path every claim decodes a post and its destinations).
 */
const trusted = true

export const OrganizationRow = Schema.transform(
  Schema.Struct({
    id: OrganizationId,
    name: Schema.String,
    plan: Plan,
    subscriptionStatus: column("subscription_status", SubscriptionStatus),
    trialEndsAt: column("trial_ends_at", nullable(Instant)),
    createdAt: column("created_at", Instant)
  }),
  Schema.instanceOf(Organization),
  { strict: true, decode: (fields) => new Organization(fields, trusted), encode: (org) => org }
)

export const UserRow = Schema.transform(
  Schema.Struct({
    id: UserId,
    organizationId: column("organization_id", OrganizationId),
    email: Schema.String,
    name: Schema.String,
    role: Role,
    createdAt: column("created_at", Instant)
  }),
  Schema.instanceOf(User),
  { strict: true, decode: (fields) => new User(fields, trusted), encode: (user) => user }
)

// api_keys

export const ApiKeyRow = Schema.transform(
  Schema.Struct({
    id: ApiKeyId,
    organizationId: column("organization_id", OrganizationId),
    createdBy: column("created_by", nullable(UserId)),
    name: Schema.String,
    hint: Schema.String,
    hash: Schema.String,
    scopes: Schema.parseJson(Schema.Array(Scope)),
    accountIds: column("account_ids", nullable(Schema.parseJson(Schema.Array(AccountId)))),
    expiresAt: column("expires_at", nullable(Instant)),
    revokedAt: column("revoked_at", nullable(Instant)),
    createdAt: column("created_at", Instant)
  }),
  Schema.instanceOf(ApiKey),
  { strict: true, decode: (fields) => new ApiKey(fields, trusted), encode: (key) => key }
)

// social_accounts

const accountFields = {
  organizationId: column("organization_id", OrganizationId),
  platform: Platform,
  platformAccountId: column("platform_account_id", Schema.String),
  accountName: column("account_name", Schema.String),
  avatarUrl: column("avatar_url", Schema.String),
  isActive: column("is_active", Bool),
  connectionFlow: column("connection_flow", ConnectionFlow),
  needsReconnection: column("needs_reconnection", Bool),
  tokenExpiresAt: column("token_expires_at", nullable(Instant)),
  lastSuccessAt: column("last_success_at", nullable(Instant)),
  recentFailures: column("recent_failures", DbCount),
  credentials: CredentialsColumn,
  createdAt: column("created_at", Instant),
  updatedAt: column("updated_at", Instant)
}

/** An account before the store has assigned its id. */
export const NewAccountRow = Schema.Struct(accountFields)

export const AccountRow = Schema.transform(
  Schema.Struct({ id: DbAccountId, ...accountFields }),
  Schema.instanceOf(SocialAccount),
  { strict: true, decode: (fields) => new SocialAccount(fields, trusted), encode: (account) => account }
)

// posts

const PostColumns = Schema.Struct({
  id: PostId,
  organizationId: column("organization_id", OrganizationId),
  createdByKey: column("created_by_key", nullable(ApiKeyId)),
  createdBy: column("created_by", nullable(UserId)),
  content: Schema.String,
  accountIds: column("account_ids", Schema.parseJson(Schema.Array(AccountId))),
  platformContent: column("platform_content", Schema.parseJson(PlatformContent)),
  mediaIds: column("media_ids", Schema.parseJson(Schema.Array(MediaId))),
  scheduledFor: column("scheduled_for", nullable(Instant)),
  timezone: nullable(Schema.String),
  campaignId: column("campaign_id", nullable(DbCampaignId)),
  isDraft: column("is_draft", Bool),
  createdStatus: column("created_status", PostStatus),
  approval: nullable(Schema.parseJson(Approval)),
  idempotencyKey: column("idempotency_key", nullable(Schema.String)),
  requestHash: column("request_hash", nullable(Schema.String)),
  threadPosts: column("thread_posts", Schema.parseJson(Schema.Array(ThreadPost))),
  useQueue: column("use_queue", Bool),
  createdAt: column("created_at", Instant),
  updatedAt: column("updated_at", Instant),
  traceParent: column("trace_parent", nullable(Schema.String))
})

export const PostRow = Schema.transform(PostColumns, Schema.instanceOf(Post), {
  strict: true,
  decode: (fields) => new Post(fields, trusted),
  encode: (post) => post
})

/** The post's columns, plus `approval_status`, which is kept beside the JSON for filtering. */
export const encodePost = (post: Post) =>
  Schema.encode(PostRow)(post).pipe(
    Effect.map((row) => ({
      ...row,
      approval_status: Option.match(post.approval, { onNone: () => null, onSome: (a) => a.status })
    }))
  )

// destinations

export const DestinationRow = Schema.transform(
  Schema.Struct({
    id: DestinationId,
    postId: column("post_id", PostId),
    organizationId: column("organization_id", OrganizationId),
    accountId: column("account_id", DbAccountId),
    platform: Platform,
    accountName: column("account_name", Schema.String),
    status: DestinationStatus,
    dueAt: column("due_at", Instant),
    attempts: DbCount,
    error: nullable(Schema.String),
    platformPostId: column("platform_post_id", nullable(Schema.String)),
    platformPostUrl: column("platform_post_url", nullable(Schema.String)),
    publishedAt: column("published_at", nullable(Instant)),
    failedAt: column("failed_at", nullable(Instant)),
    metrics: Schema.parseJson(Metrics),
    metricsFetchedAt: column("metrics_fetched_at", nullable(Instant)),
    createdAt: column("created_at", Instant),
    updatedAt: column("updated_at", Instant)
  }),
  Schema.instanceOf(Destination),
  { strict: true, decode: (fields) => new Destination(fields, trusted), encode: (destination) => destination }
)

/** The lease columns that ride along a claimed destination row. */
export const LeaseColumns = Schema.Struct({
  lease_token: Schema.String,
  lease_expires_at: Instant
})

// events

export const EventRow = Schema.transform(
  Schema.Struct({
    id: EventId,
    organizationId: column("organization_id", OrganizationId),
    type: EventType,
    data: Schema.parseJson(EventData),
    createdAt: column("created_at", Instant),
    traceParent: column("trace_parent", nullable(Schema.String))
  }),
  Schema.instanceOf(Event),
  { strict: true, decode: (fields) => new Event(fields, trusted), encode: (event) => event }
)

export const CountRow = Schema.Struct({ count: DbNumber })
