import { describe, expect, it } from "@effect/vitest"
import { Session, SessionId } from "@herald/core/access/Session"
import { SessionStore } from "@herald/core/access/SessionStore"
import { UserStore } from "@herald/core/access/UserStore"
import type { OrganizationId, UserId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, givenOrganization, type StoresLayer, T0, user } from "./Fixtures.js"

const session = (
  userId: UserId,
  organizationId: OrganizationId,
  overrides: Partial<ConstructorParameters<typeof Session>[0]> = {}
) =>
  new Session({
    id: SessionId.make(randomUUID()),
    userId,
    organizationId,
    tokenHash: randomUUID().replace(/-/g, "") + randomUUID().replace(/-/g, ""),
    createdAt: at(T0),
    lastSeenAt: at(T0),
    ...overrides
  })

const givenUser = Effect.gen(function*() {
  const org = yield* givenOrganization
  const someone = user(org.id, { email: `${randomUUID()}@acme.test` })
  yield* (yield* UserStore).insert(someone)
  return someone
})

export const sessionStoreContract = (layer: StoresLayer) =>
  describe("SessionStore", () => {
    it.effect("inserts and finds a session by its token hash, every field intact; a hash is unique", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const someone = yield* givenUser
        const s = session(someone.id, someone.organizationId, { createdAt: at(T0 + 5), lastSeenAt: at(T0 + 7) })
        yield* store.insert(s)
        expect(yield* store.findByTokenHash(s.tokenHash)).toEqual(Option.some(s))
        expect(yield* store.findByTokenHash("0".repeat(64))).toEqual(Option.none())
        const twin = yield* Effect.exit(
          store.insert(session(someone.id, someone.organizationId, { tokenHash: s.tokenHash }))
        )
        expect(Exit.isFailure(twin)).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("touch moves lastSeenAt forward only", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const someone = yield* givenUser
        const s = session(someone.id, someone.organizationId, { lastSeenAt: at(T0 + 100) })
        yield* store.insert(s)
        yield* store.touch(s.id, at(T0 + 50))
        expect(Option.map(yield* store.findByTokenHash(s.tokenHash), (x) => x.lastSeenAt)).toEqual(
          Option.some(at(T0 + 100))
        )
        yield* store.touch(s.id, at(T0 + 200))
        expect(Option.map(yield* store.findByTokenHash(s.tokenHash), (x) => x.lastSeenAt)).toEqual(
          Option.some(at(T0 + 200))
        )
      }).pipe(Effect.provide(layer)))

    it.effect("removes one session, or every session of a user, and nobody else's", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const a = yield* givenUser
        const b = yield* givenUser
        const [a1, a2, b1] = [
          session(a.id, a.organizationId),
          session(a.id, a.organizationId),
          session(b.id, b.organizationId)
        ]
        yield* Effect.forEach([a1, a2, b1], store.insert)
        expect(yield* store.remove(a1.id)).toBe(true)
        expect(yield* store.remove(a1.id)).toBe(false)
        yield* store.insert(session(a.id, a.organizationId))
        expect(yield* store.removeForUser(a.id)).toBe(2)
        expect(yield* store.findByTokenHash(a2.tokenHash)).toEqual(Option.none())
        expect(yield* store.findByTokenHash(b1.tokenHash)).toEqual(Option.some(b1))
      }).pipe(Effect.provide(layer)))

    it.effect("purge forgets sessions too old or idle too long, and keeps the rest", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const someone = yield* givenUser
        const old = session(someone.id, someone.organizationId, { createdAt: at(T0), lastSeenAt: at(T0 + 900) })
        const idle = session(someone.id, someone.organizationId, { createdAt: at(T0 + 500), lastSeenAt: at(T0 + 500) })
        const live = session(someone.id, someone.organizationId, { createdAt: at(T0 + 500), lastSeenAt: at(T0 + 900) })
        yield* Effect.forEach([old, idle, live], store.insert)
        yield* store.purge({ createdBefore: at(T0 + 100), seenBefore: at(T0 + 600) })
        expect(yield* store.findByTokenHash(old.tokenHash)).toEqual(Option.none())
        expect(yield* store.findByTokenHash(idle.tokenHash)).toEqual(Option.none())
        expect(yield* store.findByTokenHash(live.tokenHash)).toEqual(Option.some(live))
      }).pipe(Effect.provide(layer)))
  })
