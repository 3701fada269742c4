/**
 * The posts use cases of the API: create (draft, scheduled, immediate, queue), get, list, results,
 * update (PATCH), delete and schedule (a draft). Each state change and its events are written in one
 * transaction (the outbox). Request bodies arrive as parsed JSON and are decoded here, so that every
 * caller (HTTP, an embedding host) gets the same rules.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { SocialAccount } from "../accounts/Account.js"
import { AccountStore } from "../accounts/AccountStore.js"
import * as ApiKey from "../access/ApiKey.js"
import * as ApprovalLifecycle from "../workflow/ApprovalLifecycle.js"
import { CampaignStore, requireCampaign } from "../workflow/CampaignStore.js"
import * as CircuitBreaker from "../publishing/CircuitBreaker.js"
import { Crypto } from "../kernel/Crypto.js"
import { Destination } from "./Destination.js"
import * as Dispatcher from "../publishing/Dispatcher.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import * as FieldCaps from "../kernel/FieldCaps.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { AccountId, CampaignId, DestinationId, EventId, MediaId, type OrganizationId, PostId } from "../kernel/Ids.js"
import { parseFilterPlatform, type Platform } from "../platforms/Platform.js"
import * as PlatformRules from "../platforms/PlatformRules.js"
import { Approval, ApprovalStatus, PlatformContent, Post, PostStatus, ThreadPost } from "./Post.js"
import * as PostingLimits from "./PostingLimits.js"
import * as PostLifecycle from "./PostLifecycle.js"
import {
  type PostCursor,
  type PostPage,
  type PostQuery,
  type PostRecord,
  type PostSort,
  PostStore
} from "./PostStore.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import * as QueryParams from "../kernel/QueryParams.js"
import { firstParam, listParam, pageParams, positiveInt, type RawParams } from "../kernel/QueryParams.js"
import * as Spans from "../kernel/Spans.js"
import * as TraceContext from "../kernel/TraceContext.js"

// ---------------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------------

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

/** The caller: an API key (its organization, account restriction and creating user). */
export interface Caller {
  readonly key: ApiKey.ApiKey
}

const visibleIds = (caller: Caller): ReadonlyArray<AccountId> | undefined => Option.getOrUndefined(caller.key.accountIds)

const isVisible = (record: PostRecord, caller: Caller): boolean => {
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

/**
 * Checks that a post's media exist in the organization and suit its platforms (and finalizes
 * pending uploads). Optional: without it `media_ids` are only checked to be UUIDs.
 */
export class PostMedia extends Context.Tag("@herald/core/Posts/PostMedia")<PostMedia, {
  readonly check: (input: {
    readonly organizationId: OrganizationId
    readonly mediaIds: ReadonlyArray<MediaId>
    readonly threadMediaIds: ReadonlyArray<MediaId>
    readonly platforms: ReadonlyArray<Platform>
    readonly platformContent: PlatformContent
    /** `publish` also requires the media a platform cannot post without; `draft` checks what is attached. */
    readonly mode?: "draft" | "publish"
  }) => Effect.Effect<void, DomainError | PersistenceError>
}>() {}

export const queueMessages: Record<Exclude<QueueAllocation["_tag"], "Slot">, string> = {
  Missing: "use_queue needs a posting queue, and this organization has none (queues are set up by an operator); " +
    "send scheduled_for instead",
  Empty: "use_queue needs a posting queue with openings, and this organization's queue has none",
  Full: "use_queue found no free opening in this organization's queue within the next 90 days; " +
    "send scheduled_for instead"
}

// ---------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------

const nullable = <A, I, R>(schema: Schema.Schema<A, I, R>) => Schema.optional(Schema.NullOr(schema))

/** `platform_content` with every override's text within `FieldCaps.maxContent`. */
const CappedPlatformContent = PlatformContent.pipe(Schema.filter((entries) =>
  FieldCaps.contentIssues(
    Object.entries(entries).flatMap(([key, entry]) => (entry === undefined ? [] : [{ key, text: entry.content, field: "content" }]))
  )
))

/** `threadPosts`: at most `FieldCaps.maxThreadPosts` parts, each text within `FieldCaps.maxContent`. */
const CappedThreadPosts = Schema.Array(ThreadPost).pipe(
  Schema.maxItems(FieldCaps.maxThreadPosts, { message: () => `At most ${FieldCaps.maxThreadPosts} thread posts` }),
  Schema.filter((parts) => FieldCaps.contentIssues(parts.map((part, key) => ({ key, text: part.content, field: "content" }))))
)

const Instant = FieldCaps.cappedString(FieldCaps.maxInstant)

/**
 * The body of POST /posts. Every field may also be null, which means absent (so a fetched post can be
 * sent back). Texts and labels are capped (`FieldCaps`) before any other work.
 */
export const CreateBody = Schema.Struct({
  content: nullable(FieldCaps.cappedString(FieldCaps.maxContent)),
  account_ids: nullable(Schema.Array(Schema.Int)),
  scheduled_for: nullable(Instant),
  scheduled_at: nullable(Instant.annotations({ description: "Deprecated alias of scheduled_for" })),
  timezone: nullable(Instant),
  platform_content: nullable(CappedPlatformContent),
  media_ids: nullable(Schema.Array(MediaId)),
  campaign_id: nullable(CampaignId),
  draft: nullable(Schema.Boolean),
  request_approval: nullable(Schema.Boolean),
  use_queue: nullable(Schema.Boolean),
  idempotency_key: nullable(FieldCaps.cappedString(FieldCaps.maxLabel)),
  threadPosts: nullable(CappedThreadPosts)
}).annotations({ identifier: "CreatePostRequest" })
export type CreateBody = typeof CreateBody.Type

/**
 * The body of PATCH /posts/{id}: any of the editable fields; `null` clears `timezone`, `campaign_id`
 * and (drafts only) `scheduled_for`. `draft`, `request_approval`, `use_queue` and `idempotency_key` are
 * accepted so a fetched post can be sent back, but cannot be changed here.
 */
export const UpdateBody = CreateBody.annotations({ identifier: "UpdatePostRequest" })
export type UpdateBody = CreateBody

export const ScheduleBody = Schema.Struct({
  scheduled_for: nullable(Instant),
  scheduled_at: nullable(Instant.annotations({ description: "Deprecated alias of scheduled_for" })),
  publish_now: nullable(Schema.Boolean),
  use_queue: nullable(Schema.Boolean.annotations({
    description: "true: the draft takes the queue's next free opening, as use_queue on POST /posts does"
  })),
  account_ids: nullable(Schema.Array(Schema.Int)),
  timezone: nullable(Instant)
}).annotations({ identifier: "SchedulePostRequest" })
export type ScheduleBody = typeof ScheduleBody.Type

const nullishAlternative = /^Expected (null|undefined), actual /

/**
 * Every problem, as `{path, message}`. A nullable field that fails reports its real problem plus
 * "Expected null" and "Expected undefined" for the union's other members: those two are dropped
 * when the real problem is reported at the same path or below it.
 */
const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<PlatformRules.Issue> => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message
  }))
  const within = (path: string, other: string) => other === path || other.startsWith(`${path}.`)
  return all.filter((issue) =>
    !nullishAlternative.test(issue.message) ||
    !all.some((other) => !nullishAlternative.test(other.message) && within(issue.path, other.path))
  )
}

