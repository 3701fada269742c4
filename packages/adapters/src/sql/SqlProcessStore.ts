import * as SqlClient from "@effect/sql/SqlClient"
import { ProcessInfo, ProcessKind, ProcessStore } from "@herald/core/kernel/Processes"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const ProcessRow = Schema.Struct({
  id: Schema.String,
  kind: ProcessKind,
  hostname: Schema.String,
  pid: DbNumber,
  started_at: Instant,
  last_heartbeat_at: Instant
})

const decodeRows = Schema.decodeUnknown(Schema.Array(ProcessRow))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()

  return ProcessStore.of({
    register: (p) =>
      sql`INSERT INTO processes (id, kind, hostname, pid, started_at, last_heartbeat_at)
        VALUES (${p.id}, ${p.kind}, ${p.hostname}, ${p.pid}, ${DateTime.toEpochMillis(p.startedAt)},
          ${DateTime.toEpochMillis(p.lastHeartbeatAt)})
        ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = excluded.last_heartbeat_at`.pipe(
        Effect.asVoid,
        orPersistence("ProcessStore.register")
      ),

    heartbeat: (id, at) =>
      sql`UPDATE processes SET last_heartbeat_at = ${DateTime.toEpochMillis(at)} WHERE id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("ProcessStore.heartbeat")
      ),

    databaseTime: sql.onDialectOrElse({
      pg: () =>
        sql<{ now: string | number }>`SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT) AS now`
          .pipe(
            Effect.map((rows) => Option.some(DateTime.unsafeMake(Number(rows[0]!.now)))),
            orPersistence("ProcessStore.databaseTime")
          ),
      orElse: () => Effect.succeed(Option.none<DateTime.Utc>())
    }),

    deregister: (id) =>
      sql`DELETE FROM processes WHERE id = ${id}`.pipe(Effect.asVoid, orPersistence("ProcessStore.deregister")),

    list: sql`SELECT * FROM processes ORDER BY started_at, id`.pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) =>
        rows.map((r) =>
          new ProcessInfo({
            id: r.id,
            kind: r.kind,
            hostname: r.hostname,
            pid: r.pid,
            startedAt: r.started_at,
            lastHeartbeatAt: r.last_heartbeat_at
          })
        )
      ),
      orPersistence("ProcessStore.list")
    ),

    removeDead: (staleBefore) =>
      sql<{ id: string }>`DELETE FROM processes
        WHERE last_heartbeat_at < ${DateTime.toEpochMillis(staleBefore)}
          AND NOT EXISTS (SELECT 1 FROM destinations WHERE status = 'publishing' AND leased_by = processes.id)
        RETURNING id`.pipe(
        Effect.map((rows) => rows.map((r) => r.id)),
        orPersistence("ProcessStore.removeDead")
      )
  })
})

export const layer: Layer.Layer<ProcessStore, never, SqlClient.SqlClient> = Layer.effect(ProcessStore, make)
