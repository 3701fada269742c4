import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Migrations from "../../src/sql/Migrations.js"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import { createFreshPgDatabase, databasesUnderTest, probePostgres } from "../support/TestDatabases.js"

/** The same kind of store, created but never migrated. */
const unmigrated = (label: "sqlite" | "postgres") =>
  label === "sqlite"
    ? Layer.unwrapScoped(
      Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-test-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      ).pipe(Effect.map((dir) => SqlDatabase.layerClient({ _tag: "Sqlite", filename: path.join(dir, "herald.db") })))
    )
    : Layer.unwrapScoped(
      Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
        Effect.map((db) => SqlDatabase.layerClient({ _tag: "Postgres", url: db.url, maxConnections: 2 }))
      )
    )

const allKnown = Effect.map(Migrations.loader, (known) => known.map(([id, name]) => Migrations.label(id, name)))

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`migrations on ${db.label}`, () => {
    it.effect("apply once, record themselves in herald_migrations, and are idempotent", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ migration_id: number | string; name: string }>`
          SELECT migration_id, name FROM herald_migrations ORDER BY migration_id`
        expect(rows.map((r) => r.name)).toContain("foundation")
        const again = yield* Migrations.run
        expect(again).toEqual([])
        const tables = yield* sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM destinations`
        expect(Number(tables[0]!.n)).toBe(0)
      }).pipe(Effect.provide(db.layer!)), 60_000)

    it.effect(
      "events keep only the indexes the server's statements read (by id; by organization and time)",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const names = yield* sql.onDialectOrElse({
            pg: () =>
              sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = 'events' ORDER BY 1`,
            orElse: () =>
              sql<
                { name: string }
              >`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY 1`
          })
          expect(names.map((r) => r.name)).toEqual(
            db.label === "postgres"
              ? ["events_by_organization", "events_pkey"]
              : ["events_by_organization", "sqlite_autoindex_events_1"]
          )
        }).pipe(Effect.provide(db.layer!)),
      60_000
    )

    it.effect(
      "check: nothing on a migrated store; what run would apply, changing nothing; what a newer Herald applied",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          expect(yield* Migrations.check).toEqual({ pending: [], unknown: [] })
          const known = yield* allKnown
          const newest = known.at(-1)!
          const newestId = Number(newest.slice(0, 4))
          // As if this build were one migration newer than the store.
          yield* sql`DELETE FROM herald_migrations WHERE migration_id = ${newestId}`
          expect(yield* Migrations.check).toEqual({ pending: [newest], unknown: [] })
          const still = yield* sql<
            { n: number | string }
          >`SELECT COUNT(*) AS n FROM herald_migrations WHERE migration_id = ${newestId}`
          expect(Number(still[0]!.n)).toBe(0)
          // As if a newer Herald had migrated the store.
          yield* sql`INSERT INTO herald_migrations (migration_id, name) VALUES (${newestId}, ${
            newest.slice(5)
          }), (9999, 'from_a_newer_herald')`
          expect(yield* Migrations.check).toEqual({ pending: [], unknown: ["9999_from_a_newer_herald"] })
        }).pipe(Effect.provide(db.layer!)),
      60_000
    )

    it.effect(
      "check on a store never migrated: every migration pending, and no migrations table made",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          expect(yield* Migrations.check).toEqual({ pending: yield* allKnown, unknown: [] })
          const tables = yield* sql.onDialectOrElse({
            pg: () =>
              sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM pg_tables WHERE tablename = 'herald_migrations'`,
            orElse: () =>
              sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'herald_migrations'`
          })
          expect(Number(tables[0]!.n)).toBe(0)
        }).pipe(Effect.provide(unmigrated(db.label))),
      60_000
    )
  })
}

describe.skipIf(!(await probePostgres).available)("migrations started at once on a fresh Postgres database", () => {
  it.effect(
    "every runner succeeds and each migration is applied once (the migrations table's creation is raced)",
    () =>
      Effect.gen(function*() {
        for (let round = 0; round < 3; round++) {
          const db = yield* createFreshPgDatabase().pipe(Effect.orDie)
          const runners = Array.from({ length: 6 }, () =>
            Migrations.run.pipe(
              Effect.provide(SqlDatabase.layerClient({ _tag: "Postgres", url: db.url, maxConnections: 1 })),
              Effect.either
            ))
          const results = yield* Effect.all(runners, { concurrency: "unbounded" })
          expect(results.filter((r) => r._tag === "Left").map((r) => String(r))).toEqual([])
          const applied = yield* Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<{ name: string }>`SELECT name FROM herald_migrations ORDER BY migration_id`
          ).pipe(
            Effect.provide(SqlDatabase.layerClient({ _tag: "Postgres", url: db.url, maxConnections: 1 }))
          )
          expect(applied.length).toBe((yield* allKnown).length)
          yield* db.drop
        }
      }),
    120_000
  )
})
