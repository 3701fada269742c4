/**
 * The key, organization and account-list reads that every authenticated request makes are served
 * from memory for at most `ReadCache.defaultTtlMillis`: a change through this process's store is seen
 * at once, a change another process makes (here: a raw UPDATE behind the store's back) within the bound.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { SocialAccount } from "@herald/core/domain/Account"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ReadCache from "../../src/sql/internal/ReadCache.js"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlAccountStore from "../../src/sql/SqlAccountStore.js"
import * as SqlApiKeyStore from "../../src/sql/SqlApiKeyStore.js"
import * as SqlOrganizationStore from "../../src/sql/SqlOrganizationStore.js"
import { apiKey, at, newAccount, organization, T0 } from "../contract/Fixtures.js"
import { databasesUnderTest } from "../support/TestDatabases.js"

const ttl = ReadCache.defaultTtlMillis

const revokedOf = (key: Option.Option<{ readonly revokedAt: Option.Option<unknown> }>) =>
  Option.isSome(key) && Option.isSome(key.value.revokedAt)

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`key, organization and account reads on ${db.label}`, () => {
    if (db.layer === undefined) return
    const layer = Layer.mergeAll(SqlApiKeyStore.layer, SqlOrganizationStore.layer, SqlAccountStore.layer).pipe(
      Layer.provideMerge(db.layer)
    )

    it.effect("a revocation through the store is seen at once; one behind its back within the bound", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const keys = yield* ApiKeyStore
        const orgs = yield* OrganizationStore
        const org = organization()
        yield* orgs.insert(org)
        const first = apiKey(org.id)
        const second = apiKey(org.id)
        // Never "absent" from memory: a key is found the moment it is inserted.
        expect(Option.isNone(yield* keys.findByHash(first.hash))).toBe(true)
        yield* keys.insert(first)
        yield* keys.insert(second)
        expect(Option.isSome(yield* keys.findByHash(first.hash))).toBe(true)
        yield* TestClock.adjust(ttl)
        expect(revokedOf(yield* keys.findByHash(first.hash))).toBe(false)
        expect(revokedOf(yield* keys.findByHash(second.hash))).toBe(false)

        // Another process revokes `second`: served from memory for less than the bound, seen after it.
        yield* sql`UPDATE api_keys SET revoked_at = ${T0 + 2} WHERE id = ${second.id}`
        expect(revokedOf(yield* keys.findByHash(second.hash))).toBe(false)
        yield* TestClock.adjust(ttl)
        expect(revokedOf(yield* keys.findByHash(second.hash))).toBe(true)

        // This process revokes `first`: seen at once.
        yield* keys.revoke(first.id, at(T0 + 1))
        expect(revokedOf(yield* keys.findByHash(first.hash))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("an organization's subscription change through the store is seen at once; behind its back within the bound", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orgs = yield* OrganizationStore
        const org = organization()
        yield* orgs.insert(org)
        const statusOf = Effect.map(orgs.findById(org.id), Option.map((o) => o.subscriptionStatus))
        expect(yield* statusOf).toEqual(Option.some("active"))
        yield* orgs.update(new Organization({ ...org, subscriptionStatus: "canceled" }))
        expect(yield* statusOf).toEqual(Option.some("canceled"))
        yield* TestClock.adjust(ttl)
        expect(yield* statusOf).toEqual(Option.some("canceled"))
        yield* sql`UPDATE organizations SET subscription_status = 'active' WHERE id = ${org.id}`
        expect(yield* statusOf).toEqual(Option.some("canceled"))
        yield* TestClock.adjust(ttl - 1)
        expect(yield* statusOf).toEqual(Option.some("canceled"))
        yield* TestClock.adjust(1)
        expect(yield* statusOf).toEqual(Option.some("active"))
      }).pipe(Effect.provide(layer)))

    it.effect("an account list: this process's insert, update and delete are seen at once; others' too", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orgs = yield* OrganizationStore
        const accounts = yield* AccountStore
        const org = organization()
        yield* orgs.insert(org)
        const names = Effect.map(accounts.list(org.id), (list) => list.map((a) => a.accountName))
        expect(yield* names).toEqual([])
        const a = yield* accounts.insert(newAccount(org.id, { accountName: "@a" }))
        expect(yield* names).toEqual(["@a"])
        yield* accounts.update(new SocialAccount({ ...a, accountName: "@a2" }))
        expect(yield* names).toEqual(["@a2"])
        yield* TestClock.adjust(ttl)
        expect(yield* names).toEqual(["@a2"])
        if (db.label !== "sqlite") {
          // Postgres keeps no account list: another process's change is seen at once.
          yield* sql`UPDATE social_accounts SET account_name = '@elsewhere' WHERE id = ${a.id}`
          expect(yield* names).toEqual(["@elsewhere"])
        }
        yield* accounts.delete(org.id, a.id)
        expect(yield* names).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("listForWrite: fresh when this call read it; on Postgres served from memory (not fresh) until a write or forget", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orgs = yield* OrganizationStore
        const accounts = yield* AccountStore
        const org = organization()
        yield* orgs.insert(org)
        const a = yield* accounts.insert(newAccount(org.id, { accountName: "@a" }))
        yield* TestClock.adjust(ttl)
        const read = Effect.map(
          accounts.listForWrite(org.id),
          (l) => ({ names: l.accounts.map((x) => x.accountName), fresh: l.fresh })
        )
        const cached = db.label !== "sqlite"
        expect(yield* read).toEqual({ names: ["@a"], fresh: true })
        expect(yield* read).toEqual({ names: ["@a"], fresh: !cached })
        // Behind the store's back (another process): `list` sees it, a kept list does not (the write re-validates).
        yield* sql`UPDATE social_accounts SET account_name = '@elsewhere' WHERE id = ${a.id}`
        if (cached) {
          expect((yield* accounts.list(org.id)).map((x) => x.accountName)).toEqual(["@elsewhere"])
          expect(yield* read).toEqual({ names: ["@a"], fresh: false })
          yield* accounts.forgetListsForWrite
          expect(yield* read).toEqual({ names: ["@elsewhere"], fresh: true })
        }
        // This process's write empties it at once.
        yield* accounts.update(new SocialAccount({ ...a, accountName: "@a3" }))
        expect(yield* read).toEqual({ names: ["@a3"], fresh: true })
      }).pipe(Effect.provide(layer)))
  })
}

/** The next turn of the event loop: data_version is read once per turn. */
const nextTurn = Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))

