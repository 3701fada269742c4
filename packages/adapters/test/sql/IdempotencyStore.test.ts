/**
 * The IdempotencyStore contract on SQLite, and on Postgres where one answers (each test builds its
 * own database); and answers sealed at rest when a credentials cipher is configured.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { IdempotencyStore } from "@herald/core/access/IdempotencyStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { OrganizationId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as CredentialCipher from "../../src/security/CredentialCipher.js"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlIdempotencyStore from "../../src/sql/SqlIdempotencyStore.js"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { at, type StoresLayer, T0 } from "../contract/Fixtures.js"
import { idempotencyStoreContract } from "../contract/IdempotencyStore.contract.js"
import { createFreshPgDatabase, databasesUnderTest, sqlite, type TestDatabaseLayer } from "../support/TestDatabases.js"

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))

const storesOn = (database: TestDatabaseLayer): StoresLayer =>
  SqlStores.layer.pipe(Layer.provide(randomIds), Layer.provideMerge(database))

/** Postgres with a connection per concurrent taker, so concurrency is real. */
const widePostgres: TestDatabaseLayer = Layer.unwrapScoped(
  Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
    Effect.map((db) => SqlDatabase.layer({ _tag: "Postgres", url: db.url, maxConnections: 10 }))
  )
)

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`idempotency store on ${db.label}`, () => {
    if (db.layer === undefined) return
    const layer = storesOn(db.layer)
    idempotencyStoreContract(layer, db.label === "postgres" ? storesOn(widePostgres) : layer)
  })
}

describe("idempotency store with a credentials cipher", () => {
  it.effect("keeps answers sealed at rest (a webhook's secret is in its create answer) and reads them back", () =>
    Effect.gen(function*() {
      const store = yield* IdempotencyStore
      const claim = {
        organizationId: OrganizationId.make(randomUUID()),
        key: "k-1",
        fingerprint: "f".repeat(64),
        holder: randomUUID(),
        startedAt: at(T0),
        expiresAt: at(T0 + 1000)
      }
      const body = `{"data":{"secret":"whsec_${"A".repeat(64)}"}}`
      expect(yield* store.begin(claim)).toEqual({ _tag: "Started" })
      expect(yield* store.complete(claim, { status: 201, body })).toBe(true)
      const rows = yield* (yield* SqlClient.SqlClient)<
        { response_body: string }
      >`SELECT response_body FROM idempotency_keys`
      expect(rows[0]!.response_body.startsWith(CredentialCipher.prefix)).toBe(true)
      expect(rows[0]!.response_body).not.toContain("whsec_")
      expect(yield* store.begin({ ...claim, holder: randomUUID() })).toMatchObject({
        record: { _tag: "Completed", answer: { status: 201, body } }
      })
    }).pipe(
      Effect.provide(SqlIdempotencyStore.layer.pipe(
        Layer.provide(CredentialCipher.layer({ secret: Redacted.make("k".repeat(40)), dataDir: "/nonexistent" })),
        Layer.provideMerge(sqlite),
        Layer.orDie
      ))
    ))
})
