import { describe, expect, it } from "@effect/vitest"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { AccountId, UserId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { apiKey, at, givenOrganization, type StoresLayer, T0 } from "./Fixtures.js"

export const apiKeyStoreContract = (layer: StoresLayer) =>
  describe("ApiKeyStore", () => {
    it.effect("inserts and finds keys by hash and id, every field intact", () =>
      Effect.gen(function*() {
        const store = yield* ApiKeyStore
        const org = yield* givenOrganization
        const restricted = apiKey(org.id, {
          createdBy: Option.some(UserId.make(randomUUID())),
          scopes: ["read", "ai"],
          accountIds: Option.some([AccountId.make(3), AccountId.make(7)]),
          expiresAt: Option.some(at(T0 + 1000))
        })
        const open = apiKey(org.id, { accountIds: Option.some([]) })
        yield* store.insert(restricted)
        yield* store.insert(open)
        expect(yield* store.findByHash(restricted.hash)).toEqual(Option.some(restricted))
        expect(yield* store.findById(open.id)).toEqual(Option.some(open))
        expect(yield* store.findByHash("0".repeat(64))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("lists keys of one organization, or of all", () =>
      Effect.gen(function*() {
        const store = yield* ApiKeyStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const first = apiKey(org.id, { createdAt: at(T0) })
        const second = apiKey(org.id, { createdAt: at(T0 + 1) })
        const elsewhere = apiKey(other.id)
        yield* store.insert(second)
        yield* store.insert(elsewhere)
        yield* store.insert(first)
        expect(yield* store.list(Option.some(org.id))).toEqual([first, second])
        expect((yield* store.list(Option.none())).map((k) => k.id).sort()).toEqual(
          [first.id, second.id, elsewhere.id].sort()
        )
      }).pipe(Effect.provide(layer)))

    it.effect("revokes once: a second revoke, or of an unknown key, is false", () =>
      Effect.gen(function*() {
        const store = yield* ApiKeyStore
        const org = yield* givenOrganization
        const key = apiKey(org.id)
        yield* store.insert(key)
        expect(yield* store.revoke(key.id, at(T0 + 10))).toBe(true)
        expect(yield* store.revoke(key.id, at(T0 + 20))).toBe(false)
        expect(yield* store.revoke(apiKey(org.id).id, at(T0))).toBe(false)
        const found = yield* store.findById(key.id)
        expect(Option.flatMap(found, (k) => k.revokedAt)).toEqual(Option.some(at(T0 + 10)))
      }).pipe(Effect.provide(layer)))

    it.effect("rejects a second key with the same hash", () =>
      Effect.gen(function*() {
        const store = yield* ApiKeyStore
        const org = yield* givenOrganization
        const key = apiKey(org.id)
        yield* store.insert(key)
        const error = yield* Effect.flip(store.insert(apiKey(org.id, { hash: key.hash })))
        expect(error._tag).toBe("PersistenceError")
      }).pipe(Effect.provide(layer)))

    it.effect("records when a key was last used, only ever forward, per organization", () =>
      Effect.gen(function*() {
        const store = yield* ApiKeyStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const used = apiKey(org.id)
        const unused = apiKey(org.id)
        const elsewhere = apiKey(other.id)
        yield* Effect.forEach([used, unused, elsewhere], store.insert)
        yield* store.markUsed(used.id, at(T0 + 500))
        yield* store.markUsed(used.id, at(T0 + 100))
        yield* store.markUsed(elsewhere.id, at(T0 + 50))
        expect(yield* store.lastUsed(org.id)).toEqual(new Map([[used.id, at(T0 + 500)]]))
        yield* store.markUsed(used.id, at(T0 + 900))
        expect((yield* store.lastUsed(org.id)).get(used.id)).toEqual(at(T0 + 900))
        expect((yield* store.lastUsed(other.id)).get(elsewhere.id)).toEqual(at(T0 + 50))
        // The key itself reads the same as before.
        expect(yield* store.findById(used.id)).toEqual(Option.some(used))
      }).pipe(Effect.provide(layer)))
  })
