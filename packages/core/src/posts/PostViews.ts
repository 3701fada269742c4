/**
 * Reading posts: get one, its results per destination, and the list with its filters, sorts, offset
 * and keyset cursor.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { AccountId, CampaignId, PostId } from "../kernel/Ids.js"
import { parseFilterPlatform } from "../domain/Platform.js"
import { ApprovalStatus, PostStatus } from "../domain/Post.js"
import {
  type PostCursor,
  type PostPage,
  type PostQuery,
  type PostRecord,
  type PostSort,
  PostStore
} from "./PostStore.js"
import * as QueryParams from "../kernel/QueryParams.js"
import { firstParam, listParam, pageParams, positiveInt, type RawParams } from "../kernel/QueryParams.js"
import * as Spans from "../kernel/Spans.js"
import { Caller, isVisible, visibleIds } from "./PostPorts.js"
import { dedupe, parseInstant } from "./PostFieldRules.js"

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
  const platforms = dedupe(
    listParam(params, "platform").flatMap((p) => {
      const platform = parseFilterPlatform(p)
      return platform === undefined ? [] : [platform]
    })
  )
  const approval = listParam(params, "approval").filter(Schema.is(ApprovalStatus))
  const accountId = Option.getOrUndefined(
    Schema.decodeUnknownOption(AccountId)(positiveInt(firstParam(params, "account_id")))
  )
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
