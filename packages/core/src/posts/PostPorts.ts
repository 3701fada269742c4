/**
 * What the posts use cases share besides the stores: their constants, who is calling (key or person),
 * and the services that arrive later (the queue allocator; the media check is `media/PostMedia`).
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Caller } from "../access/Caller.js"
import { type PersistenceError } from "../kernel/Errors.js"
import { AccountId, type OrganizationId, PostId } from "../kernel/Ids.js"
import { type PostRecord } from "./PostStore.js"

export { PostMedia } from "../media/PostMedia.js"
export type { Caller } from "../access/Caller.js"

/** The most accounts one post may target (`too_many_accounts` above it). */
export const maxAccountsPerPost = 25

/** The schedule endpoint needs this much lead time; create accepts any future instant. */
export const scheduleLeadSeconds = 60

/**
 * A PATCH moves or removes a queued destination only while it is due later than this: one due sooner
 * may be claimed by a worker at any moment, and an edit must never overwrite a claim (the post would
 * be published twice).
 */
export const editGuardSeconds = 10

/** Request field names refused on POST /posts in favour of `media_ids`. */
export const forbiddenMediaFields = ["media", "media_id", "mediaId", "attachments"] as const

export const draftNextSteps =
  "The draft is saved and will not publish. Edit it with PATCH /posts/{id}; publish it with " +
  "POST /posts/{id}/schedule and either scheduled_for (at least 1 minute ahead) or publish_now: true."

/** The guidance for a form body (`multipart/form-data` or urlencoded) sent to `endpoint`. */
export const formBodyMessage = (endpoint: string, contentType: string): string =>
  `${endpoint} takes a JSON body (Content-Type: application/json), not ${contentType}. Upload files ` +
  "first (POST /media/upload, or POST /media/upload-from-url), then send their ids: " +
  "{\"content\": \"Hello\", \"account_ids\": [1], \"media_ids\": [\"<media uuid>\"]}."

export const multipartMessage = formBodyMessage("POST /posts", "multipart/form-data")

// ---------------------------------------------------------------------------------------------------
// Who is calling
// ---------------------------------------------------------------------------------------------------

export const visibleIds = (caller: Caller): ReadonlyArray<AccountId> | undefined =>
  Option.getOrUndefined(caller.key.accountIds)

export const isVisible = (record: PostRecord, caller: Caller): boolean => {
  const ids = visibleIds(caller)
  return ids === undefined ||
    (record.post.accountIds.every((id) => ids.includes(id)) &&
      record.destinations.every((d) => ids.includes(d.accountId)))
}

// ---------------------------------------------------------------------------------------------------
// Hooks for services that arrive later
// ---------------------------------------------------------------------------------------------------

/** What a queue allocation found. */
export type QueueAllocation =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Full" }
  | { readonly _tag: "Slot"; readonly at: DateTime.Utc }

/**
 * Allocates the organization's next free queue opening at create time. Optional: without it every
 * organization has no queue (queues cannot be created through the API).
 */
export class QueueAllocator extends Context.Tag("@herald/core/Posts/QueueAllocator")<QueueAllocator, {
  /** Called inside the create transaction: the opening is claimed for `postId` with the post. */
  readonly allocate: (
    organizationId: OrganizationId,
    now: DateTime.Utc,
    postId: PostId
  ) => Effect.Effect<QueueAllocation, PersistenceError>
}>() {}

export const queueMessages: Record<Exclude<QueueAllocation["_tag"], "Slot">, string> = {
  Missing: "use_queue needs a posting queue, and this organization has none (queues are set up by an operator); " +
    "send scheduled_for instead",
  Empty: "use_queue needs a posting queue with openings, and this organization's queue has none",
  Full: "use_queue found no free opening in this organization's queue within the next 90 days; " +
    "send scheduled_for instead"
}
