/**
 * Prepared statements on Postgres (`PgPrepared`): a statement marked as prepared is parsed once per
 * connection under a name, an unmarked one is not; a marked statement survives another process adding
 * a column to its table; the names per connection are bounded. Skipped where no Postgres answers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as PgPrepared from "../../src/sql/internal/PgPrepared.js"
import { createFreshPgDatabase, probePostgres } from "../support/TestDatabases.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Postgres prepared statements: ${pg.reason}`)

/** One connection, so that `pg_prepared_statements` (per session) sees every statement sent. */
const oneConnection = Layer.unwrapScoped(
  Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
    Effect.map((db) => SqlDatabase.layerPg({ url: db.url, maxConnections: 1 }))
  )
).pipe(Layer.orDie)

const preparedNames = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`
).pipe(
  Effect.map((rows) => rows.map((row) => row.name))
)

const marked = (sql: SqlClient.SqlClient, id: number) =>
  sql<{ id: number; label: string }>`${sql.literal(PgPrepared.marker)} SELECT id, label FROM things WHERE id = ${id}`

describe.skipIf(!pg.available)("prepared statements on Postgres", () => {
  it.effect("a marked statement is prepared once per connection and answers as before; others are not", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE things (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
      yield* sql`INSERT INTO things (id, label) VALUES (1, 'one'), (2, 'two')`
      expect(yield* marked(sql, 1)).toEqual([{ id: 1, label: "one" }])
      expect(yield* marked(sql, 2)).toEqual([{ id: 2, label: "two" }])
      expect(yield* sql`SELECT label FROM things WHERE id = ${2}`).toEqual([{ label: "two" }])
      const names = yield* preparedNames
      expect(names).toHaveLength(1)
      expect(names[0]).toMatch(/^herald_/)
    }).pipe(Effect.provide(oneConnection)))

  it.effect("a marked statement still answers after a column is added to its table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE things (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
      yield* sql`INSERT INTO things (id, label) VALUES (1, 'one')`
      for (let i = 0; i < 6; i++) yield* marked(sql, 1) // past the switch to a generic plan
      yield* sql`ALTER TABLE things ADD COLUMN extra TEXT`
      expect(yield* marked(sql, 1)).toEqual([{ id: 1, label: "one" }])
    }).pipe(Effect.provide(oneConnection)))

  it.effect(`at most ${PgPrepared.maxNamed} names per connection; past them, marked statements go unnamed`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE things (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
      for (let i = 0; i <= PgPrepared.maxNamed; i++) {
        // A different text each time (the alias), as a list of varying length would make.
        expect(yield* sql.unsafe(`${PgPrepared.marker} SELECT id AS a${i} FROM things WHERE id = $1`, [i])).toEqual([])
      }
      expect(yield* preparedNames).toHaveLength(PgPrepared.maxNamed)
    }).pipe(Effect.provide(oneConnection)))
})