/** Decodes a body, reporting every problem in `details.validation_errors` (unknown fields are ignored). */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>, raw: unknown): Effect.Effect<A, DomainError> =>
  Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "ignore" })(raw).pipe(
    Effect.mapError((error) =>
      DomainError.of("validation_error", "The request did not match the expected schema", {
        validation_errors: issuesOf(error)
      })
    )
  )

const invalid = (path: string, message: string): DomainError =>
  DomainError.of("validation_error", path === "" ? message : `${path}: ${message}`, {
    validation_errors: [{ path, message }]
  })

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** 400 `invalid_field_name` for a media field other than `media_ids`, at the top or in a thread post. */
export const checkFieldNames = (raw: unknown): Effect.Effect<void, DomainError> => {
  if (!isObject(raw)) return Effect.void
  const found: Array<string> = forbiddenMediaFields.filter((f) => f in raw)
  if (Array.isArray(raw["threadPosts"])) {
    raw["threadPosts"].forEach((part, i) => {
      if (isObject(part)) {
        for (const f of forbiddenMediaFields) if (f in part) found.push(`threadPosts.${i}.${f}`)
      }
    })
  }
  if (found.length === 0) return Effect.void
  return DomainError.fail(
    "invalid_field_name",
    `Unsupported field ${found.map((f) => `'${f}'`).join(", ")}: attach media with media_ids, an array of ` +
      "media UUIDs from POST /media/upload",
    { fields: found, hint: "Use media_ids: [\"<media uuid>\", ...]" }
  )
}

const objectBody = (raw: unknown): Effect.Effect<Record<string, unknown>, DomainError> =>
  isObject(raw) ? Effect.succeed(raw) : Effect.fail(invalid("", "The body must be a JSON object"))

// ---------------------------------------------------------------------------------------------------
// Field rules
// ---------------------------------------------------------------------------------------------------

const isoPattern =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(?:\s*([Zz]|[+-]\d{2}(?::?\d{2})?))?$/

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * An ISO 8601 date-time (or date); without an offset it is read as UTC. None when it is not ISO 8601
 * or names no real instant (month 13, February 30...).
 */
export const parseInstant = (raw: string): Option.Option<DateTime.Utc> => {
  const m = isoPattern.exec(raw.trim())
  if (m === null) return Option.none()
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((s) => Number(s ?? "0"))
  const fraction = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000)
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return Option.none()
  if (hour > 23 || minute > 59 || second > 59) return Option.none()
  let offsetMinutes = 0
  const zone = m[8]
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "")
    const h = Number(digits.slice(0, 2))
    const mm = digits.length > 2 ? Number(digits.slice(2, 4)) : 0
    if (h > 23 || mm > 59) return Option.none()
    offsetMinutes = (zone.startsWith("-") ? -1 : 1) * (h * 60 + mm)
  }
  const millis = Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offsetMinutes * 60_000
  return Number.isFinite(millis) ? Option.some(DateTime.unsafeMake(millis)) : Option.none()
}

const ianaShape = /^(?:UTC|[A-Za-z][A-Za-z_-]*(?:\/[A-Za-z0-9_+-]+)*)$/

/** An IANA zone name (`Europe/Paris`, `UTC`); offsets such as `+02:00` are not zones. */
export const isIanaZone = (zone: string): boolean => ianaShape.test(zone) && Option.isSome(DateTime.zoneMakeNamed(zone))

const checkTimezone = (zone: string | null | undefined): Effect.Effect<Option.Option<string>, DomainError> => {
  if (zone === undefined || zone === null) return Effect.succeed(Option.none())
  return isIanaZone(zone)
    ? Effect.succeed(Option.some(zone))
    : DomainError.fail("invalid_timezone", `'${zone}' is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)`, {
      timezone: zone
    })
}

/** `scheduled_for`, or its deprecated alias `scheduled_at`; both given must agree. */
const scheduledValue = (
  body: { readonly scheduled_for?: string | null | undefined; readonly scheduled_at?: string | null | undefined }
): Effect.Effect<{ readonly raw: string | null | undefined; readonly field: string }, DomainError> => {
  const primary = body.scheduled_for
  const alias = body.scheduled_at
  if (primary !== undefined && primary !== null && alias !== undefined && alias !== null && primary !== alias) {
    const a = parseInstant(primary)
    const b = parseInstant(alias)
    if (Option.isNone(a) || Option.isNone(b) || !DateTime.Equivalence(a.value, b.value)) {
      return Effect.fail(invalid("scheduled_at", "scheduled_at is a deprecated alias of scheduled_for; they disagree"))
    }
  }
  if (primary !== undefined) return Effect.succeed({ raw: primary ?? alias, field: "scheduled_for" })
  return Effect.succeed({ raw: alias, field: "scheduled_at" })
}

const parseScheduled = (raw: string, field: string): Effect.Effect<DateTime.Utc, DomainError> =>
  Option.match(parseInstant(raw), {
    onNone: () =>
      DomainError.fail("invalid_datetime", `${field} must be an ISO 8601 date-time, e.g. 2026-07-01T09:30:00Z`, {
        field,
        value: raw
      }),
    onSome: Effect.succeed
  })

const mustBeAfter = (at: DateTime.Utc, earliest: DateTime.Utc, field: string, lead: string) =>
  DateTime.greaterThan(at, earliest)
    ? Effect.void
    : DomainError.fail("past_schedule_time", `${field} must be ${lead}`, {
      field,
      scheduled_for: DateTime.formatIso(at),
      earliest: DateTime.formatIso(earliest)
    })

/** `disableValidation` for class instances built from values that are already decoded. */
const trusted = true

const dedupe = <A>(xs: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(xs)]

/**
 * Resolves the targeted accounts: at most `maxAccountsPerPost`, each in the organization, allowed to
 * the key, and active. Duplicates are merged (first occurrence kept).
 */
const resolveAccounts = (
  caller: Caller,
  ids: ReadonlyArray<number>
): Effect.Effect<ReadonlyArray<SocialAccount>, DomainError | PersistenceError, AccountStore> =>
  Effect.map(resolveAccountsFrom(caller, ids, "fresh"), (resolved) => resolved.accounts)

/**
 * `resolveAccounts`, on `AccountStore.listForWrite` when `source` is "for write": `fresh` false when
 * the list may be stale (the caller then decides no error on it and has the write re-validate).
 */
const resolveAccountsFrom = (
  caller: Caller,
  ids: ReadonlyArray<number>,
  source: "fresh" | "for write"
): Effect.Effect<
  { readonly accounts: ReadonlyArray<SocialAccount>; readonly fresh: boolean },
  DomainError | PersistenceError,
  AccountStore
