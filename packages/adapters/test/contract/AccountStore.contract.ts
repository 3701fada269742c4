import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { AccountId } from "@herald/core/kernel/Ids"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { at, givenOrganization, newAccount, type StoresLayer, T0 } from "./Fixtures.js"

/** `rowLocks`: the database lets several write transactions run at once, locking rows (Postgres). */
export const accountStoreContract = (layer: StoresLayer, options: { readonly rowLocks: boolean }) =>
  describe("AccountStore", () => {
    it.effect("assigns increasing integer ids and round-trips every field", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const org = yield* givenOrganization
        const first = yield* store.insert(newAccount(org.id, {
          platform: "bluesky",
          connectionFlow: "credential",
          isActive: false,
          needsReconnection: true,
          tokenExpiresAt: Option.some(at(T0 + 60_000)),
          lastSuccessAt: Option.some(at(T0 - 60_000)),
          recentFailures: 2,
          credentials: Option.some(Redacted.make("app-password"))
        }))
        const second = yield* store.insert(newAccount(org.id))
        expect(Number.isInteger(first.id) && first.id > 0).toBe(true)
        expect(second.id).toBeGreaterThan(first.id)
        const found = yield* store.findById(org.id, first.id)
        expect(found).toEqual(Option.some(first))
        const credentials = Option.flatMap(found, (a) => a.credentials)
        expect(Option.map(credentials, Redacted.value)).toEqual(Option.some("app-password"))
      }).pipe(Effect.provide(layer)))

    it.effect("keeps credentials as given in their column", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const sql = yield* SqlClient.SqlClient
        const org = yield* givenOrganization
        const account = yield* store.insert(newAccount(org.id, { credentials: Option.some(Redacted.make("s3cret")) }))
        const rows = yield* sql<{ credentials: string | null }>`SELECT credentials FROM social_accounts
          WHERE id = ${account.id}`
        expect(rows[0]!.credentials).toBe("s3cret")
      }).pipe(Effect.provide(layer)))

    it.effect("finds by platform account id within the organization only", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const account = yield* store.insert(newAccount(org.id, { platform: "instagram", platformAccountId: "ig-1" }))
        yield* store.insert(newAccount(other.id, { platform: "instagram", platformAccountId: "ig-1" }))
        expect(yield* store.findByPlatformAccountId(org.id, "instagram", "ig-1")).toEqual(Option.some(account))
        expect(yield* store.findByPlatformAccountId(org.id, "facebook", "ig-1")).toEqual(Option.none())
        expect(yield* store.findById(other.id, account.id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("updates, lists by id and deletes", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const org = yield* givenOrganization
        const a = yield* store.insert(newAccount(org.id))
        const b = yield* store.insert(newAccount(org.id, { platform: "telegram" }))
        const changed = new SocialAccount({
          ...a,
          accountName: "renamed",
          needsReconnection: true,
          recentFailures: 4,
          updatedAt: at(T0 + 99)
        })
        yield* store.update(changed)
        expect(yield* store.list(org.id)).toEqual([changed, b])
        expect(yield* store.delete(org.id, a.id)).toBe(true)
        expect(yield* store.delete(org.id, a.id)).toBe(false)
        expect(yield* store.delete(org.id, AccountId.make(999_999))).toBe(false)
        expect(yield* store.list(org.id)).toEqual([b])
      }).pipe(Effect.provide(layer)))

    it.effect("records a success unless the row already has one under a minute old on a healthy account", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const org = yield* givenOrganization
        const never = yield* store.insert(newAccount(org.id))
        const written = yield* store.recordSuccess(org.id, never.id, at(T0 + 1_000))
        expect(written).toEqual(Option.some(
          new SocialAccount({
            ...never,
            lastSuccessAt: Option.some(at(T0 + 1_000)),
            updatedAt: at(T0 + 1_000)
          })
        ))
        expect(yield* store.findById(org.id, never.id)).toEqual(written)
        // Under a minute later: the row stands as it is.
        expect(yield* store.recordSuccess(org.id, never.id, at(T0 + 60_999))).toEqual(Option.none())
        expect(yield* store.findById(org.id, never.id)).toEqual(written)
        // A minute later it is written again.
        const later = yield* store.recordSuccess(org.id, never.id, at(T0 + 61_000))
        expect(Option.map(later, (a) => a.lastSuccessAt)).toEqual(Option.some(Option.some(at(T0 + 61_000))))
        // Recent failures are cleared at once, however fresh the last success; reconnection is left as is.
        const failing = yield* store.insert(newAccount(org.id, {
          platform: "telegram",
          lastSuccessAt: Option.some(at(T0)),
          recentFailures: 3,
          needsReconnection: true
        }))
        const cleared = yield* store.recordSuccess(org.id, failing.id, at(T0 + 5))
        expect(Option.map(cleared, (a) => [a.recentFailures, a.needsReconnection, a.lastSuccessAt])).toEqual(
          Option.some([0, true, Option.some(at(T0 + 5))])
        )
        // Another organization's account, or none: nothing written.
        const other = yield* givenOrganization
        expect(yield* store.recordSuccess(other.id, never.id, at(T0 + 200_000))).toEqual(Option.none())
        expect(yield* store.recordSuccess(org.id, AccountId.make(999_999), at(T0 + 200_000))).toEqual(Option.none())
        expect(Option.map(yield* store.findById(org.id, never.id), (a) => a.lastSuccessAt)).toEqual(
          Option.some(Option.some(at(T0 + 61_000)))
        )
      }).pipe(Effect.provide(layer)))

    // SQLite runs one write transaction at a time: no row is ever held by another.
    if (options.rowLocks) {
      it.effect("a success leaves a row another transaction holds to that transaction, without waiting", () =>
        Effect.gen(function*() {
          const store = yield* AccountStore
          const sql = yield* SqlClient.SqlClient
          const org = yield* givenOrganization
          const account = yield* store.insert(newAccount(org.id))
          const holding = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
            yield* sql`UPDATE social_accounts SET account_name = 'held' WHERE id = ${account.id}`
            yield* Deferred.succeed(holding, undefined)
            yield* Deferred.await(release)
          })))
          yield* Deferred.await(holding)
          // Waiting for the holder would not end before the holder is released (after this call).
          const skipped = yield* store.recordSuccess(org.id, account.id, at(T0 + 1_000)).pipe(
            Effect.disconnect,
            Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "waited for the row lock" })
          )
          expect(skipped).toEqual(Option.none())
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          const after = Option.getOrThrow(yield* store.findById(org.id, account.id))
          expect([after.accountName, after.lastSuccessAt]).toEqual(["held", Option.none()])
          // Once released, a success is written.
          expect(Option.isSome(yield* store.recordSuccess(org.id, account.id, at(T0 + 2_000)))).toBe(true)
        }).pipe(Effect.provide(layer)))
    }

    it.effect("refuses a second account with the same platform account id", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const org = yield* givenOrganization
        yield* store.insert(newAccount(org.id, { platformAccountId: "same" }))
        const error = yield* Effect.flip(store.insert(newAccount(org.id, { platformAccountId: "same" })))
        expect(error._tag).toBe("PersistenceError")
      }).pipe(Effect.provide(layer)))
  })
