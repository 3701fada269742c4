import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Destination } from "../domain/Destination.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { AccountId, CampaignId, DestinationId, OrganizationId, PostId } from "../kernel/Ids.js"
import type { Platform } from "../domain/Platform.js"
import type { ApprovalStatus, Post, PostStatus } from "../domain/Post.js"

/** A post with its destinations, as every read returns it. */
export interface PostRecord {
  readonly post: Post
  readonly destinations: ReadonlyArray<Destination>
}

/** A post and how many destinations it has (`findMany`). */
export interface PostCount {
  readonly post: Post
  readonly destinationCount: number
}

export type PostSort = "created_at" | "scheduled_for" | "updated_at" | "published_at"

/**
 * A keyset position in the post list: the sort column's value of the last post read (null for a post
 * without one, which sorts last) and its id (the tie-break). The next page starts after it.
 */
export interface PostCursor {
  readonly value: number | null
  readonly id: PostId
}

/** The post-list query. Absent fields do not filter. Status filters on the derived status. */
export interface PostQuery {
  readonly organizationId: OrganizationId
  /** A key restricted to some accounts sees only posts whose every target is among them. */
  readonly visibleAccountIds?: ReadonlyArray<AccountId>
  readonly statuses?: ReadonlyArray<PostStatus>
  readonly platforms?: ReadonlyArray<Platform>
  readonly accountId?: AccountId
  readonly campaignId?: CampaignId
  readonly createdAfter?: DateTime.Utc
  readonly createdBefore?: DateTime.Utc
  readonly scheduledAfter?: DateTime.Utc
  readonly scheduledBefore?: DateTime.Utc
  /** On the latest `published_at` of the post's destinations. */
  readonly publishedAfter?: DateTime.Utc
  readonly publishedBefore?: DateTime.Utc
  readonly updatedAfter?: DateTime.Utc
  /** Case-insensitive substring of the content. */
  readonly search?: string
  readonly approval?: ReadonlyArray<ApprovalStatus>
  readonly sort: PostSort
  readonly order: "asc" | "desc"
  readonly limit: number
  readonly offset: number
  /** Posts after this position in the sort's order (keyset paging; `offset` is then 0). */
  readonly after?: PostCursor | undefined
}

/** An account a write expects as the checks saw it: in the post's organization, active, on this platform. */
export interface ExpectedAccount {
  readonly id: AccountId
  readonly platform: Platform
}

/** Which failed destinations `requeueFailed` re-queues. Absent fields do not filter. */
export interface RequeueQuery {
  readonly organizationId: OrganizationId
  readonly visibleAccountIds?: ReadonlyArray<AccountId> | undefined
  readonly accountId?: AccountId | undefined
  readonly platform?: Platform | undefined
  /** Failed strictly after / before. */
  readonly failedAfter?: DateTime.Utc | undefined
  readonly failedBefore?: DateTime.Utc | undefined
  /** Only destinations that used at most this many attempts. */
  readonly maxAttempts?: number | undefined
  /** The new due time (and update time) of every re-queued destination. */
  readonly now: DateTime.Utc
  /** At most this many destinations, whole posts only (a post that would pass it is left whole). */
  readonly limit: number
}

/** Per post re-queued (oldest post first): the post as it is now, and the ids re-queued. */
export interface Requeued {
  readonly posts: ReadonlyArray<{ readonly record: PostRecord; readonly retried: ReadonlyArray<DestinationId> }>
  /** Matching failed destinations were left for the limit. */
  readonly hasMore: boolean
}

export interface PostPage {
  readonly items: ReadonlyArray<PostRecord>
  /** Every post the filters match, wherever the page starts. */
  readonly total: number
  /** More posts follow this page in the sort's order (read with the page, not derived from `total`). */
  readonly hasMore: boolean
}

export class PostStore extends Context.Tag("@herald/core/posts/PostStore")<PostStore, {
  /**
   * The post, its targets and its destinations, all or nothing by itself (outside a transaction too:
   * `Transactor.withAtomicWrite` relies on it).
   */
  readonly insert: (record: PostRecord) => Effect.Effect<void, PersistenceError>
  /**
   * `insert`, but only while every `expected` account is still in the post's organization, active,
   * with the platform given, checked by the write itself (on Postgres in the same statement): true
   * when stored; false when an account no longer is, and then nothing is stored. Atomic by itself
   * like `insert`. For a create that checked its accounts on a list possibly stale
   * (`AccountStore.listForWrite`): on false it runs again from a fresh read.
   */
  readonly insertChecked: (
    record: PostRecord,
    expected: ReadonlyArray<ExpectedAccount>
  ) => Effect.Effect<boolean, PersistenceError>
  readonly findById: (
    organizationId: OrganizationId,
    id: PostId
  ) => Effect.Effect<Option.Option<PostRecord>, PersistenceError>
  /**
   * The posts of the given ids across organizations, each with how many destinations it has, in one
   * query however many: for the engine's batches, which check each post's organization themselves and
   * need only the count of its destinations (more than one: settlements are serialized). Missing ids
   * are absent.
   */
  readonly findMany: (ids: ReadonlyArray<PostId>) => Effect.Effect<ReadonlyArray<PostCount>, PersistenceError>
  readonly list: (query: PostQuery) => Effect.Effect<PostPage, PersistenceError>
  /**
   * How many posts match the query's filters, per derived status (every status present, 0 when none),
   * in one pass; sort and paging are ignored. `/me` reports it.
   */
  readonly countByStatus: (query: PostQuery) => Effect.Effect<Readonly<Record<PostStatus, number>>, PersistenceError>
  /** Replaces the post's own fields (not its destinations). */
  readonly update: (post: Post) => Effect.Effect<void, PersistenceError>
  /** Adds destinations (scheduling a draft). */
  readonly insertDestinations: (destinations: ReadonlyArray<Destination>) => Effect.Effect<void, PersistenceError>
  /** Replaces destinations' fields by id (edits of queued destinations, user retries). */
  readonly updateDestinations: (destinations: ReadonlyArray<Destination>) => Effect.Effect<void, PersistenceError>
  readonly deleteDestinations: (ids: ReadonlyArray<DestinationId>) => Effect.Effect<void, PersistenceError>
  /**
   * Re-queues the failed destinations matching the query (queued, due `now`, attempts 0, error and
   * failed time cleared), posts taken oldest first, in one statement and one transaction.
   */
  readonly requeueFailed: (query: RequeueQuery) => Effect.Effect<Requeued, PersistenceError>
  /** Deletes the post and its destinations; false when it did not exist. */
  readonly delete: (organizationId: OrganizationId, id: PostId) => Effect.Effect<boolean, PersistenceError>
}>() {}
