import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Migrations from "../../src/sql/Migrations.js"
import { databasesUnderTest } from "../support/TestDatabases.js"

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
  })
}
