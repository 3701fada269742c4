/**
 * `MediaStore` over SQL (SQLite and Postgres), with the column conventions of `internal/Rows.ts`.
 * `update` is fenced by the stored status, so two finalizers of one upload cannot both win.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { MediaId, OrganizationId } from "@herald/core/Ids"
import { Media, MediaKind, MediaStatus } from "@herald/core/Media"
import { MediaStore } from "@herald/core/MediaStore"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { CountRow, DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const column = <const K extends string, S extends Schema.Schema.Any>(key: K, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

const DbInt = Schema.compose(DbNumber, Schema.Int)
const DbCount = Schema.compose(DbNumber, Schema.NonNegativeInt)

export const MediaRow = Schema.transform(
  Schema.Struct({
    id: MediaId,
    organizationId: column("organization_id", OrganizationId),
    filename: Schema.String,
    mimeType: column("mime_type", Schema.String),
    size: DbCount,
    kind: MediaKind,
    width: Schema.OptionFromNullOr(DbInt),
    height: Schema.OptionFromNullOr(DbInt),
    durationMs: column("duration_ms", Schema.OptionFromNullOr(DbInt)),
    status: MediaStatus,
    error: Schema.OptionFromNullOr(Schema.String),
    storageKey: column("storage_key", Schema.String),
    sourceUrl: column("source_url", Schema.OptionFromNullOr(Schema.String)),
    createdAt: column("created_at", Instant),
    updatedAt: column("updated_at", Instant)
  }),
  Schema.instanceOf(Media),
  { strict: true, decode: (fields) => new Media(fields), encode: (m) => m }
)

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(MediaRow))
  const encode = Schema.encode(MediaRow)
  const decodeCount = Schema.decodeUnknown(Schema.Array(CountRow))

  return MediaStore.of({
    insert: (media) =>
      encode(media).pipe(
        Effect.flatMap((row) => sql`INSERT INTO media ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("MediaStore.insert")
      ),
    findById: (organizationId, id) =>
      sql`SELECT * FROM media WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("MediaStore.findById")
      ),
    findByIds: (organizationId, ids) =>
      ids.length === 0
        ? Effect.succeed([])
        : sql`SELECT * FROM media WHERE organization_id = ${organizationId} AND id IN ${sql.in(ids)}`.pipe(
          Effect.flatMap(decode),
          orPersistence("MediaStore.findByIds")
        ),
    list: (organizationId, query) =>
      Effect.gen(function*() {
        const kind = query.kind === undefined ? sql.literal("") : sql`AND kind = ${query.kind}`
        const rows = yield* sql`SELECT * FROM media WHERE organization_id = ${organizationId} ${kind}
          ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${query.offset}`
        const counted = yield* sql`SELECT COUNT(*) AS count FROM media WHERE organization_id = ${organizationId} ${kind}`
        const items = yield* decode(rows)
        const [count] = yield* decodeCount(counted)
        return { items, total: count === undefined ? 0 : count.count }
      }).pipe(orPersistence("MediaStore.list")),
    update: (media, expected) =>
      encode(media).pipe(
        Effect.flatMap((row) =>
          sql`UPDATE media SET ${sql.update(row, ["id", "organization_id", "created_at"])}
            WHERE organization_id = ${media.organizationId} AND id = ${media.id} AND status = ${expected}
            RETURNING id`
        ),
        Effect.map((rows) => rows.length > 0),
        orPersistence("MediaStore.update")
      ),
    delete: (organizationId, id) =>
      sql`DELETE FROM media WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("MediaStore.delete")
      )
  })
})

export const layer: Layer.Layer<MediaStore, never, SqlClient.SqlClient> = Layer.effect(MediaStore, make)