describe("on SQLite, another connection's commit is seen from the next event-loop turn (data_version)", () => {
  it.effect("a revocation, a subscription change and a new account written by another process", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-read-cache-"))),
        (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
      )
      const filename = path.join(dir, "herald.db")
      const stores = yield* Layer.build(
        Layer.mergeAll(SqlApiKeyStore.layer, SqlOrganizationStore.layer, SqlAccountStore.layer).pipe(
          Layer.provideMerge(SqlDatabase.layer({ _tag: "Sqlite", filename }))
        )
      )
      const other = Context.get(
        yield* Layer.build(SqlDatabase.layerClient({ _tag: "Sqlite", filename })),
        SqlClient.SqlClient
      )
      const keys = Context.get(stores, ApiKeyStore)
      const orgs = Context.get(stores, OrganizationStore)
      const accounts = Context.get(stores, AccountStore)
      const org = organization()
      yield* orgs.insert(org)
      const key = apiKey(org.id)
      yield* keys.insert(key)
      yield* TestClock.adjust(ttl)
      // Read (and kept) before the other process writes.
      expect(revokedOf(yield* keys.findByHash(key.hash))).toBe(false)
      expect(Option.map(yield* orgs.findById(org.id), (o) => o.subscriptionStatus)).toEqual(Option.some("active"))
      expect(yield* accounts.list(org.id)).toEqual([])
      expect(revokedOf(yield* keys.findByHash(key.hash))).toBe(false)

      yield* other`UPDATE api_keys SET revoked_at = ${T0 + 2} WHERE id = ${key.id}`
      yield* nextTurn
      expect(revokedOf(yield* keys.findByHash(key.hash))).toBe(true)
      yield* other`UPDATE organizations SET subscription_status = 'canceled' WHERE id = ${org.id}`
      yield* nextTurn
      expect(Option.map(yield* orgs.findById(org.id), (o) => o.subscriptionStatus)).toEqual(Option.some("canceled"))
      yield* other`INSERT INTO social_accounts (organization_id, platform, platform_account_id, account_name, avatar_url,
        is_active, connection_flow, needs_reconnection, recent_failures, created_at, updated_at)
        VALUES (${org.id}, 'x', 'p1', '@new', '', 1, 'direct', 0, 0, ${T0}, ${T0})`
      yield* nextTurn
      expect((yield* accounts.list(org.id)).map((a) => a.accountName)).toEqual(["@new"])
    }).pipe(Effect.scoped))
})

describe("loads in flight", () => {
  /** A load that counts its runs and waits for `release`. */
  const gatedLoad = Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    let runs = 0
    const load = (value: string) =>
      Effect.zipRight(Effect.sync(() => void runs++), Effect.as(Deferred.await(release), value))
    return { release, load, runs: () => runs }
  })

  it.effect("misses of one key while its load is in flight share that load", () =>
    Effect.gen(function*() {
      const cache = ReadCache.make<string, string>()
      const gate = yield* gatedLoad
      const fibers = yield* Effect.forEach(
        Array.from({ length: 5 }),
        () => Effect.fork(cache.get("k", () => gate.load("v"))),
        { concurrency: "unbounded" }
      )
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate.release, undefined)
      const values = yield* Effect.forEach(fibers, Fiber.join)
      expect(values).toEqual(["v", "v", "v", "v", "v"])
      expect(gate.runs()).toBe(1)
    }))

  it.effect("a read after invalidate does not wait for a load begun before it", () =>
    Effect.gen(function*() {
      const cache = ReadCache.make<string, string>()
      const gate = yield* gatedLoad
      const before = yield* Effect.fork(cache.get("k", () => gate.load("old")))
      yield* Effect.yieldNow()
      yield* cache.invalidate
      // Not blocked on the gate: its own load runs and answers.
      expect(yield* cache.get("k", () => Effect.succeed("new"))).toBe("new")
      yield* Deferred.succeed(gate.release, undefined)
      expect(yield* Fiber.join(before)).toBe("old")
      // The old load, begun before the write, was not kept either.
      expect(yield* cache.get("k", () => Effect.succeed("fresh"))).toBe("fresh")
    }))

  it.effect("a failed load is not shared: a waiting caller runs its own", () =>
    Effect.gen(function*() {
      const cache = ReadCache.make<string, string>()
      const gate = yield* gatedLoad
      const failing = yield* Effect.fork(
        Effect.either(cache.get("k", () => Effect.zipRight(Deferred.await(gate.release), Effect.fail("boom" as const))))
      )
      yield* Effect.yieldNow()
      const waiting = yield* Effect.fork(cache.get("k", () => Effect.succeed("own")))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate.release, undefined)
      expect(Either.isLeft(yield* Fiber.join(failing))).toBe(true)
      expect(yield* Fiber.join(waiting)).toBe("own")
    }))
})
