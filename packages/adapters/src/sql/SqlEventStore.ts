import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as FastRows from "./internal/FastRows.js"
import { EventRow, orPersistence } from "./internal/Rows.js"

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decode = Schema.decodeUnknown(Schema.Array(EventRow))
  // Ties on created_at keep the append order.
  const appendOrder = sql.onDialectOrElse({ pg: () => sql.literal("seq"), orElse: () => sql.literal("rowid") })

  return EventStore.of({
    append: (events) =>
      events.length === 0 ? Effect.void : Effect.try(() => events.map(FastRows.eventRow)).pipe(
        Effect.flatMap((rows) => sql`INSERT INTO events ${sql.insert(rows)}`),
        Effect.asVoid,
        orPersistence("EventStore.append")
      ),
    list: (organizationId, options) => {
      const byPost = options?.postId === undefined ? sql`` : sql`AND post_id = ${options.postId}`
      const limit = options?.limit === undefined ? sql`` : sql`LIMIT ${options.limit}`
      return sql`SELECT * FROM events WHERE organization_id = ${organizationId} ${byPost}
        ORDER BY created_at, ${appendOrder} ${limit}`.pipe(
        Effect.flatMap(decode),
        orPersistence("EventStore.list")
      )
    },
    findById: (id) =>
      sql`SELECT * FROM events WHERE id = ${id}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("EventStore.findById")
      )
  })
})

export const layer: Layer.Layer<EventStore, never, SqlClient.SqlClient> = Layer.effect(EventStore, make)
