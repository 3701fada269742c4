/**
 * Every store contract against every database: SQLite always, Postgres where one answers
 * (TestDatabases prints the reason when it does not). Each test builds its own database.
 */
import { describe } from "@effect/vitest"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { accountStoreContract } from "../contract/AccountStore.contract.js"
import { analyticsStoreContract } from "../contract/AnalyticsStore.contract.js"
import { apiKeyStoreContract } from "../contract/ApiKeyStore.contract.js"
import { campaignStoreContract } from "../contract/CampaignStore.contract.js"
import { connectSessionStoreContract } from "../contract/ConnectSessionStore.contract.js"
import { deviceAuthorizationStoreContract } from "../contract/DeviceAuthorizationStore.contract.js"
import { dispatchStoreContract } from "../contract/DispatchStore.contract.js"
import { eventStoreContract } from "../contract/EventStore.contract.js"
import type { StoresLayer } from "../contract/Fixtures.js"
import { metricsStoreContract } from "../contract/MetricsStore.contract.js"
import { postListingContract, requeueFailedContract } from "../contract/PostListing.contract.js"
import { postStoreContract } from "../contract/PostStore.contract.js"
import { processStoreContract } from "../contract/ProcessStore.contract.js"
import { rollupsContract } from "../contract/Rollups.contract.js"
import { transactorContract } from "../contract/Transactor.contract.js"
import { organizationStoreContract } from "../contract/OrganizationStore.contract.js"
import { queueStoreContract } from "../contract/QueueStore.contract.js"
import { usageCountersContract } from "../contract/UsageCounters.contract.js"
import { sessionStoreContract } from "../contract/SessionStore.contract.js"
import { userStoreContract } from "../contract/UserStore.contract.js"
import { invitationStoreContract } from "../contract/InvitationStore.contract.js"
import { notificationStoreContract } from "../contract/NotificationStore.contract.js"
import { commentStoreContract } from "../contract/CommentStore.contract.js"
import { createFreshPgDatabase, databasesUnderTest, type TestDatabaseLayer } from "../support/TestDatabases.js"

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))

const storesOn = (database: TestDatabaseLayer): StoresLayer =>
  SqlStores.layer.pipe(Layer.provide(randomIds), Layer.provideMerge(database))

/** Postgres with enough connections for one per concurrent claimer. */
const widePostgres: TestDatabaseLayer = Layer.unwrapScoped(
  Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
    Effect.map((db) => SqlDatabase.layer({ _tag: "Postgres", url: db.url, maxConnections: 10 }))
  )
)

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`stores on ${db.label}`, () => {
    if (db.layer === undefined) return
    const layer = storesOn(db.layer)
    organizationStoreContract(layer)
    apiKeyStoreContract(layer)
    accountStoreContract(layer, { rowLocks: db.label === "postgres" })
    eventStoreContract(layer)
    postStoreContract(layer)
    analyticsStoreContract(layer)
    postListingContract(layer)
    requeueFailedContract(layer)
    // Modest run counts: each run is a fresh organization and up to 25 writes, checked in full.
    rollupsContract(layer, { numRuns: db.label === "postgres" ? 15 : 30 })
    transactorContract(layer)
    const concurrent = db.label === "postgres" ? storesOn(widePostgres) : layer
    usageCountersContract(concurrent)
    dispatchStoreContract(layer, concurrent)
    campaignStoreContract(layer, concurrent)
    deviceAuthorizationStoreContract(concurrent)
    connectSessionStoreContract(layer)
    queueStoreContract(layer, concurrent)
    metricsStoreContract(layer, concurrent)
    processStoreContract(layer, { databaseClock: db.label === "postgres" })
    userStoreContract(layer, concurrent)
    sessionStoreContract(layer)
    invitationStoreContract(layer, concurrent)
    notificationStoreContract(layer)
    commentStoreContract(layer)
  })
}
