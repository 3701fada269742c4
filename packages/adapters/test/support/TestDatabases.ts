/**
 * Databases for tests: a SQLite file in a fresh temporary directory, and a fresh Postgres database
 * (created per layer build, dropped afterwards) on HERALD_TEST_PG_URL. Where no Postgres answers,
 * `postgres` carries the reason, which suites print when they skip.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { MigrationError } from "@effect/sql/Migrator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"

export const pgUrl = process.env.HERALD_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export type TestDatabaseLayer = Layer.Layer<SqlClient.SqlClient, SqlError | MigrationError>

/** A migrated SQLite database in its own temporary directory, removed when the layer is released. */
export const sqlite: TestDatabaseLayer = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-test-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((dir) => SqlDatabase.layer({ _tag: "Sqlite", filename: path.join(dir, "herald.db") })))
)

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Creates a database with a unique name on the server of `url`; returns its URL and a drop effect. */
export const createFreshPgDatabase = (url: string = pgUrl) =>
  Effect.gen(function*() {
    const name = `herald_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const admin = SqlDatabase.layerPg({ url, maxConnections: 1 })
    yield* Effect.scoped(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)).pipe(Effect.provide(admin))
    )
    const drop = Effect.scoped(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).pipe(
        Effect.provide(admin)
      )
    ).pipe(Effect.ignore)
    return { name, url: withDatabase(url, name), drop }
  })

/** A migrated fresh Postgres database, dropped when the layer is released. */
export const postgresLayer: TestDatabaseLayer = Layer.unwrapScoped(
  Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
    Effect.map((db) => SqlDatabase.layer({ _tag: "Postgres", url: db.url, maxConnections: 5 }))
  )
)

/** Whether a Postgres answers at HERALD_TEST_PG_URL within 3 s; the reason when not. */
export const probePostgres: Promise<
  { readonly available: true } | { readonly available: false; readonly reason: string }
> = Effect.runPromise(
  Effect.scoped(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 AS ok`).pipe(
      Effect.provide(SqlDatabase.layerPg({ url: pgUrl, maxConnections: 1 }))
    )
  ).pipe(
    Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => new Error("no answer within 3 s") }),
    Effect.as({ available: true as const }),
    Effect.catchAllCause((cause) =>
      Effect.succeed({
        available: false as const,
        reason: `no Postgres at ${new URL(pgUrl).host} (HERALD_TEST_PG_URL): ${String(cause).split("\n")[0]}`
      })
    )
  )
)

export interface DatabaseUnderTest {
  readonly label: "sqlite" | "postgres"
  /** Undefined when the database is unavailable; then `skipReason` says why. */
  readonly layer: TestDatabaseLayer | undefined
  readonly skipReason?: string
}

/** Every database a contract suite must run against. Postgres is skipped, with its reason, where absent. */
export const databasesUnderTest = async (): Promise<ReadonlyArray<DatabaseUnderTest>> => {
  const pg = await probePostgres
  if (!pg.available) {
    console.warn(`[skip] Postgres half of the contract suite skipped: ${pg.reason}`)
  }
  return [
    { label: "sqlite", layer: sqlite },
    pg.available
      ? { label: "postgres", layer: postgresLayer }
      : { label: "postgres", layer: undefined, skipReason: pg.reason }
  ]
}
