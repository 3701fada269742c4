/**
 * `MediaStore` over SQL (SQLite and Postgres), with the column conventions of `internal/Rows.ts`.
 * `update` is fenced by the stored status, so two finalizers of one upload cannot both win.
 * `deleteAbandoned` reads the `media_pending` partial index (migration 0005).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import { Media, MediaKind, MediaStatus } from "@herald/core/domain/Media"
import { MediaStore } from "@herald/core/media/MediaStore"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
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
    altText: column("alt_text", Schema.OptionFromNullOr(Schema.String)),
    createdAt: column("created_at", Instant),
    updatedAt: column("updated_at", Instant)
  }),
  Schema.instanceOf(Media),
  { strict: true, decode: (fields) => new Media(fields), encode: (m) => m }
)

/**
 * A post can name a medium only once the medium exists, so only posts written since the medium's
 * creation are searched for its id; this margin allows for clocks of several processes disagreeing.
 */
export const referenceClockMargin = 60 * 60 * 1000

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const skipLocked = sql.onDialectOrElse({
    pg: () => sql.literal("FOR UPDATE OF m SKIP LOCKED"),
    orElse: () => sql.literal("")
  })
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
        const counted =
          yield* sql`SELECT COUNT(*) AS count FROM media WHERE organization_id = ${organizationId} ${kind}`
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
      ),
    // One statement: the candidates are picked (Postgres: locked, skipping rows a finalizer or another
    // sweeper holds) and deleted, and the outer status test is re-checked against a row a finalizer
    // changed meanwhile. The pick is a materialized CTE: as an `IN (subquery)` Postgres may run the
    // subquery again for each row (a semi join) and, skipping what it just deleted, go past the limit.
    // Posts keep media ids in JSON text (`media_ids`, `thread_posts`); a UUID found anywhere in a
    // post's text keeps the medium (erring on the side of keeping).
    deleteAbandoned: ({ createdBefore, limit }) =>
      limit <= 0 ? Effect.succeed([]) : sql`WITH picked AS MATERIALIZED (
          SELECT m.id FROM media m
          WHERE m.status = 'pending_upload' AND m.created_at < ${DateTime.toEpochMillis(createdBefore)}
            AND NOT EXISTS (SELECT 1 FROM posts p
              WHERE p.organization_id = m.organization_id
                AND p.updated_at >= m.created_at - ${referenceClockMargin}
                AND (p.media_ids LIKE '%' || m.id || '%' OR p.thread_posts LIKE '%' || m.id || '%'))
          ORDER BY m.created_at, m.id
          LIMIT ${limit}
          ${skipLocked}
        )
        DELETE FROM media WHERE id IN (SELECT id FROM picked) AND status = 'pending_upload'
        RETURNING *`.pipe(
        Effect.flatMap(decode),
        orPersistence("MediaStore.deleteAbandoned")
      )
  })
})

export const layer: Layer.Layer<MediaStore, never, SqlClient.SqlClient> = Layer.effect(MediaStore, make)