> =>
  Effect.gen(function*() {
    if (ids.length > maxAccountsPerPost) {
      return yield* DomainError.fail(
        "too_many_accounts",
        `A post may target at most ${maxAccountsPerPost} accounts; ${ids.length} were given`,
        { limit: maxAccountsPerPost, received: ids.length }
      )
    }
    const unique = dedupe(ids)
    if (unique.length === 0) return { accounts: [], fresh: true }
    const store = yield* AccountStore
    const listed = source === "fresh"
      ? { accounts: yield* store.list(caller.key.organizationId), fresh: true }
      : yield* store.listForWrite(caller.key.organizationId)
    const all = listed.accounts
    const byId = new Map(all.map((a) => [a.id as number, a]))
    const bad: Array<number> = []
    const inactive: Array<number> = []
    const found: Array<SocialAccount> = []
    for (const id of unique) {
      const account = byId.get(id)
      if (account === undefined || !ApiKey.canUseAccount(caller.key, account.id)) bad.push(id)
      else if (!account.isActive) inactive.push(id)
      else found.push(account)
    }
    if (bad.length > 0 || inactive.length > 0) {
      const parts = [
        ...(bad.length > 0 ? [`not found in this organization: ${bad.join(", ")}`] : []),
        ...(inactive.length > 0 ? [`inactive (reconnect them first): ${inactive.join(", ")}`] : [])
      ]
      return yield* DomainError.fail("invalid_accounts", `Invalid account_ids: ${parts.join("; ")}`, {
        invalid_account_ids: [...bad, ...inactive],
        not_found: bad,
        inactive
      })
    }
    return { accounts: found, fresh: listed.fresh }
  })

const requireAccounts = (ids: ReadonlyArray<number> | null | undefined) =>
  ids === undefined || ids === null || ids.length === 0
    ? DomainError.fail(
      "invalid_accounts",
      "account_ids is required: give at least one account id (GET /accounts lists them), or save a draft with draft: true",
      { invalid_account_ids: [] }
    )
    : Effect.succeed(ids)

const checkMedia = (
  caller: Caller,
  post: { readonly mediaIds: ReadonlyArray<MediaId>; readonly threadPosts: ReadonlyArray<ThreadPost> },
  platforms: ReadonlyArray<Platform>,
  platformContent: PlatformContent,
  mode: "draft" | "publish"
) =>
  Effect.flatMap(Effect.serviceOption(PostMedia), (media) =>
    Option.match(media, {
      onNone: () => Effect.void,
      onSome: (m) =>
        m.check({
          organizationId: caller.key.organizationId,
          mediaIds: post.mediaIds,
          threadMediaIds: post.threadPosts.flatMap((p) => p.media_ids ?? []),
          platforms,
          platformContent,
          mode
        })
    }))

// ---------------------------------------------------------------------------------------------------
// Status and events
// ---------------------------------------------------------------------------------------------------

/** The reported status, derived from the destinations (`PostLifecycle.derivePostStatus`). */
export const statusOf = (record: PostRecord): PostStatus =>
  PostLifecycle.derivePostStatus({
    isDraft: record.post.isDraft,
    destinations: record.destinations.map((d) => d.status),
    immediate: Option.isNone(record.post.scheduledFor)
  })

const makeEvent = (organizationId: OrganizationId, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).uuid
    return new Event({
      id: EventId.make(id),
      organizationId,
      type,
      data,
      createdAt: yield* DateTime.now,
      traceParent: yield* TraceContext.current
    })
  })

const isoOrNull = (t: Option.Option<DateTime.Utc>): string | null =>
  Option.match(t, { onNone: () => null, onSome: DateTime.formatIso })

/** The data of post.scheduled, post.updated and post.deleted. */
export const eventData = (record: PostRecord, extra: EventData = {}): EventData => ({
  post_id: record.post.id,
  status: statusOf(record),
  scheduled_for: isoOrNull(record.post.scheduledFor),
  account_ids: record.post.accountIds,
  ...extra
})

const requestedBy = (caller: Caller) => ({
  api_key_id: caller.key.id,
  user_id: Option.getOrNull(caller.key.createdBy)
})

// ---------------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------------

const newDestinations = (
  post: Post,
  accounts: ReadonlyArray<SocialAccount>,
  dueAt: DateTime.Utc,
  now: DateTime.Utc
) =>
  Effect.forEach(accounts, (account) =>
    Effect.map(Effect.flatMap(IdGenerator, (ids) => ids.uuid), (id) =>
      Destination.queued({ id: DestinationId.make(id), post, account, dueAt, now })))

// ---------------------------------------------------------------------------------------------------
// create
// ---------------------------------------------------------------------------------------------------

export interface Created {
  readonly record: PostRecord
  /** Whether the request used the deprecated `scheduled_at` (the response then echoes it). */
  readonly scheduledAtSent: boolean
}

export type CreateRequirements =
  | PostStore
  | AccountStore
  | EventStore
  | Transactor
  | IdGenerator
  | UsageCounters
  | Crypto
  | CampaignStore

/**
 * POST /posts. `raw` is the parsed JSON body: media field names are checked on it before decoding,
 * and its canonical hash is the circuit breaker's key.
 */
export const create = (
  caller: Caller,
  raw: unknown
): Effect.Effect<Created, DomainError | PersistenceError, CreateRequirements> =>
  Effect.suspend(() => {
    // A create that checked its accounts on a list possibly stale (`AccountStore.listForWrite`) runs
    // again from a fresh read when anything after that read fails, or when the insert's own check of
    // the accounts misses: every error answer, and every post stored, rests on accounts as they are.
    const attempt = { stale: false }
    return createOnce(caller, raw, attempt).pipe(
      Effect.catchIf(
        (e): e is DomainError | StaleAccounts => e instanceof StaleAccounts || (attempt.stale && e instanceof DomainError),
        (e) =>
          Effect.zipRight(
            e instanceof StaleAccounts ? Effect.flatMap(AccountStore, (store) => store.forgetListsForWrite) : Effect.void,
            createOnce(caller, raw, undefined)
          )
      ),
      // The fresh run never checks on a stale list, so it never fails with StaleAccounts.
      Effect.catchIf((e): e is StaleAccounts => e instanceof StaleAccounts, (e) => Effect.die(e))
    )
  }).pipe(Spans.withSpan("Posts.create"))

/** A create's insert found an account it checked on a possibly stale list changed: run it again fresh. */
class StaleAccounts extends Data.TaggedError("StaleAccounts")<{ readonly reason: "insert-check-missed" }> {}

/**
 * One run of `create`. With `attempt` (a draft that is only an insert), its accounts come from
 * `AccountStore.listForWrite`; `attempt.stale` says when that list may be stale, and the insert then
 * re-validates them (`PostStore.insertChecked`). Without it, today's fresh read and plain insert.
 */
