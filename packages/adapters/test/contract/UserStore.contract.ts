import { describe, expect, it } from "@effect/vitest"
import { UserStore } from "@herald/core/access/UserStore"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, givenOrganization, type StoresLayer, T0, user } from "./Fixtures.js"

const hashOf = () => randomUUID().replace(/-/g, "") + randomUUID().replace(/-/g, "")

export const userStoreContract = (layer: StoresLayer, concurrent: StoresLayer) =>
  describe("UserStore", () => {
    it.effect("inserts users, finds them by id and email, lists per organization or all", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const owner = user(org.id, { email: "owner@acme.test", createdAt: at(T0) })
        const member = user(org.id, { email: "member@acme.test", role: "member", createdAt: at(T0 + 1) })
        const elsewhere = user(other.id, { email: "x@other.test", createdAt: at(T0 + 2) })
        yield* store.insert(member)
        yield* store.insert(elsewhere)
        yield* store.insert(owner)
        expect(yield* store.findById(member.id)).toEqual(Option.some(member))
        expect(yield* store.findById(user(org.id).id)).toEqual(Option.none())
        expect(yield* store.findByEmail("member@acme.test")).toEqual(
          Option.some({ user: member, passwordHash: Option.none() })
        )
        expect(yield* store.findByEmail("nobody@acme.test")).toEqual(Option.none())
        expect(yield* store.list(Option.some(org.id))).toEqual([owner, member])
        expect(yield* store.list(Option.none())).toEqual([owner, member, elsewhere])
      }).pipe(Effect.provide(layer)))

    it.effect("sets a role and a password hash; false for an unknown user", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = yield* givenOrganization
        const member = user(org.id, { email: "m@acme.test", role: "member" })
        yield* store.insert(member)
        expect(yield* store.setRole(member.id, "admin")).toBe(true)
        expect(yield* store.setPasswordHash(member.id, "scrypt$1$1$1$c2FsdA==$a2V5")).toBe(true)
        const found = yield* store.findByEmail("m@acme.test")
        expect(Option.map(found, (c) => c.user.role)).toEqual(Option.some("admin"))
        expect(Option.flatMap(found, (c) => c.passwordHash)).toEqual(Option.some("scrypt$1$1$1$c2FsdA==$a2V5"))
        const ghost = user(org.id).id
        expect(yield* store.setRole(ghost, "owner")).toBe(false)
        expect(yield* store.setPasswordHash(ghost, "x")).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("a password token is taken once, and never after its expiry", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = yield* givenOrganization
        const someone = user(org.id, { email: "t@acme.test" })
        yield* store.insert(someone)
        const live = hashOf()
        const stale = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: stale,
          userId: someone.id,
          expiresAt: at(T0 + 100),
          createdAt: at(T0)
        })
        yield* store.insertPasswordToken({
          tokenHash: live,
          userId: someone.id,
          expiresAt: at(T0 + 1000),
          createdAt: at(T0)
        })
        expect(yield* store.consumePasswordToken(stale, at(T0 + 100))).toEqual(Option.none())
        expect(yield* store.consumePasswordToken(live, at(T0 + 999))).toEqual(Option.some(someone.id))
        expect(yield* store.consumePasswordToken(live, at(T0 + 999))).toEqual(Option.none())
        expect(yield* store.consumePasswordToken(hashOf(), at(T0))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("a new token clears tokens already expired; a token hash is unique", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = yield* givenOrganization
        const someone = user(org.id, { email: "u@acme.test" })
        yield* store.insert(someone)
        const old = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: old,
          userId: someone.id,
          expiresAt: at(T0 + 10),
          createdAt: at(T0)
        })
        const fresh = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: fresh,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 20)
        })
        // Taken at a time before its expiry, the old token is still gone: the second insert removed it.
        expect(yield* store.consumePasswordToken(old, at(T0 + 5))).toEqual(Option.none())
        const duplicate = yield* Effect.exit(
          store.insertPasswordToken({
            tokenHash: fresh,
            userId: someone.id,
            expiresAt: at(T0 + 9000),
            createdAt: at(T0 + 30)
          })
        )
        expect(Exit.isFailure(duplicate)).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("only the newest token of a user works; taking one ends every other", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = yield* givenOrganization
        const someone = user(org.id, { email: "n@acme.test" })
        const other = user(org.id, { email: "o@acme.test" })
        yield* store.insert(someone)
        yield* store.insert(other)
        const first = hashOf()
        const second = hashOf()
        const othersToken = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: first,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0)
        })
        yield* store.insertPasswordToken({
          tokenHash: othersToken,
          userId: other.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 5)
        })
        yield* store.insertPasswordToken({
          tokenHash: second,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 10)
        })
        // The first link, unexpired, stopped working when the second was issued.
        expect(yield* store.consumePasswordToken(first, at(T0 + 20))).toEqual(Option.none())
        expect(yield* store.consumePasswordToken(second, at(T0 + 20))).toEqual(Option.some(someone.id))
        // Another user's token is untouched by either.
        expect(yield* store.consumePasswordToken(othersToken, at(T0 + 20))).toEqual(Option.some(other.id))
        // Issued in the same millisecond, the later one still replaces the earlier.
        const a = hashOf()
        const b = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: a,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 30)
        })
        yield* store.insertPasswordToken({
          tokenHash: b,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 30)
        })
        expect(yield* store.consumePasswordToken(a, at(T0 + 40))).toEqual(Option.none())
        // Taking a token ends the others: an earlier one that survived (inserted out of order) is gone.
        const late = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: late,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 50)
        })
        yield* store.insertPasswordToken({
          tokenHash: a,
          userId: someone.id,
          expiresAt: at(T0 + 5000),
          createdAt: at(T0 + 45)
        })
        expect(yield* store.consumePasswordToken(late, at(T0 + 60))).toEqual(Option.some(someone.id))
        expect(yield* store.consumePasswordToken(a, at(T0 + 60))).toEqual(Option.none())
        expect(yield* store.consumePasswordToken(b, at(T0 + 60))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("two concurrent takers of one token: exactly one gets it", () =>
      Effect.gen(function*() {
        const store = yield* UserStore
        const org = yield* givenOrganization
        const someone = user(org.id, { email: "c@acme.test" })
        yield* store.insert(someone)
        const token = hashOf()
        yield* store.insertPasswordToken({
          tokenHash: token,
          userId: someone.id,
          expiresAt: at(T0 + 1000),
          createdAt: at(T0)
        })
        const results = yield* Effect.all(
          Array.from({ length: 4 }, () => store.consumePasswordToken(token, at(T0 + 1))),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Option.isSome)).toHaveLength(1)
      }).pipe(Effect.provide(concurrent)))
  })
