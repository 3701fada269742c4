import { describe, expect, it } from "@effect/vitest"
import { Invitation, InvitationId, InvitationStore } from "@herald/core/access/InvitationStore"
import { UserStore } from "@herald/core/access/UserStore"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, givenOrganization, type StoresLayer, T0, user } from "./Fixtures.js"
import type { OrganizationId, UserId } from "@herald/core/kernel/Ids"

const hashOf = () => randomUUID().replace(/-/g, "") + randomUUID().replace(/-/g, "")

const invitation = (
  organizationId: OrganizationId,
  invitedBy: UserId,
  overrides: Partial<ConstructorParameters<typeof Invitation>[0]> = {}
) =>
  new Invitation({
    id: InvitationId.make(randomUUID()),
    organizationId,
    email: `${randomUUID().slice(0, 8)}@acme.test`,
    role: "member",
    invitedBy,
    expiresAt: at(T0 + 10_000),
    createdAt: at(T0),
    ...overrides
  })

export const invitationStoreContract = (layer: StoresLayer, concurrent: StoresLayer) =>
  describe("InvitationStore", () => {
    it.effect("lists open invitations per organization, finds one by its token's hash until it expires", () =>
      Effect.gen(function*() {
        const store = yield* InvitationStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const owner = user(org.id)
        const first = invitation(org.id, owner.id, { email: "a@acme.test", role: "admin", createdAt: at(T0) })
        const second = invitation(org.id, owner.id, {
          email: "b@acme.test",
          createdAt: at(T0 + 1),
          expiresAt: at(T0 + 50)
        })
        const elsewhere = invitation(other.id, owner.id, { createdAt: at(T0 + 2) })
        const hash = hashOf()
        yield* store.insert(first, hash)
        yield* store.insert(second, hashOf())
        yield* store.insert(elsewhere, hashOf())
        expect(yield* store.listOpen(org.id, at(T0 + 10))).toEqual([first, second])
        expect(yield* store.listOpen(org.id, at(T0 + 50))).toEqual([first])
        expect(yield* store.findByTokenHash(hash, at(T0 + 9_999))).toEqual(Option.some(first))
        expect(yield* store.findByTokenHash(hash, at(T0 + 10_000))).toEqual(Option.none())
        expect(yield* store.findByTokenHash(hashOf(), at(T0))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("a new invitation of the same email to the same organization replaces the earlier link", () =>
      Effect.gen(function*() {
        const store = yield* InvitationStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const owner = user(org.id)
        const oldHash = hashOf()
        const newHash = hashOf()
        const otherHash = hashOf()
        yield* store.insert(invitation(org.id, owner.id, { email: "same@acme.test" }), oldHash)
        yield* store.insert(invitation(other.id, owner.id, { email: "same@acme.test" }), otherHash)
        const fresh = invitation(org.id, owner.id, { email: "same@acme.test", role: "admin", createdAt: at(T0 + 5) })
        yield* store.insert(fresh, newHash)
        expect(yield* store.findByTokenHash(oldHash, at(T0 + 6))).toEqual(Option.none())
        expect(yield* store.findByTokenHash(newHash, at(T0 + 6))).toEqual(Option.some(fresh))
        expect(Option.isSome(yield* store.findByTokenHash(otherHash, at(T0 + 6)))).toBe(true)
        expect((yield* store.listOpen(org.id, at(T0 + 6))).map((i) => i.role)).toEqual(["admin"])
      }).pipe(Effect.provide(layer)))

    it.effect("an invitation is taken once, never after its expiry; withdrawn only within its organization", () =>
      Effect.gen(function*() {
        const store = yield* InvitationStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const owner = user(org.id)
        const live = invitation(org.id, owner.id)
        const stale = invitation(org.id, owner.id, { expiresAt: at(T0 + 100) })
        const withdrawn = invitation(org.id, owner.id)
        const liveHash = hashOf()
        const staleHash = hashOf()
        const withdrawnHash = hashOf()
        yield* store.insert(live, liveHash)
        yield* store.insert(stale, staleHash)
        yield* store.insert(withdrawn, withdrawnHash)
        expect(yield* store.take(staleHash, at(T0 + 100))).toEqual(Option.none())
        expect(yield* store.take(liveHash, at(T0 + 99))).toEqual(Option.some(live))
        expect(yield* store.take(liveHash, at(T0 + 99))).toEqual(Option.none())
        expect(yield* store.remove(other.id, withdrawn.id)).toBe(false)
        expect(yield* store.remove(org.id, withdrawn.id)).toBe(true)
        expect(yield* store.remove(org.id, withdrawn.id)).toBe(false)
        expect(yield* store.take(withdrawnHash, at(T0 + 1))).toEqual(Option.none())
        expect(yield* store.listOpen(org.id, at(T0))).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("two concurrent takers of one link: exactly one gets the invitation", () =>
      Effect.gen(function*() {
        const store = yield* InvitationStore
        const org = yield* givenOrganization
        const hash = hashOf()
        yield* store.insert(invitation(org.id, user(org.id).id), hash)
        const results = yield* Effect.all(Array.from({ length: 4 }, () => store.take(hash, at(T0 + 1))), {
          concurrency: "unbounded"
        })
        expect(results.filter(Option.isSome)).toHaveLength(1)
      }).pipe(Effect.provide(concurrent)))

    it.effect("a token hash is unique across invitations", () =>
      Effect.gen(function*() {
        const store = yield* InvitationStore
        const org = yield* givenOrganization
        const hash = hashOf()
        yield* store.insert(invitation(org.id, user(org.id).id), hash)
        const duplicate = yield* Effect.exit(store.insert(invitation(org.id, user(org.id).id), hash))
        expect(Exit.isFailure(duplicate)).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("UserStore.remove removes the user and their password links; false for an unknown user", () =>
      Effect.gen(function*() {
        const users = yield* UserStore
        const org = yield* givenOrganization
        const someone = user(org.id, { email: `${randomUUID().slice(0, 8)}@acme.test`, role: "member" })
        yield* users.insert(someone)
        const token = hashOf()
        yield* users.insertPasswordToken({
          tokenHash: token,
          userId: someone.id,
          expiresAt: at(T0 + 1000),
          createdAt: at(T0)
        })
        expect(yield* users.remove(someone.id)).toBe(true)
        expect(yield* users.findById(someone.id)).toEqual(Option.none())
        expect(yield* users.consumePasswordToken(token, at(T0 + 1))).toEqual(Option.none())
        expect(yield* users.remove(someone.id)).toBe(false)
      }).pipe(Effect.provide(layer)))
  })