const createOnce = (
  caller: Caller,
  raw: unknown,
  attempt: { stale: boolean } | undefined
): Effect.Effect<Created, DomainError | PersistenceError | StaleAccounts, CreateRequirements> =>
  Effect.gen(function*() {
    const rawBody = yield* objectBody(raw)
    yield* checkFieldNames(rawBody)
    const body = yield* decodeBody(CreateBody, rawBody)
    const organizationId = caller.key.organizationId
    const isDraft = body.draft === true
    const useQueue = body.use_queue === true
    const now = yield* DateTime.now

    if (body.request_approval === true && !isDraft) {
      return yield* Effect.fail(
        invalid("request_approval", "request_approval needs draft: true (a draft is submitted for approval)")
      )
    }
    const scheduled = yield* scheduledValue(body)
    const hasSchedule = scheduled.raw !== undefined && scheduled.raw !== null
    if (useQueue && hasSchedule) {
      return yield* Effect.fail(
        invalid("use_queue", "use_queue and scheduled_for are exclusive: the queue chooses the time")
      )
    }
    if (useQueue && isDraft) {
      return yield* Effect.fail(
        invalid("use_queue", "use_queue allocates an opening at create time and cannot be used with draft: true")
      )
    }
    let scheduledFor = Option.none<DateTime.Utc>()
    if (hasSchedule) {
      const at = yield* parseScheduled(scheduled.raw as string, scheduled.field)
      yield* mustBeAfter(at, now, scheduled.field, "in the future")
      scheduledFor = Option.some(at)
    }
    const timezone = yield* checkTimezone(body.timezone)
    const accountIds = isDraft ? (body.account_ids ?? []) : yield* requireAccounts(body.account_ids)
    // A draft with no approval request and no campaign is only an insert (`onlyInsert` below): its
    // accounts may come from a list kept in memory, the insert checking them again.
    const insertOnly = isDraft && body.request_approval !== true && (body.campaign_id === undefined || body.campaign_id === null)
    const resolved = yield* resolveAccountsFrom(caller, accountIds, attempt !== undefined && insertOnly ? "for write" : "fresh")
    if (attempt !== undefined && !resolved.fresh) attempt.stale = true
    const accounts = resolved.accounts
    if (body.campaign_id !== undefined && body.campaign_id !== null) {
      yield* requireCampaign(organizationId, body.campaign_id)
    }

    const content = body.content ?? ""
    const platformContent: PlatformContent = body.platform_content ?? {}
    const mediaIds = dedupe(body.media_ids ?? [])
    const threadPosts = body.threadPosts ?? []
    const platforms = accounts.map((a) => a.platform)
    yield* PlatformRules.check({
      platforms,
      content,
      platformContent,
      threadPosts,
      hasMedia: mediaIds.length > 0,
      mode: isDraft ? "draft" : "publish"
    })
    yield* checkMedia(caller, { mediaIds, threadPosts }, platforms, platformContent, isDraft ? "draft" : "publish")

    const crypto = yield* Crypto
    const hash = yield* crypto.sha256Hex(CircuitBreaker.canonicalJson(rawBody))
    if (!isDraft) yield* CircuitBreaker.check(organizationId, hash)

    const mode: PostingLimits.PublishMode = Option.isSome(scheduledFor) || useQueue ? "scheduled" : "immediate"

    const id = PostId.make(yield* (yield* IdGenerator).uuid)
    // Every field is already decoded (the body) or typed (ids, instants): the class constructor's
    // own validation, a second decode of all of it per create, is skipped (it showed in the profile).
    const post = new Post({
      id,
      organizationId,
      createdByKey: Option.some(caller.key.id),
      createdBy: caller.key.createdBy,
      content,
      accountIds: accounts.map((a) => a.id),
      platformContent,
      mediaIds,
      scheduledFor,
      timezone,
      campaignId: Option.fromNullable(body.campaign_id),
      isDraft,
      createdStatus: isDraft ? "draft" : mode === "scheduled" ? "scheduled" : "publishing",
      approval: body.request_approval === true
        ? Option.some(new Approval({ status: "pending", note: Option.none(), consumed: false }))
        : Option.none(),
      idempotencyKey: Option.fromNullable(body.idempotency_key),
      requestHash: Option.some(hash),
      threadPosts,
      useQueue,
      createdAt: now,
      updatedAt: now,
      traceParent: yield* TraceContext.current
    }, trusted)
    const transactor = yield* Transactor
    const posts = yield* PostStore
    const eventStore = yield* EventStore
    const allocator = useQueue ? yield* Effect.serviceOption(QueueAllocator) : Option.none()
    // A draft with no approval request and no campaign writes the post alone: no event, no posting
    // limit, no queue opening, no campaign hold. That one `PostStore.insert` is atomic by itself, and
    // the store may then skip BEGIN/COMMIT (Postgres); every other create is a full transaction.
    const onlyInsert = isDraft && !useQueue && Option.isNone(post.approval) && Option.isNone(post.campaignId)
    const atomically = onlyInsert ? transactor.withAtomicWrite : transactor.withTransaction
    const record = yield* atomically(Effect.gen(function*() {
      if (Option.isSome(post.campaignId)) yield* requireCampaign(organizationId, post.campaignId.value)
      // The queue's opening is claimed in the transaction that inserts the post (Queues.allocate).
      let queued = post
      if (useQueue) {
        const allocation: QueueAllocation = Option.isNone(allocator)
          ? { _tag: "Missing" }
          : yield* allocator.value.allocate(organizationId, now, id)
        if (allocation._tag !== "Slot") {
          return yield* DomainError.fail("validation_error", queueMessages[allocation._tag], {
            validation_errors: [{ path: "use_queue", message: queueMessages[allocation._tag] }],
            queue: allocation._tag.toLowerCase()
          })
        }
        queued = new Post({ ...post, scheduledFor: Option.some(allocation.at) }, trusted)
      }
      const destinations = isDraft
        ? []
        : yield* newDestinations(queued, accounts, Option.getOrElse(queued.scheduledFor, () => now), now)
      const record: PostRecord = { post: queued, destinations }
      const events: Array<Event> = []
      if (!isDraft) {
        events.push(yield* makeEvent(organizationId, "post.scheduled", eventData(record, { publish_mode: mode })))
      }
      if (Option.isSome(queued.approval)) {
        events.push(
          yield* makeEvent(organizationId, "post.approval_requested", {
            post_id: id,
            account_ids: queued.accountIds,
            requested_by: requestedBy(caller)
          })
        )
      }
      if (!isDraft) yield* PostingLimits.consume(PostingLimits.subjectOf(caller.key), mode)
      if (!resolved.fresh) {
        const stored = yield* posts.insertChecked(record, accounts.map((a) => ({ id: a.id, platform: a.platform })))
        if (!stored) return yield* Effect.fail(new StaleAccounts({ reason: "insert-check-missed" }))
      } else {
        yield* posts.insert(record)
      }
      if (events.length > 0) yield* eventStore.append(events)
      return record
    }))
    if (mode === "immediate" && !isDraft) yield* Dispatcher.poke
    return { record, scheduledAtSent: body.scheduled_at !== undefined && body.scheduled_at !== null }
  })

