/**
 * The campaigns use cases: list (paginated, optional status filter), create, get, update (PATCH) and
 * delete, which clears `campaign_id` on the campaign's posts in the same transaction. Bodies arrive as
 * parsed JSON and are decoded here, with every problem reported in `details.validation_errors`.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Campaign, CampaignStatus } from "./Campaign.js"
import { type CampaignPage, type CampaignRecord, CampaignStore } from "./CampaignStore.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { CampaignId } from "../kernel/Ids.js"
import type { Caller } from "../access/Caller.js"
import { decodeBody } from "../kernel/RequestBodies.js"
import { Transactor } from "../kernel/Transactor.js"
import * as QueryParams from "../kernel/QueryParams.js"
import { firstParam, pageParams, type RawParams } from "../kernel/QueryParams.js"

export const maxNameLength = 100
export const maxDescriptionLength = 500
export const defaultPageSize = QueryParams.defaultPageSize
export const maxPageSize = QueryParams.maxPageSize

const length = (s: string) => [...s].length

const Name = Schema.String.pipe(
  Schema.filter((s) =>
    (length(s.trim()) >= 1 && length(s.trim()) <= maxNameLength) ||
    `name must be 1 to ${maxNameLength} characters (not blank)`
  )
)
const Description = Schema.String.pipe(
  Schema.filter((s) =>
    length(s) <= maxDescriptionLength || `description must be at most ${maxDescriptionLength} characters`
  )
)
const Color = Schema.String.pipe(
  Schema.filter((s) => /^#[0-9a-fA-F]{6}$/.test(s) || "color must be a hex color #rrggbb, e.g. #1da1f2")
)

/** The body of POST /campaigns. */
export const CreateBody = Schema.Struct({
  name: Name,
  description: Schema.optional(Schema.NullOr(Description)),
  color: Schema.optional(Schema.NullOr(Color)),
  status: Schema.optional(Schema.NullOr(CampaignStatus))
}).annotations({ identifier: "CreateCampaignRequest" })
export type CreateBody = typeof CreateBody.Type

/** The body of PATCH /campaigns/{id}: each field optional; `null` clears `description` and `color`. */
export const UpdateBody = Schema.Struct({
  name: Schema.optional(Name),
  description: Schema.optional(Schema.NullOr(Description)),
  color: Schema.optional(Schema.NullOr(Color)),
  status: Schema.optional(CampaignStatus)
}).annotations({ identifier: "UpdateCampaignRequest" })
export type UpdateBody = typeof UpdateBody.Type

const objectBody = (raw: unknown): Effect.Effect<Record<string, unknown>, DomainError> =>
  typeof raw === "object" && raw !== null && !Array.isArray(raw)
    ? Effect.succeed(raw as Record<string, unknown>)
    : DomainError.fail("validation_error", "The body must be a JSON object", {
      validation_errors: [{ path: "", message: "The body must be a JSON object" }]
    })

const normalColor = (color: string | null | undefined): Option.Option<string> =>
  color === undefined || color === null ? Option.none() : Option.some(color.toLowerCase())

/** A path id: digits only (else 400 `invalid_id`); a number no campaign can have is 404. */
export const parseId = (raw: string): Effect.Effect<CampaignId, DomainError> => {
  if (!/^[0-9]+$/.test(raw)) return DomainError.fail("invalid_id", "Campaign id must be an integer", { id: raw })
  return Option.match(Schema.decodeUnknownOption(CampaignId)(Number(raw)), {
    onNone: () => DomainError.notFound("Campaign"),
    onSome: Effect.succeed
  })
}

/** The campaign, when it is in the caller's organization; else 404. */
export const get = (
  caller: Caller,
  rawId: string
): Effect.Effect<CampaignRecord, DomainError | PersistenceError, CampaignStore> =>
  Effect.gen(function*() {
    const id = yield* parseId(rawId)
    const found = yield* (yield* CampaignStore).findById(caller.key.organizationId, id)
    if (Option.isNone(found)) return yield* DomainError.notFound("Campaign")
    return found.value
  }).pipe(Effect.withSpan("Campaigns.get"))

