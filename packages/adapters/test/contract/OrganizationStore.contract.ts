import { describe, expect, it } from "@effect/vitest"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { at, organization, type StoresLayer, T0, user } from "./Fixtures.js"

export const organizationStoreContract = (layer: StoresLayer) =>
  describe("OrganizationStore", () => {
    it.effect("inserts, finds, updates and lists organizations", () =>
      Effect.gen(function*() {
        const store = yield* OrganizationStore
        const a = organization({ name: "A", createdAt: at(T0 + 1) })
        const b = organization({
          name: "B",
          subscriptionStatus: "trialing",
          trialEndsAt: Option.some(at(T0 + 86_400_000)),
          createdAt: at(T0)
        })
        yield* store.insert(a)
        yield* store.insert(b)
        expect(yield* store.findById(b.id)).toEqual(Option.some(b))
        const renamed = organization({ ...a, name: "A2", plan: "scale" })
        yield* store.update(renamed)
        expect(yield* store.findById(a.id)).toEqual(Option.some(renamed))
        expect(yield* store.list).toEqual([b, renamed])
        expect(yield* store.findById(organization().id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("inserts and lists users per organization", () =>
      Effect.gen(function*() {
        const store = yield* OrganizationStore
        const org = organization()
        const other = organization()
        yield* store.insert(org)
        yield* store.insert(other)
        const owner = user(org.id, { createdAt: at(T0) })
        const member = user(org.id, { role: "member", email: "m@example.com", createdAt: at(T0 + 5) })
        yield* store.insertUser(member)
        yield* store.insertUser(owner)
        yield* store.insertUser(user(other.id))
        expect(yield* store.listUsers(org.id)).toEqual([owner, member])
      }).pipe(Effect.provide(layer)))

    it.effect("reports a duplicate id as a PersistenceError", () =>
      Effect.gen(function*() {
        const store = yield* OrganizationStore
        const org = organization()
        yield* store.insert(org)
        const error = yield* Effect.flip(store.insert(org))
        expect(error._tag).toBe("PersistenceError")
      }).pipe(Effect.provide(layer)))
  })
