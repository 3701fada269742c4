import { describe, expect, it } from "@effect/vitest"
import {
  DeviceAuthorization,
  DeviceAuthorizationId,
  DeviceAuthorizationStore
} from "@herald/core/access/DeviceAuthorizationStore"
import { ApiKeyId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { at, givenOrganization, type StoresLayer, T0 } from "./Fixtures.js"

const hash = () => randomUUID().replace(/-/g, "") + randomUUID().replace(/-/g, "")

export const deviceAuthorization = (overrides: Partial<ConstructorParameters<typeof DeviceAuthorization>[0]> = {}) =>
  new DeviceAuthorization({
    id: DeviceAuthorizationId.make(randomUUID()),
    deviceCodeHash: hash(),
    userCodeHash: hash(),
    clientName: Option.some("cli"),
    status: "pending",
    organizationId: Option.none(),
    apiKeyId: Option.none(),
    intervalSeconds: 5,
    lastPolledAt: Option.none(),
    expiresAt: at(T0 + 600_000),
    decidedAt: Option.none(),
    createdAt: at(T0),
    ...overrides
  })

export const deviceAuthorizationStoreContract = (layer: StoresLayer) =>
  describe("DeviceAuthorizationStore", () => {
    it.effect("inserts and finds by either code's hash, every field intact; records polls", () =>
      Effect.gen(function*() {
        const store = yield* DeviceAuthorizationStore
        const anonymous = deviceAuthorization({ clientName: Option.none() })
        const named = deviceAuthorization()
        yield* store.insert(anonymous)
        yield* store.insert(named)
        expect(yield* store.findByDeviceCodeHash(named.deviceCodeHash)).toEqual(Option.some(named))
        expect(yield* store.findByUserCodeHash(anonymous.userCodeHash)).toEqual(Option.some(anonymous))
        expect(yield* store.findByDeviceCodeHash(named.userCodeHash)).toEqual(Option.none())
        yield* store.recordPoll(named.id, at(T0 + 5))
        const polled = yield* store.findByDeviceCodeHash(named.deviceCodeHash)
        expect(Option.flatMap(polled, (a) => a.lastPolledAt)).toEqual(Option.some(at(T0 + 5)))
      }).pipe(Effect.provide(layer)))

    it.effect("decides a pending request once, and never after its expiry", () =>
      Effect.gen(function*() {
        const store = yield* DeviceAuthorizationStore
        const org = yield* givenOrganization
        const request = deviceAuthorization()
        const late = deviceAuthorization()
        yield* store.insert(request)
        yield* store.insert(late)
        expect(yield* store.decide(request.id, { status: "authorized", organizationId: org.id }, at(T0 + 10))).toBe(
          true
        )
        expect(yield* store.decide(request.id, { status: "denied" }, at(T0 + 11))).toBe(false)
        const found = Option.getOrThrow(yield* store.findByDeviceCodeHash(request.deviceCodeHash))
        expect(found.status).toBe("authorized")
        expect(found.organizationId).toEqual(Option.some(org.id))
        expect(found.decidedAt).toEqual(Option.some(at(T0 + 10)))
        expect(yield* store.decide(late.id, { status: "denied" }, at(T0 + 600_000))).toBe(false)
        expect(Option.getOrThrow(yield* store.findByDeviceCodeHash(late.deviceCodeHash)).status).toBe("pending")
      }).pipe(Effect.provide(layer)))

    it.effect("consumes an authorized request exactly once, and never a pending or denied one", () =>
      Effect.gen(function*() {
        const store = yield* DeviceAuthorizationStore
        const org = yield* givenOrganization
        const request = deviceAuthorization()
        const pending = deviceAuthorization()
        yield* store.insert(request)
        yield* store.insert(pending)
        const keyId = ApiKeyId.make(randomUUID())
        expect(yield* store.consume(request.id, keyId, at(T0))).toBe(false)
        yield* store.decide(request.id, { status: "authorized", organizationId: org.id }, at(T0))
        const racing = yield* Effect.all(
          [
            store.consume(request.id, keyId, at(T0 + 1)),
            store.consume(request.id, ApiKeyId.make(randomUUID()), at(T0 + 1))
          ],
          { concurrency: 2 }
        )
        expect(racing.filter(Boolean)).toHaveLength(1)
        const found = Option.getOrThrow(yield* store.findByDeviceCodeHash(request.deviceCodeHash))
        expect(found.status).toBe("consumed")
        expect(Option.isSome(found.apiKeyId)).toBe(true)
        expect(yield* store.consume(pending.id, keyId, at(T0))).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("purges requests that expired before the given instant, whatever their status", () =>
      Effect.gen(function*() {
        const store = yield* DeviceAuthorizationStore
        const org = yield* givenOrganization
        const old = deviceAuthorization({ expiresAt: at(T0 - 1) })
        const oldApproved = deviceAuthorization({ expiresAt: at(T0 - 2) })
        const current = deviceAuthorization({ expiresAt: at(T0) })
        for (const a of [old, oldApproved, current]) yield* store.insert(a)
        yield* store.decide(oldApproved.id, { status: "authorized", organizationId: org.id }, at(T0 - 10))
        expect(yield* store.purgeExpired(at(T0))).toBeGreaterThanOrEqual(2)
        expect(yield* store.findByDeviceCodeHash(old.deviceCodeHash)).toEqual(Option.none())
        expect(yield* store.findByDeviceCodeHash(oldApproved.deviceCodeHash)).toEqual(Option.none())
        expect(Option.isSome(yield* store.findByDeviceCodeHash(current.deviceCodeHash))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("refuses a second request with the same code hash", () =>
      Effect.gen(function*() {
        const store = yield* DeviceAuthorizationStore
        const first = deviceAuthorization()
        yield* store.insert(first)
        const error = yield* Effect.flip(store.insert(deviceAuthorization({ userCodeHash: first.userCodeHash })))
        expect(error._tag).toBe("PersistenceError")
      }).pipe(Effect.provide(layer)))
  })