// ---------------------------------------------------------------------------------------------------
// get, results, list
// ---------------------------------------------------------------------------------------------------

/** The post, when it is in the caller's organization and visible to the key; else 404. */
export const get = (
  caller: Caller,
  rawId: string
): Effect.Effect<PostRecord, DomainError | PersistenceError, PostStore> =>
  Effect.gen(function*() {
    const id = Schema.decodeUnknownOption(PostId)(rawId.toLowerCase())
    if (Option.isNone(id)) return yield* DomainError.notFound("Post")
    const found = yield* (yield* PostStore).findById(caller.key.organizationId, id.value)
    if (Option.isNone(found) || !isVisible(found.value, caller)) return yield* DomainError.notFound("Post")
    return found.value
  }).pipe(Spans.withSpan("Posts.get"))

export const defaultPageSize = QueryParams.defaultPageSize
export const maxPageSize = QueryParams.maxPageSize

const sorts: ReadonlyArray<PostSort> = ["created_at", "scheduled_for", "updated_at", "published_at"]

const instantParam = (params: RawParams, name: string): DateTime.Utc | undefined => {
  const raw = firstParam(params, name)
  return raw === undefined ? undefined : Option.getOrUndefined(parseInstant(raw))
}

/**
 * The GET /posts query from raw query parameters. Invalid values are dropped silently (a list keeps
 * its valid members); `limit` outside 1..100 is clamped into it (0 or junk gives the default 20);
 * `offset` that is not a non-negative integer gives 0.
 */
export const parseListQuery = (caller: Caller, params: RawParams): PostQuery => {
  const statuses = listParam(params, "status").filter(Schema.is(PostStatus))
  const platforms = dedupe(listParam(params, "platform").flatMap((p) => {
    const platform = parseFilterPlatform(p)
    return platform === undefined ? [] : [platform]
  }))
  const approval = listParam(params, "approval").filter(Schema.is(ApprovalStatus))
  const accountId = Option.getOrUndefined(Schema.decodeUnknownOption(AccountId)(positiveInt(firstParam(params, "account_id"))))
  const campaignId = Option.getOrUndefined(
    Schema.decodeUnknownOption(CampaignId)(positiveInt(firstParam(params, "campaign_id")))
  )
  const sortRaw = firstParam(params, "sort")?.toLowerCase()
  const orderRaw = firstParam(params, "order")?.toLowerCase()
  const { limit, offset } = pageParams(params)
  const search = firstParam(params, "search")
  const visible = visibleIds(caller)
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
  return {
    organizationId: caller.key.organizationId,
    ...optional("visibleAccountIds", visible),
    ...optional("statuses", statuses.length > 0 ? statuses : undefined),
    ...optional("platforms", platforms.length > 0 ? platforms : undefined),
    ...optional("approval", approval.length > 0 ? approval : undefined),
    ...optional("accountId", accountId),
    ...optional("campaignId", campaignId),
    ...optional("createdAfter", instantParam(params, "created_after")),
    ...optional("createdBefore", instantParam(params, "created_before")),
    ...optional("scheduledAfter", instantParam(params, "scheduled_after")),
    ...optional("scheduledBefore", instantParam(params, "scheduled_before")),
    ...optional("publishedAfter", instantParam(params, "published_after")),
    ...optional("publishedBefore", instantParam(params, "published_before")),
    ...optional("updatedAfter", instantParam(params, "updated_after")),
    ...optional("search", search === undefined || search === "" ? undefined : search),
    sort: sorts.find((s) => s === sortRaw) ?? "created_at",
    order: orderRaw === "asc" ? "asc" : "desc",
    limit,
    offset
  }
}

export interface Listed {
  readonly page: PostPage
  readonly limit: number
  readonly offset: number
  readonly hasMore: boolean
  /** Where the next page starts (`cursor`), when more follow. */
  readonly nextCursor: string | null
}

/**
 * A list cursor as the API hands it out: base64url of `{s, o, k, i}` (sort, order, the sort column's
 * value of the last post as epoch millis or null, its id). Opaque to clients; it carries the sort
 * and order so a page is never continued in another order.
 */
const CursorJson = Schema.parseJson(Schema.Struct({
  s: Schema.Literal("created_at", "scheduled_for", "updated_at", "published_at"),
  o: Schema.Literal("asc", "desc"),
  k: Schema.NullOr(Schema.Int),
  i: PostId
}))

export interface ListCursor extends PostCursor {
  readonly sort: PostSort
  readonly order: "asc" | "desc"
}

export const encodeCursor = (cursor: ListCursor): string =>
  Encoding.encodeBase64Url(JSON.stringify({ s: cursor.sort, o: cursor.order, k: cursor.value, i: cursor.id }))

export const decodeCursor = (raw: string): Option.Option<ListCursor> => {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return Option.none()
  return Option.getRight(Encoding.decodeBase64UrlString(raw)).pipe(
    Option.flatMap(Schema.decodeUnknownOption(CursorJson)),
    Option.map((c) => ({ sort: c.s, order: c.o, value: c.k, id: c.i }))
  )
}

/** The sort column's value of a listed post, as the store sorts by it. */
const sortValue = (record: PostRecord, sort: PostSort): number | null => {
  switch (sort) {
    case "created_at":
      return DateTime.toEpochMillis(record.post.createdAt)
    case "updated_at":
      return DateTime.toEpochMillis(record.post.updatedAt)
    case "scheduled_for":
      return Option.match(record.post.scheduledFor, { onNone: () => null, onSome: DateTime.toEpochMillis })
    case "published_at": {
      const times = record.destinations.flatMap((d) => Option.toArray(d.publishedAt)).map(DateTime.toEpochMillis)
      return times.length === 0 ? null : Math.max(...times)
    }
  }
}

const cursorError = (message: string) =>
  DomainError.of("validation_error", `cursor: ${message}`, { validation_errors: [{ path: "cursor", message }] })

/**
 * GET /posts: a page by `offset`, or by `cursor` (keyset: the page after the position the previous
 * page's `next_cursor` names, whatever was created or deleted before it). A cursor takes its sort and
 * order from itself; naming another sort or order, or an offset, beside it is a validation error, as
 * is a cursor this server did not hand out.
 */
