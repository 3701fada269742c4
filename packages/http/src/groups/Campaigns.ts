/**
 * The campaigns endpoints: `GET/POST /campaigns` and `GET/PATCH/DELETE /campaigns/{id}` (integer ids:
 * non-numeric ones are 400 `invalid_id`). The rules live in `@herald/core/Campaigns`; this module
 * reads bodies and shapes campaigns for the wire.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import { CampaignStatus } from "@herald/core/campaigns/Campaign"
import * as Campaigns from "@herald/core/campaigns/Campaigns"
import type { CampaignRecord } from "@herald/core/campaigns/CampaignStore"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Idempotency from "../Idempotency.js"
import * as RequestMiddleware from "../RequestMiddleware.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

const Instant = Schema.String.annotations({ description: "ISO 8601, UTC" })

export const CampaignView = Schema.Struct({
  id: Schema.Int.annotations({ description: "Integer id" }),
  name: Schema.String.annotations({ description: "1 to 100 characters" }),
  description: Schema.NullOr(Schema.String).annotations({ description: "At most 500 characters" }),
  color: Schema.NullOr(Schema.String).annotations({ description: "#rrggbb, lowercase" }),
  status: CampaignStatus,
  post_count: Schema.Int.annotations({ description: "Posts of the organization that name this campaign" }),
  created_at: Instant,
  updated_at: Instant
}).annotations({ identifier: "Campaign" })
export type CampaignView = typeof CampaignView.Type

export const CampaignList = Schema.Struct({
  campaigns: Schema.Array(CampaignView),
  pagination: Schema.Struct({
    limit: Schema.Int,
    offset: Schema.Int,
    total: Schema.Int,
    has_more: Schema.Boolean
  })
}).annotations({ identifier: "CampaignList" })

export const DeletedCampaign = Schema.Struct({
  id: Schema.Int,
  deleted: Schema.Literal(true),
  posts_unlinked: Schema.Int.annotations({ description: "Posts whose campaign_id became null" })
}).annotations({ identifier: "CampaignDeleted" })

export const toCampaignView = (record: CampaignRecord): CampaignView => {
  const c = record.campaign
  return {
    id: c.id,
    name: c.name,
    description: Option.getOrNull(c.description),
    color: Option.getOrNull(c.color),
    status: c.status,
    post_count: record.postCount,
    created_at: DateTime.formatIso(c.createdAt),
    updated_at: DateTime.formatIso(c.updatedAt)
  }
}

const IdPath = Schema.Struct({
  id: Schema.String.annotations({ description: "The campaign's integer id; non-numeric values give 400 invalid_id" })
})

const QueryValue = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))

/** Documented only: values are read leniently by `Campaigns.list` (invalid ones are ignored). */
export const ListParams = Schema.Struct({
  status: QueryValue.annotations({ description: "active or archived; absent (or another value) lists both" }),
  limit: QueryValue.annotations({ description: "1 to 100, default 20; larger values are clamped to 100" }),
  offset: QueryValue.annotations({ description: "0 or more, default 0" })
})

// ---------------------------------------------------------------------------------------------------
// Group
// ---------------------------------------------------------------------------------------------------

export const CampaignsGroup = HttpApiGroup.make("campaigns")
  .add(
    HttpApiEndpoint.get("list", "/campaigns")
      .setUrlParams(ListParams)
      .addSuccess(Envelope.ok(CampaignList))
      .annotate(OpenApi.Summary, "The organization's campaigns, newest first, paginated (scope read)")
  )
  .add(
    HttpApiEndpoint.post("create", "/campaigns")
      .setPayload(Campaigns.CreateBody)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(CampaignView), { status: 201 })
      .annotate(OpenApi.Summary, "Create a campaign; status defaults to active (scope write)")
  )
  .add(
    HttpApiEndpoint.get("get", "/campaigns/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(CampaignView))
      .annotate(OpenApi.Summary, "One campaign with its post count (scope read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/campaigns/:id")
      .setPath(IdPath)
      .setPayload(Campaigns.UpdateBody)
      .addSuccess(Envelope.ok(CampaignView))
      .annotate(
        OpenApi.Summary,
        "Change name, description, color or status (scope write); null clears description and color"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/campaigns/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(DeletedCampaign))
      .annotate(OpenApi.Summary, "Delete a campaign; its posts stay, with campaign_id null (scope write)")
  )
  .addError(ApiGroup.errors.notFound)
  .pipe(ApiGroup.authenticated)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

/** The parsed JSON body; undefined when there is none. Malformed JSON is 400 `invalid_json`. */
const jsonBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(
    Effect.mapError(() => DomainError.of("invalid_json", "The request body could not be read"))
  )
  if (text.trim() === "") return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return yield* DomainError.fail("invalid_json", "The request body is not valid JSON")
  }
})

const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

const callerOf = (scope: "read" | "write") => Effect.map(Auth.requireScope(scope), ({ key }) => ({ key }))

const logCampaign = (id: number) => RequestMiddleware.annotateRequestLog("campaign_id", String(id))

export const CampaignsLive = HttpApiBuilder.group(ApiGroup.apiOf(CampaignsGroup), "campaigns", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("read")
        const listed = yield* Campaigns.list(caller, urlParams).pipe(dieOnStorage)
        return {
          campaigns: listed.page.items.map(toCampaignView),
          pagination: { limit: listed.limit, offset: listed.offset, total: listed.page.total, has_more: listed.hasMore }
        }
      }))
    .handleRaw("create", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const caller = yield* callerOf("write")
        const body = yield* jsonBody
        const created = yield* Campaigns.create(caller, body ?? {}).pipe(dieOnStorage)
        yield* logCampaign(created.campaign.id)
        return yield* Idempotency.respond(CampaignView, 201)(toCampaignView(created))
      })))
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("read")
        const record = yield* Campaigns.get(caller, path.id).pipe(dieOnStorage)
        return toCampaignView(record)
      }))
    .handleRaw("update", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("write")
        const body = yield* jsonBody
        const updated = yield* Campaigns.update(caller, path.id, body ?? {}).pipe(dieOnStorage)
        yield* logCampaign(updated.campaign.id)
        return toCampaignView(updated)
      }))
    .handle("delete", ({ path }) =>
      Effect.gen(function*() {
        const caller = yield* callerOf("write")
        const removed = yield* Campaigns.remove(caller, path.id).pipe(dieOnStorage)
        yield* logCampaign(removed.id)
        return { id: removed.id, deleted: true as const, posts_unlinked: removed.postsUnlinked }
      })))
