/**
 * The posting queue over SQL (SQLite and Postgres). A claim is an insert into `queue_slots`, whose
 * primary key (organization, instant) admits one row per opening: on Postgres a concurrent insert of
 * the same opening waits for the other transaction and then conflicts (`ON CONFLICT DO NOTHING`
 * returns no row), on SQLite writers are serialized. Before inserting, a stale row of that opening
 * (its post deleted or rescheduled elsewhere) is removed; a row of a transaction not yet committed
 * is invisible to that delete, so a live claim is never removed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { OrganizationId, QueueId } from "@herald/core/kernel/Ids"
import { Queue, QueueOpening } from "@herald/core/workflow/Queue"
import { QueueStore } from "@herald/core/workflow/QueueStore"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const QueueRow = Schema.transform(
  Schema.Struct({
    id: QueueId,
    organization_id: OrganizationId,
    timezone: Schema.String,
    openings: Schema.parseJson(Schema.Array(QueueOpening)),
    created_at: Instant
  }),
  Schema.typeSchema(Queue),
  {
    strict: true,
    decode: (row) =>
      new Queue({
        id: row.id,
        organizationId: row.organization_id,
        timezone: row.timezone,
        openings: row.openings,
        createdAt: row.created_at
      }),
    encode: (queue) => ({
      id: queue.id,
      organization_id: queue.organizationId,
      timezone: queue.timezone,
      openings: queue.openings,
      created_at: queue.createdAt
    })
  }
)

const decodeQueues = Schema.decodeUnknown(Schema.Array(QueueRow))
const decodeSlots = Schema.decodeUnknown(Schema.Array(Schema.Struct({ slot_at: DbNumber })))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()

  /** A claim is live while its post exists and is still scheduled at the claimed instant. */
  const live =
    sql`EXISTS (SELECT 1 FROM posts p WHERE p.id = queue_slots.post_id AND p.scheduled_for = queue_slots.slot_at)`

  return QueueStore.of({
    find: (organizationId) =>
      sql`SELECT * FROM queues WHERE organization_id = ${organizationId}`.pipe(
        Effect.flatMap(decodeQueues),
        Effect.map(Arr.head),
        orPersistence("QueueStore.find")
      ),
    save: (queue) =>
      Schema.encode(QueueRow)(queue).pipe(
        Effect.flatMap((row) =>
          sql`INSERT INTO queues ${sql.insert(row)}
            ON CONFLICT (organization_id) DO UPDATE SET timezone = excluded.timezone, openings = excluded.openings`
        ),
        Effect.asVoid,
        orPersistence("QueueStore.save")
      ),
    taken: (organizationId, after, until) =>
      sql`SELECT slot_at FROM queue_slots WHERE organization_id = ${organizationId}
        AND slot_at > ${DateTime.toEpochMillis(after)} AND slot_at <= ${DateTime.toEpochMillis(until)}
        AND ${live} ORDER BY slot_at`.pipe(
        Effect.flatMap(decodeSlots),
        Effect.map((rows) => rows.map((r) => r.slot_at)),
        orPersistence("QueueStore.taken")
      ),
    claim: (organizationId, at, postId) =>
      Effect.gen(function*() {
        const millis = DateTime.toEpochMillis(at)
        yield* sql`DELETE FROM queue_slots WHERE organization_id = ${organizationId} AND slot_at = ${millis}
          AND NOT ${live}`
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        const rows = yield* sql`INSERT INTO queue_slots (organization_id, slot_at, post_id, created_at)
          VALUES (${organizationId}, ${millis}, ${postId}, ${now})
          ON CONFLICT (organization_id, slot_at) DO NOTHING RETURNING slot_at`.pipe(Effect.flatMap(decodeSlots))
        return rows.length > 0
      }).pipe(orPersistence("QueueStore.claim")),
    pruneClaims: (before, limit) =>
      limit <= 0 ? Effect.succeed(0) : sql`DELETE FROM queue_slots WHERE (organization_id, slot_at) IN (
          SELECT organization_id, slot_at FROM queue_slots WHERE slot_at < ${DateTime.toEpochMillis(before)}
          ORDER BY slot_at LIMIT ${Math.trunc(limit)})
        RETURNING slot_at`.pipe(
        Effect.flatMap(decodeSlots),
        Effect.map((rows) => rows.length),
        orPersistence("QueueStore.pruneClaims")
      )
  })
})

export const layer: Layer.Layer<QueueStore, never, SqlClient.SqlClient> = Layer.effect(QueueStore, make)