export const list = (
  caller: Caller,
  params: RawParams
): Effect.Effect<Listed, DomainError | PersistenceError, PostStore> =>
  Effect.gen(function*() {
    const parsed = parseListQuery(caller, params)
    const rawCursor = firstParam(params, "cursor")
    let query: PostQuery = parsed
    if (rawCursor !== undefined && rawCursor !== "") {
      const cursor = decodeCursor(rawCursor)
      if (Option.isNone(cursor)) {
        return yield* cursorError("not a cursor this API handed out (use pagination.next_cursor as it is)")
      }
      const named = (name: string) => firstParam(params, name) !== undefined && firstParam(params, name) !== ""
      if (named("sort") && parsed.sort !== cursor.value.sort || named("order") && parsed.order !== cursor.value.order) {
        return yield* cursorError(
          `the cursor continues sort=${cursor.value.sort}&order=${cursor.value.order}; drop sort and order or name those`
        )
      }
      if (named("offset") && parsed.offset !== 0) {
        return yield* cursorError("cursor and offset cannot be combined; the cursor already says where the page starts")
      }
      query = { ...parsed, sort: cursor.value.sort, order: cursor.value.order, offset: 0, after: cursor.value }
    }
    const page = yield* (yield* PostStore).list(query)
    const last = page.items.at(-1)
    return {
      page,
      limit: query.limit,
      offset: query.offset,
      hasMore: page.hasMore,
      nextCursor: page.hasMore && last !== undefined
        ? encodeCursor({ sort: query.sort, order: query.order, value: sortValue(last, query.sort), id: last.post.id })
        : null
    }
  }).pipe(Spans.withSpan("Posts.list"))

// ---------------------------------------------------------------------------------------------------
// update (PATCH)
// ---------------------------------------------------------------------------------------------------

export interface Updated {
  readonly record: PostRecord
  readonly scheduledAtSent: boolean
  /** Request field names that changed something. */
  readonly changed: ReadonlyArray<string>
}

const notEditable = (message: string, status: PostStatus, details: Record<string, unknown> = {}) =>
  DomainError.fail("invalid_post_status", message, { status, ...details })

/** The fields whose new value is what the next send of a destination uses. */
const sendFields: ReadonlyArray<string> = ["content", "platform_content", "media_ids", "threadPosts"]

/**
 * What a PATCH may change, given the post as it is and the fields whose value changes (a draft: all of
 * them). In every state: `campaign_id`, `timezone`. Content fields (`content`, `platform_content`,
 * `media_ids`, `threadPosts`): while some destination may still be sent (queued, failed: the next retry
 * uses them; publishing: a re-queue after a transient failure does), not once every destination is
 * published. `scheduled_for`: it moves the queued destinations, so there must be one, and each due later
 * than the edit guard. `account_ids`: a removed account's destination must be queued (due later than
 * the guard) or failed, never published or publishing. Fails with 400 `invalid_post_status` otherwise.
 */
export const ensureEditable = (
  record: PostRecord,
  changed: ReadonlyArray<string>,
  removedAccounts: ReadonlyArray<AccountId>,
  now: DateTime.Utc
): Effect.Effect<void, DomainError> => {
  if (record.post.isDraft) return Effect.void
  const status = statusOf(record)
  const destinations = record.destinations
  const guard = DateTime.add(now, { seconds: editGuardSeconds })
  const dueSoon = (d: Destination) => d.status === "queued" && DateTime.lessThanOrEqualTo(d.dueAt, guard)
  const contentChanged = changed.filter((f) => sendFields.includes(f))
  if (contentChanged.length > 0 && destinations.length > 0 && destinations.every((d) => d.status === "published")) {
    return notEditable(
      `Every destination of this post is published, so a change of ${contentChanged.join(", ")} would reach no ` +
        "one (published copies are not edited on the platforms); create a new post instead",
      status,
      { fields: contentChanged }
    )
  }
  if (changed.includes("scheduled_for")) {
    const queued = destinations.filter((d) => d.status === "queued")
    if (queued.length === 0) {
      return notEditable(
        "No destination of this post is waiting to publish, so there is nothing to reschedule; retry failed " +
          "destinations with POST /posts/{id}/retry",
        status,
        { fields: ["scheduled_for"] }
      )
    }
    if (queued.some(dueSoon)) {
      return notEditable(
        `This post is due to publish within ${editGuardSeconds} seconds and can no longer be rescheduled`,
        status,
        { fields: ["scheduled_for"] }
      )
    }
  }
  const removed = destinations.filter((d) => removedAccounts.includes(d.accountId))
  const kept = removed.filter((d) => d.status === "published" || d.status === "publishing" || dueSoon(d))
  if (kept.length > 0) {
    return notEditable(
      "These accounts cannot be removed from the post: their destination is published, publishing or due " +
        `within ${editGuardSeconds} seconds: ${kept.map((d) => d.accountId).join(", ")}`,
      status,
      { fields: ["account_ids"], account_ids: kept.map((d) => d.accountId) }
    )
  }
  return Effect.void
}

/** Loads the post inside a transaction, holding its lock, or 404. */
const lockAndLoad = (caller: Caller, id: PostId) =>
  Effect.gen(function*() {
    yield* Dispatcher.lockPost(id)
    const found = yield* (yield* PostStore).findById(caller.key.organizationId, id)
    if (Option.isNone(found) || !isVisible(found.value, caller)) return yield* DomainError.notFound("Post")
    return found.value
  })

/** A changes_requested draft that is edited goes back to pending review (`ApprovalLifecycle`). */
const resubmitted = (approval: Option.Option<Approval>): Option.Option<Approval> =>
  Option.map(approval, ApprovalLifecycle.resubmitOnEdit)

export type UpdateRequirements =
  | PostStore
  | AccountStore
  | EventStore
  | Transactor
  | IdGenerator
  | UsageCounters
  | CampaignStore

