/**
 * The WebhookStore contract (with the event fan-out) on SQLite, and on Postgres where one answers.
 * Each test builds its own database.
 */
import { describe } from "@effect/vitest"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlStores from "../../src/sql/SqlStores.js"
import type { StoresLayer } from "../contract/Fixtures.js"
import { webhookStoreContract } from "../contract/WebhookStore.contract.js"
import { createFreshPgDatabase, databasesUnderTest, type TestDatabaseLayer } from "../support/TestDatabases.js"

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))

const storesOn = (database: TestDatabaseLayer): StoresLayer =>
  SqlStores.layer.pipe(Layer.provide(randomIds), Layer.provideMerge(database))

/** Postgres with a connection per concurrent caller, so concurrency is real. */
const widePostgres: TestDatabaseLayer = Layer.unwrapScoped(
  Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
    Effect.map((db) => SqlDatabase.layer({ _tag: "Postgres", url: db.url, maxConnections: 12 }))
  )
)

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`webhook store on ${db.label}`, () => {
    if (db.layer === undefined) return
    const layer = storesOn(db.layer)
    webhookStoreContract(layer, db.label === "postgres" ? storesOn(widePostgres) : layer)
  })
}