export interface Listed {
  readonly page: CampaignPage
  readonly limit: number
  readonly offset: number
  readonly hasMore: boolean
}

/**
 * GET /campaigns, newest first. Read leniently like GET /posts: `limit` is clamped into 1..100 (junk
 * gives 20), a bad `offset` gives 0, and a `status` other than active or archived does not filter.
 */
export const list = (
  caller: Caller,
  params: RawParams
): Effect.Effect<Listed, PersistenceError, CampaignStore> =>
  Effect.gen(function*() {
    const { limit, offset } = pageParams(params)
    const status = firstParam(params, "status")?.toLowerCase()
    const page = yield* (yield* CampaignStore).list({
      organizationId: caller.key.organizationId,
      ...(Schema.is(CampaignStatus)(status) ? { status } : {}),
      limit,
      offset
    })
    return { page, limit, offset, hasMore: offset + page.items.length < page.total }
  }).pipe(Effect.withSpan("Campaigns.list"))

/** POST /campaigns: a new campaign, `active` unless told otherwise, with no posts. */
export const create = (
  caller: Caller,
  raw: unknown
): Effect.Effect<CampaignRecord, DomainError | PersistenceError, CampaignStore> =>
  Effect.gen(function*() {
    const body = yield* decodeBody(CreateBody, yield* objectBody(raw))
    const now = yield* DateTime.now
    const campaign = yield* (yield* CampaignStore).insert({
      organizationId: caller.key.organizationId,
      name: body.name.trim(),
      description: Option.fromNullable(body.description),
      color: normalColor(body.color),
      status: body.status ?? "active",
      createdAt: now,
      updatedAt: now
    })
    return { campaign, postCount: 0 }
  }).pipe(Effect.withSpan("Campaigns.create"))

/** PATCH /campaigns/{id}: the fields sent; `updated_at` moves only when something changed. */
export const update = (
  caller: Caller,
  rawId: string,
  raw: unknown
): Effect.Effect<CampaignRecord, DomainError | PersistenceError, CampaignStore | Transactor> =>
  Effect.gen(function*() {
    const id = yield* parseId(rawId)
    const body = yield* decodeBody(UpdateBody, yield* objectBody(raw))
    const store = yield* CampaignStore
    return yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
      const found = yield* store.findById(caller.key.organizationId, id)
      if (Option.isNone(found)) return yield* DomainError.notFound("Campaign")
      const current = found.value.campaign
      const next = {
        name: body.name === undefined ? current.name : body.name.trim(),
        description: body.description === undefined ? current.description : Option.fromNullable(body.description),
        color: body.color === undefined ? current.color : normalColor(body.color),
        status: body.status ?? current.status
      }
      const changed = next.name !== current.name ||
        Option.getOrNull(next.description) !== Option.getOrNull(current.description) ||
        Option.getOrNull(next.color) !== Option.getOrNull(current.color) ||
        next.status !== current.status
      if (!changed) return found.value
      const campaign = new Campaign({ ...current, ...next, updatedAt: yield* DateTime.now })
      yield* store.update(campaign)
      return { campaign, postCount: found.value.postCount }
    }))
  }).pipe(Effect.withSpan("Campaigns.update"))

export interface Removed {
  readonly id: CampaignId
  /** How many posts lost their `campaign_id`. */
  readonly postsUnlinked: number
}

/** DELETE /campaigns/{id}: the campaign goes, and its posts keep going without a campaign. */
export const remove = (
  caller: Caller,
  rawId: string
): Effect.Effect<Removed, DomainError | PersistenceError, CampaignStore | Transactor> =>
  Effect.gen(function*() {
    const id = yield* parseId(rawId)
    const store = yield* CampaignStore
    const now = yield* DateTime.now
    const removed = yield* (yield* Transactor).withTransaction(store.delete(caller.key.organizationId, id, now))
    if (Option.isNone(removed)) return yield* DomainError.notFound("Campaign")
    return { id, postsUnlinked: removed.value }
  }).pipe(Effect.withSpan("Campaigns.remove"))
