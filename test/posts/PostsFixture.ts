/**
 * The posts use cases over real stores (SQLite, and Postgres where one answers): a fresh organization
 * per test with a caller key and a few accounts, the test clock at a fixed instant.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import type { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import type { Crypto } from "@herald/core/kernel/Crypto"
import type { Event, EventType } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import type { IdGenerator } from "@herald/core/kernel/IdGenerator"
import type { AccountId } from "@herald/core/kernel/Ids"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import type { Platform } from "@herald/core/domain/Platform"
import type * as Posts from "@herald/core/posts/Posts"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { apiKey, newAccount, organization } from "../../packages/adapters/test/contract/Fixtures.js"
import type { TestDatabaseLayer } from "../../packages/adapters/test/support/TestDatabases.js"

export type Services = SqlStores.Stores | SqlClient.SqlClient | IdGenerator | Crypto

export const servicesOn = (database: TestDatabaseLayer): Layer.Layer<Services, unknown> =>
  SqlStores.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(NodeIdGenerator.layer, NodeCrypto.layer)),
    Layer.provideMerge(database)
  )

/** Every test starts at this instant. */
export const NOW = DateTime.unsafeMake("2026-07-01T10:00:00.000Z")
export const inMinutes = (minutes: number) => DateTime.formatIso(DateTime.add(NOW, { minutes }))

export interface World {
  readonly caller: Posts.Caller
  readonly accounts: Record<"x" | "bluesky" | "linkedin" | "youtube" | "inactive", SocialAccount>
  /** A key of the same organization restricted to the x account. */
  readonly restricted: Posts.Caller
  /** An account of another organization. */
  readonly foreign: SocialAccount
}

const accountOf = (platform: Platform, name: string, isActive = true) => (orgId: SocialAccount["organizationId"]) =>
  Effect.flatMap(AccountStore, (store) => store.insert(newAccount(orgId, { platform, accountName: name, isActive })))

export const world = Effect.gen(function*() {
  yield* TestClock.setTime(DateTime.toEpochMillis(NOW))
  const orgs = yield* OrganizationStore
  const org = organization()
  const other = organization({ name: "Other" })
  yield* orgs.insert(org)
  yield* orgs.insert(other)
  const x = yield* accountOf("x", "@acme")(org.id)
  const accounts = {
    x,
    bluesky: yield* accountOf("bluesky", "acme.bsky.social")(org.id),
    linkedin: yield* accountOf("linkedin", "Acme Inc")(org.id),
    youtube: yield* accountOf("youtube", "Acme TV")(org.id),
    inactive: yield* accountOf("threads", "old", false)(org.id)
  }
  const foreign = yield* accountOf("x", "@other")(other.id)
  const w: World = {
    caller: { key: apiKey(org.id) },
    restricted: { key: apiKey(org.id, { accountIds: Option.some([x.id as AccountId]) }) },
    accounts,
    foreign
  }
  return w
})

export const eventsOf = (w: World, type?: EventType) =>
  Effect.map(
    Effect.flatMap(EventStore, (store) => store.list(w.caller.key.organizationId)),
    (events): ReadonlyArray<Event> => events.filter((e) => type === undefined || e.type === type)
  )