export const update = (
  caller: Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<Updated, DomainError | PersistenceError, UpdateRequirements> =>
  Effect.gen(function*() {
    const existing = yield* get(caller, rawId)
    const rawBody = yield* objectBody(raw)
    yield* checkFieldNames(rawBody)
    const body = yield* decodeBody(UpdateBody, rawBody)
    const now = yield* DateTime.now
    const current = existing.post

    if (body.draft !== undefined && body.draft !== null && body.draft !== current.isDraft) {
      return yield* Effect.fail(
        invalid(
          "draft",
          current.isDraft
            ? "A draft is published with POST /posts/{id}/schedule, not PATCH"
            : "A scheduled post cannot become a draft again; delete it instead"
        )
      )
    }
    const changed: Array<string> = []
    const has = (field: keyof UpdateBody) => body[field] !== undefined

    // Schedule
    const scheduled = yield* scheduledValue(body)
    let scheduledFor = current.scheduledFor
    if (scheduled.raw !== undefined) {
      if (scheduled.raw === null) {
        if (!current.isDraft && Option.isSome(current.scheduledFor)) {
          return yield* Effect.fail(
            invalid("scheduled_for", "A scheduled post keeps a scheduled_for: send a new future time, or delete the post")
          )
        }
        scheduledFor = Option.none()
      } else {
        const at = yield* parseScheduled(scheduled.raw, scheduled.field)
        if (!(Option.isSome(current.scheduledFor) && DateTime.Equivalence(current.scheduledFor.value, at))) {
          yield* mustBeAfter(at, now, scheduled.field, "in the future")
        }
        scheduledFor = Option.some(at)
      }
    }
    const timezone = has("timezone") ? yield* checkTimezone(body.timezone) : current.timezone

    let accounts: ReadonlyArray<SocialAccount> | undefined
    let accountIds = current.accountIds
    if (has("account_ids")) {
      const ids = current.isDraft ? (body.account_ids ?? []) : yield* requireAccounts(body.account_ids)
      accounts = yield* resolveAccounts(caller, ids)
      accountIds = accounts.map((a) => a.id)
    }
    const content = has("content") ? body.content ?? "" : current.content
    const platformContent = has("platform_content") ? body.platform_content ?? {} : current.platformContent
    const mediaIds = has("media_ids") ? dedupe(body.media_ids ?? []) : current.mediaIds
    const threadPosts = has("threadPosts") ? body.threadPosts ?? [] : current.threadPosts
    const campaignId = has("campaign_id") ? Option.fromNullable(body.campaign_id) : current.campaignId
    if (Option.isSome(campaignId) && Option.getOrNull(campaignId) !== Option.getOrNull(current.campaignId)) {
      yield* requireCampaign(current.organizationId, campaignId.value)
    }
    const same = (a: unknown, b: unknown) => CircuitBreaker.canonicalJson(a) === CircuitBreaker.canonicalJson(b)
    const optionIso = (t: Option.Option<DateTime.Utc>) => isoOrNull(t)
    const comparisons: ReadonlyArray<readonly [string, boolean]> = [
      ["content", content !== current.content],
      ["account_ids", !same(accountIds, current.accountIds)],
      ["scheduled_for", optionIso(scheduledFor) !== optionIso(current.scheduledFor)],
      ["timezone", Option.getOrNull(timezone) !== Option.getOrNull(current.timezone)],
      ["platform_content", !same(platformContent, current.platformContent)],
      ["media_ids", !same(mediaIds, current.mediaIds)],
      ["threadPosts", !same(threadPosts, current.threadPosts)],
      ["campaign_id", Option.getOrNull(campaignId) !== Option.getOrNull(current.campaignId)]
    ]
    for (const [field, differs] of comparisons) if (differs) changed.push(field)
    const removedAccounts = (record: PostRecord) => record.post.accountIds.filter((id) => !accountIds.includes(id))
    yield* ensureEditable(existing, changed, removedAccounts(existing), now)

    // The platform and media rules, when what will be sent, or to whom, changes (or the post is a draft):
    // an edit of a campaign or time zone alone never fails on media deleted since the post was published.
    if (current.isDraft || changed.some((f) => f === "account_ids" || sendFields.includes(f))) {
      // Platforms of the targets: accounts just resolved, or those of the current targets.
      const platforms = accounts !== undefined
        ? accounts.map((a) => a.platform)
        : yield* platformsOf(caller, current.accountIds, existing.destinations)
      yield* PlatformRules.check({
        platforms,
        content,
        platformContent,
        threadPosts,
        hasMedia: mediaIds.length > 0,
        mode: current.isDraft ? "draft" : "publish"
      })
      yield* checkMedia(caller, { mediaIds, threadPosts }, platforms, platformContent, current.isDraft ? "draft" : "publish")
    }

    const transactor = yield* Transactor
    const posts = yield* PostStore
    const eventStore = yield* EventStore
    const record = yield* transactor.withTransaction(Effect.gen(function*() {
      const locked = yield* lockAndLoad(caller, current.id)
      yield* ensureEditable(locked, changed, removedAccounts(locked), now)
      if (Option.isSome(campaignId) && Option.getOrNull(campaignId) !== Option.getOrNull(locked.post.campaignId)) {
        yield* requireCampaign(current.organizationId, campaignId.value)
      }
      const post = new Post({
        ...locked.post,
        content,
        accountIds,
        platformContent,
        mediaIds,
        scheduledFor,
        timezone,
        campaignId,
        threadPosts,
        approval: changed.length > 0 ? resubmitted(locked.post.approval) : locked.post.approval,
        updatedAt: now
      })
      let destinations = locked.destinations
      if (!post.isDraft) {
        // Only queued destinations move, and only with a new scheduled_for; failed, publishing and
        // published ones keep their row as it is (a published one is never sent again by an edit).
        const scheduledAt = Option.getOrElse(scheduledFor, () => now)
        const dueAt = DateTime.greaterThan(scheduledAt, now) ? scheduledAt : now
        const reschedule = changed.includes("scheduled_for")
        const keep = destinations.filter((d) => accountIds.includes(d.accountId))
        const removed = destinations.filter((d) => !accountIds.includes(d.accountId))
        const moved = reschedule
          ? keep.filter((d) => d.status === "queued").map((d) => new Destination({ ...d, dueAt, updatedAt: now }))
          : []
        const addedAccounts = (accounts ?? []).filter((a) => !keep.some((d) => d.accountId === a.id))
        const added = yield* newDestinations(post, addedAccounts, dueAt, now)
        yield* posts.deleteDestinations(removed.map((d) => d.id))
        yield* posts.updateDestinations(moved)
        yield* posts.insertDestinations(added)
        const byId = new Map(moved.map((d) => [d.id as string, d]))
        destinations = [...keep.map((d) => byId.get(d.id) ?? d), ...added]
      }
      yield* posts.update(post)
      const next: PostRecord = { post, destinations }
      const events = [yield* makeEvent(post.organizationId, "post.updated", eventData(next, { changed }))]
      const wasReview = Option.isSome(locked.post.approval) && locked.post.approval.value.status !== "pending"
      if (wasReview && Option.isSome(post.approval) && post.approval.value.status === "pending") {
        events.push(
          yield* makeEvent(post.organizationId, "post.approval_requested", {
            post_id: post.id,
            account_ids: post.accountIds,
            requested_by: requestedBy(caller),
            resubmitted: true
          })
        )
      }
      yield* eventStore.append(events)
      return yield* Effect.map((yield* PostStore).findById(post.organizationId, post.id), Option.getOrElse(() => next))
    }))
    return { record, scheduledAtSent: body.scheduled_at !== undefined && body.scheduled_at !== null, changed }
  }).pipe(Spans.withSpan("Posts.update"))

/** The platforms of a post's targets: its destinations', else its accounts' (a draft). */
const platformsOf = (
  caller: Caller,
  accountIds: ReadonlyArray<AccountId>,
  destinations: ReadonlyArray<Destination>
): Effect.Effect<ReadonlyArray<Platform>, PersistenceError, AccountStore> =>
  destinations.length > 0
    ? Effect.succeed(destinations.map((d) => d.platform))
    : accountIds.length === 0
    ? Effect.succeed([])
    : Effect.map(
      Effect.flatMap(AccountStore, (store) => store.list(caller.key.organizationId)),
      (all) => all.filter((a) => accountIds.includes(a.id)).map((a) => a.platform)
    )

// ---------------------------------------------------------------------------------------------------
// delete
// ---------------------------------------------------------------------------------------------------

/**
 * DELETE /posts/{id}: removes the post and its destinations (published copies stay on the
 * platforms). Refused with 400 `invalid_post_status` while a destination is publishing.
 */
export const remove = (
  caller: Caller,
  rawId: string
): Effect.Effect<PostRecord, DomainError | PersistenceError, PostStore | EventStore | Transactor | IdGenerator | UsageCounters> =>
  Effect.gen(function*() {
    const existing = yield* get(caller, rawId)
    const transactor = yield* Transactor
    return yield* transactor.withTransaction(Effect.gen(function*() {
      const locked = yield* lockAndLoad(caller, existing.post.id)
      if (locked.destinations.some((d) => d.status === "publishing")) {
        return yield* notEditable(
          "A destination of this post is publishing right now; delete the post once it has settled",
          "publishing"
        )
      }
      yield* (yield* PostStore).delete(locked.post.organizationId, locked.post.id)
      const event = yield* makeEvent(locked.post.organizationId, "post.deleted", eventData(locked))
      yield* (yield* EventStore).append([event])
      return locked
    }))
  }).pipe(Spans.withSpan("Posts.remove"))

// ---------------------------------------------------------------------------------------------------
// schedule (a draft)
// ---------------------------------------------------------------------------------------------------

export type ScheduleRequirements = PostStore | AccountStore | EventStore | Transactor | IdGenerator | UsageCounters

/**
 * POST /posts/{id}/schedule: a draft gets its destinations, due at `scheduled_for` (at least 1 minute
 * ahead; the draft's own `scheduled_for` when none is sent) or now with `publish_now`. Not a draft:
 * 409 `invalid_post_status`. A draft that requested approval must be approved, and scheduling
 * consumes the approval.
 */
export const schedule = (
  caller: Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<PostRecord, DomainError | PersistenceError, ScheduleRequirements> =>
  Effect.gen(function*() {
    const existing = yield* get(caller, rawId)
    const body = yield* decodeBody(ScheduleBody, raw === undefined || raw === null ? {} : yield* objectBody(raw))
    const now = yield* DateTime.now
    const notDraft = (record: PostRecord) =>
      DomainError.fail(
        "invalid_post_status",
        `Only drafts can be scheduled; this post is ${statusOf(record)}. Reschedule it with PATCH /posts/{id}`,
        { status: statusOf(record) },
        409
      )
    if (!existing.post.isDraft) return yield* notDraft(existing)

    const scheduled = yield* scheduledValue(body)
    const publishNow = body.publish_now === true
    const useQueue = body.use_queue === true
    const sent = scheduled.raw !== undefined && scheduled.raw !== null
    if (publishNow && sent) {
      return yield* Effect.fail(invalid("publish_now", "Send either scheduled_for or publish_now: true, not both"))
    }
    if (useQueue && (publishNow || sent)) {
      return yield* Effect.fail(
        invalid("use_queue", "use_queue is exclusive with scheduled_for and publish_now: the queue chooses the time")
      )
    }
    let dueAt = now
    let scheduledFor = Option.none<DateTime.Utc>()
    if (!publishNow && !useQueue) {
      const field = sent ? scheduled.field : "scheduled_for"
      const at = sent ? yield* parseScheduled(scheduled.raw as string, field) : Option.getOrUndefined(existing.post.scheduledFor)
      if (at === undefined) {
        return yield* Effect.fail(invalid("scheduled_for", "Send scheduled_for (at least 1 minute ahead) or publish_now: true"))
      }
      yield* mustBeAfter(
        at,
        DateTime.add(now, { seconds: scheduleLeadSeconds - 1 / 1000 }),
        field,
        "at least 1 minute in the future"
      )
      dueAt = at
      scheduledFor = Option.some(at)
    }
    const timezone = body.timezone === undefined ? existing.post.timezone : yield* checkTimezone(body.timezone)
    const ids = yield* requireAccounts(
      body.account_ids === undefined || body.account_ids === null ? existing.post.accountIds : body.account_ids
    )
    const accounts = yield* resolveAccounts(caller, ids)
    const platforms = accounts.map((a) => a.platform)
    const post0 = existing.post
    yield* PlatformRules.check({
      platforms,
      content: post0.content,
      platformContent: post0.platformContent,
      threadPosts: post0.threadPosts,
      hasMedia: post0.mediaIds.length > 0,
      mode: "publish"
    })
    yield* checkMedia(caller, post0, platforms, post0.platformContent, "publish")
    const mode: PostingLimits.PublishMode = publishNow ? "immediate" : "scheduled"
    const allocator = useQueue ? yield* Effect.serviceOption(QueueAllocator) : Option.none()

    const transactor = yield* Transactor
    const record = yield* transactor.withTransaction(Effect.gen(function*() {
      const locked = yield* lockAndLoad(caller, existing.post.id)
      if (!locked.post.isDraft) return yield* notDraft(locked)
      // The queue's opening is claimed in this transaction, as a use_queue create claims it.
      if (useQueue) {
        const allocation: QueueAllocation = Option.isNone(allocator)
          ? { _tag: "Missing" }
          : yield* allocator.value.allocate(locked.post.organizationId, now, locked.post.id)
        if (allocation._tag !== "Slot") {
          return yield* DomainError.fail("validation_error", queueMessages[allocation._tag], {
            validation_errors: [{ path: "use_queue", message: queueMessages[allocation._tag] }],
            queue: allocation._tag.toLowerCase()
          })
        }
        dueAt = allocation.at
        scheduledFor = Option.some(allocation.at)
      }
      const approval = locked.post.approval
      const spent = ApprovalLifecycle.consumeForPublish(approval)
      if (Either.isLeft(spent) && Option.isSome(approval)) {
        return yield* DomainError.fail(
          "invalid_post_status",
          `This draft needs an approval before it can be scheduled: ${spent.left.message}`,
          { status: "draft", approval_status: approval.value.status, approval_consumed: approval.value.consumed },
          409
        )
      }
      yield* PostingLimits.consume(PostingLimits.subjectOf(caller.key), mode)
      const post = new Post({
        ...locked.post,
        isDraft: false,
        accountIds: accounts.map((a) => a.id),
        scheduledFor,
        timezone,
        useQueue: locked.post.useQueue || useQueue,
        approval: Either.getOrElse(spent, () => approval),
        updatedAt: now
      })
      const destinations = yield* newDestinations(post, accounts, dueAt, now)
      const posts = yield* PostStore
      yield* posts.update(post)
      yield* posts.insertDestinations(destinations)
      const next: PostRecord = { post, destinations }
      yield* (yield* EventStore).append([
        yield* makeEvent(post.organizationId, "post.scheduled", eventData(next, { publish_mode: mode }))
      ])
      return next
    }))
    if (publishNow) yield* Dispatcher.poke
    return record
  }).pipe(Spans.withSpan("Posts.schedule"))
