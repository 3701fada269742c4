/**
 * The campaign store over @effect/sql (SQLite and Postgres). `post_count` is counted from the posts
 * that name the campaign (index `posts_by_campaign`); deleting a campaign clears those posts'
 * `campaign_id`, in the caller's transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Campaign, CampaignStatus } from "@herald/core/campaigns/Campaign"
import { type CampaignRecord, CampaignStore } from "@herald/core/campaigns/CampaignStore"
import { CampaignId, OrganizationId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const column = <const K extends string, S extends Schema.Schema.Any>(key: K, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

const DbCampaignId = Schema.compose(DbNumber, CampaignId)
const DbCount = Schema.compose(DbNumber, Schema.NonNegativeInt)

const campaignFields = {
  organizationId: column("organization_id", OrganizationId),
  name: Schema.String,
  description: Schema.OptionFromNullOr(Schema.String),
  color: Schema.OptionFromNullOr(Schema.String),
  status: CampaignStatus,
  createdAt: column("created_at", Instant),
  updatedAt: column("updated_at", Instant)
}

/** A campaign before the store has assigned its id. */
const NewCampaignRow = Schema.Struct(campaignFields)

const CampaignRow = Schema.transform(
  Schema.Struct({ id: DbCampaignId, ...campaignFields }),
  Schema.instanceOf(Campaign),
  { strict: true, decode: (fields) => new Campaign(fields, true), encode: (campaign) => campaign }
)

/** A campaign row with its `post_count`. */
const CountedRow = Schema.Struct({ row: CampaignRow, postCount: DbCount })

const decodeCounted = (rows: ReadonlyArray<Record<string, unknown>>) =>
  Effect.forEach(rows, (row): Effect.Effect<CampaignRecord, unknown> =>
    Effect.map(
      Schema.decodeUnknown(CountedRow)({ row, postCount: row["post_count"] }),
      ({ postCount, row: campaign }) => ({ campaign, postCount })
    ))

const InsertedId = Schema.Array(Schema.Struct({ id: DbCampaignId }))
const Count = Schema.Array(Schema.Struct({ count: DbCount }))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()

  const keyShare = sql.onDialectOrElse({ pg: () => sql.literal("FOR KEY SHARE"), orElse: () => sql.literal("") })

  const counted = sql`SELECT c.*, (SELECT COUNT(*) FROM posts p
    WHERE p.organization_id = c.organization_id AND p.campaign_id = c.id) AS post_count
    FROM campaigns c`

  return CampaignStore.of({
    insert: (campaign) =>
      Effect.gen(function*() {
        const row = yield* Schema.encode(NewCampaignRow)(campaign)
        const inserted = yield* sql`INSERT INTO campaigns ${sql.insert(row)} RETURNING id`.pipe(
          Effect.flatMap(Schema.decodeUnknown(InsertedId))
        )
        return new Campaign({ ...campaign, id: inserted[0]!.id })
      }).pipe(orPersistence("CampaignStore.insert")),
    findById: (organizationId, id) =>
      sql`${counted} WHERE c.organization_id = ${organizationId} AND c.id = ${id}`.pipe(
        Effect.flatMap(decodeCounted),
        Effect.map(Arr.head),
        orPersistence("CampaignStore.findById")
      ),
    holdForPost: (organizationId, id) =>
      sql`SELECT id FROM campaigns WHERE organization_id = ${organizationId} AND id = ${id} ${keyShare}`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("CampaignStore.holdForPost")
      ),
    list: (q) =>
      Effect.gen(function*() {
        const filters = [
          sql`c.organization_id = ${q.organizationId}`,
          ...(q.status === undefined ? [] : [sql`c.status = ${q.status}`])
        ]
        const where = sql.and(filters)
        const total = yield* sql`SELECT COUNT(*) AS count FROM campaigns c WHERE ${where}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Count))
        )
        const items = yield* sql`${counted} WHERE ${where} ORDER BY c.created_at DESC, c.id DESC
          LIMIT ${q.limit} OFFSET ${q.offset}`.pipe(Effect.flatMap(decodeCounted))
        return { items, total: total[0]?.count ?? 0 }
      }).pipe(orPersistence("CampaignStore.list")),
    update: (campaign) =>
      Schema.encode(CampaignRow)(campaign).pipe(
        Effect.flatMap((row) =>
          sql`UPDATE campaigns SET ${sql.update(row, ["id", "organization_id", "created_at"])}
            WHERE id = ${campaign.id} AND organization_id = ${campaign.organizationId}`
        ),
        Effect.asVoid,
        orPersistence("CampaignStore.update")
      ),
    delete: (organizationId, id, now) =>
      Effect.gen(function*() {
        // Only a campaign of this organization unlinks posts (ids are global, posts are per organization).
        const deleted = yield* sql`DELETE FROM campaigns WHERE organization_id = ${organizationId} AND id = ${id}
          RETURNING id`
        if (deleted.length === 0) return Option.none()
        const unlinked = yield* sql`UPDATE posts SET campaign_id = NULL, updated_at = ${DateTime.toEpochMillis(now)}
          WHERE organization_id = ${organizationId} AND campaign_id = ${id} RETURNING id`
        return Option.some(unlinked.length)
      }).pipe(orPersistence("CampaignStore.delete"))
  })
})

export const layer: Layer.Layer<CampaignStore, never, SqlClient.SqlClient> = Layer.effect(CampaignStore, make)
