/**
 * The main SQLite connection's settings: statement journals (and other temporary files) are kept in
 * memory, so a statement that fires triggers inside a transaction (a dispatcher's claim or recording)
 * does not write every page it changes to a temporary file first.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"

describe("SQLite connection settings", () => {
  it.effect("keeps temporary files, statement journals included, in memory", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql.unsafe<{ temp_store: number }>("PRAGMA temp_store")
      // 2 is MEMORY (0 the compile-time default, which is a file).
      expect(rows.map((r) => Number(r.temp_store))).toEqual([2])
    }).pipe(
      Effect.provide(SqlDatabase.layerSqlite({
        filename: path.join(fs.mkdtempSync(path.join(os.tmpdir(), "herald-pragmas-")), "herald.db")
      }))
    ))
})
