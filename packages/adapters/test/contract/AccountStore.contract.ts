import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { SocialAccount } from "@herald/core/accounts/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { AccountId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { at, givenOrganization, newAccount, T0, type StoresLayer } from "./Fixtures.js"

export const accountStoreContract = (layer: StoresLayer) =>
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

    it.effect("refuses a second account with the same platform account id", () =>
      Effect.gen(function*() {
        const store = yield* AccountStore
        const org = yield* givenOrganization
        yield* store.insert(newAccount(org.id, { platformAccountId: "same" }))
        const error = yield* Effect.flip(store.insert(newAccount(org.id, { platformAccountId: "same" })))
        expect(error._tag).toBe("PersistenceError")
      }).pipe(Effect.provide(layer)))
  })
