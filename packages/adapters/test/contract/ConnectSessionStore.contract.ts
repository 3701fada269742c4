import { describe, expect, it } from "@effect/vitest"
import { ConnectSession, ConnectSessionId, ConnectSessionStore } from "@herald/core/accounts/ConnectSessionStore"
import { AccountId, type OrganizationId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, givenOrganization, type StoresLayer, T0 } from "./Fixtures.js"

export const connectSession = (
  organizationId: OrganizationId,
  overrides: Partial<ConstructorParameters<typeof ConnectSession>[0]> = {}
) =>
  new ConnectSession({
    id: ConnectSessionId.make(randomUUID()),
    organizationId,
    platform: "x",
    nonce: randomUUID().replace(/-/g, ""),
    reconnectAccountId: Option.none(),
    status: "pending",
    accountId: Option.none(),
    reason: Option.none(),
    expiresAt: at(T0 + 600_000),
    settledAt: Option.none(),
    createdAt: at(T0),
    ...overrides
  })

export const connectSessionStoreContract = (layer: StoresLayer) =>
  describe("ConnectSessionStore", () => {
    it.effect("inserts and finds sessions within their organization only, every field intact", () =>
      Effect.gen(function*() {
        const store = yield* ConnectSessionStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const session = connectSession(org.id, {
          platform: "linkedin",
          reconnectAccountId: Option.some(AccountId.make(12))
        })
        yield* store.insert(session)
        expect(yield* store.findById(org.id, session.id)).toEqual(Option.some(session))
        expect(yield* store.findById(other.id, session.id)).toEqual(Option.none())
        expect(yield* store.findById(org.id, ConnectSessionId.make(randomUUID()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("purges sessions that expired before the given instant", () =>
      Effect.gen(function*() {
        const store = yield* ConnectSessionStore
        const org = yield* givenOrganization
        const old = connectSession(org.id, { expiresAt: at(T0 - 1) })
        const current = connectSession(org.id, { expiresAt: at(T0) })
        yield* store.insert(old)
        yield* store.insert(current)
        expect(yield* store.purgeExpired(at(T0))).toBeGreaterThanOrEqual(1)
        expect(yield* store.findById(org.id, old.id)).toEqual(Option.none())
        expect(Option.isSome(yield* store.findById(org.id, current.id))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("settles a pending session by its nonce once: completed with the account, or cancelled with why", () =>
      Effect.gen(function*() {
        const store = yield* ConnectSessionStore
        const org = yield* givenOrganization
        const completed = connectSession(org.id)
        const cancelled = connectSession(org.id)
        yield* store.insert(completed)
        yield* store.insert(cancelled)
        expect(yield* store.settle(completed.nonce, { status: "completed", accountId: AccountId.make(7) }, at(T0 + 5)))
          .toBe(true)
        expect(yield* store.settle(completed.nonce, { status: "cancelled", reason: "late" }, at(T0 + 6))).toBe(false)
        expect(yield* store.settle(cancelled.nonce, { status: "cancelled", reason: "access_denied" }, at(T0 + 7)))
          .toBe(true)
        expect(yield* store.settle("no-such-nonce", { status: "cancelled", reason: "x" }, at(T0))).toBe(false)
        const done = Option.getOrThrow(yield* store.findById(org.id, completed.id))
        expect(done.status).toBe("completed")
        expect(done.accountId).toEqual(Option.some(AccountId.make(7)))
        expect(done.settledAt).toEqual(Option.some(at(T0 + 5)))
        const refused = Option.getOrThrow(yield* store.findById(org.id, cancelled.id))
        expect(refused.status).toBe("cancelled")
        expect(refused.reason).toEqual(Option.some("access_denied"))
        expect(refused.accountId).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))
  })
