/**
 * The IdempotencyStore contract: one holder per organization and key (also under concurrent
 * takers), answers recorded and read back byte for byte, completion and release fenced by the
 * holder, an expired record replaced, and pruning of expired records only.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as SqlClient from "@effect/sql/SqlClient"
import { type IdempotencyClaim, IdempotencyStore } from "@herald/core/access/IdempotencyStore"
import { OrganizationId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import type { Stores } from "../../src/sql/SqlStores.js"
import { at, type StoresLayer, T0 } from "./Fixtures.js"

const DAY = 86_400_000

const claim = (overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
  organizationId: OrganizationId.make(randomUUID()),
  key: `key-${randomUUID()}`,
  fingerprint: "f".repeat(64),
  holder: randomUUID(),
  startedAt: at(T0),
  expiresAt: at(T0 + DAY),
  ...overrides
})

/** A body with what must survive the round trip exactly: non-ASCII, escapes, a long run. */
const body = `{"data":{"content":"naïve ✓ \\u2028 \\"quoted\\"","x":"${"y".repeat(5000)}"},"error":null}`

export const idempotencyStoreContract = (
  layer: StoresLayer,
  concurrentLayer: Layer.Layer<Stores | SqlClient.SqlClient, unknown> = layer
) =>
  describe("IdempotencyStore", () => {
    it.effect("the first taker holds a key; another sees it in flight; its answer is then read back exactly", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const first = claim()
        expect(yield* store.begin(first)).toEqual({ _tag: "Started" })
        const second = { ...first, holder: randomUUID(), fingerprint: "0".repeat(64), startedAt: at(T0 + 5) }
        expect(yield* store.begin(second)).toEqual({
          _tag: "Existing",
          record: { _tag: "InFlight", fingerprint: first.fingerprint, startedAt: at(T0) }
        })
        // Only the holder records the answer.
        expect(yield* store.complete(second, { status: 500, body: "other" })).toBe(false)
        expect(yield* store.complete(first, { status: 201, body })).toBe(true)
        expect(yield* store.complete(first, { status: 201, body: "again" })).toBe(false)
        expect(yield* store.begin(second)).toEqual({
          _tag: "Existing",
          record: {
            _tag: "Completed",
            fingerprint: first.fingerprint,
            startedAt: at(T0),
            answer: { status: 201, body }
          }
        })
        // A completed key is not freed by its holder's release.
        yield* store.release(first)
        expect((yield* store.begin(second))._tag).toBe("Existing")
      }).pipe(Effect.provide(layer)))

    it.effect("release frees a key held without an answer, only by its holder", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const first = claim()
        expect(yield* store.begin(first)).toEqual({ _tag: "Started" })
        yield* store.release({ ...first, holder: randomUUID() })
        expect((yield* store.begin({ ...first, holder: randomUUID() }))._tag).toBe("Existing")
        yield* store.release(first)
        const next = { ...first, holder: randomUUID(), fingerprint: "1".repeat(64) }
        expect(yield* store.begin(next)).toEqual({ _tag: "Started" })
        // The earlier holder can no longer record an answer for it.
        expect(yield* store.complete(first, { status: 201, body: "late" })).toBe(false)
        expect(yield* store.complete(next, { status: 201, body: "mine" })).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("a key is per organization", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const a = claim()
        const b = claim({ key: a.key })
        expect(yield* store.begin(a)).toEqual({ _tag: "Started" })
        expect(yield* store.begin(b)).toEqual({ _tag: "Started" })
        expect(yield* store.complete(a, { status: 201, body: "a" })).toBe(true)
        expect(yield* store.complete(b, { status: 200, body: "b" })).toBe(true)
        const read = (c: IdempotencyClaim) => store.begin({ ...c, holder: randomUUID() })
        expect(yield* read(a)).toMatchObject({ record: { answer: { status: 201, body: "a" } } })
        expect(yield* read(b)).toMatchObject({ record: { answer: { status: 200, body: "b" } } })
      }).pipe(Effect.provide(layer)))

    it.effect("an expired record counts as absent and is replaced; its holder has lost the key", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const old = claim()
        expect(yield* store.begin(old)).toEqual({ _tag: "Started" })
        // One millisecond before expiry it still counts.
        const early = { ...old, holder: randomUUID(), startedAt: at(T0 + DAY - 1), expiresAt: at(T0 + 2 * DAY - 1) }
        expect((yield* store.begin(early))._tag).toBe("Existing")
        const later = { ...old, holder: randomUUID(), fingerprint: "2".repeat(64), startedAt: at(T0 + DAY) }
        const fresh = { ...later, expiresAt: at(T0 + 2 * DAY) }
        expect(yield* store.begin(fresh)).toEqual({ _tag: "Started" })
        expect(yield* store.complete(old, { status: 201, body: "old" })).toBe(false)
        expect(yield* store.begin({ ...fresh, holder: randomUUID() })).toEqual({
          _tag: "Existing",
          record: { _tag: "InFlight", fingerprint: fresh.fingerprint, startedAt: at(T0 + DAY) }
        })
      }).pipe(Effect.provide(layer)))

    it.effect("of concurrent takers of one key exactly one holds it", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const base = claim()
        const results = yield* Effect.forEach(
          Array.from({ length: 8 }, () => ({ ...base, holder: randomUUID() })),
          (c) => store.begin(c),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Started")).toHaveLength(1)
        expect(results.filter((r) => r._tag === "Existing" && r.record._tag === "InFlight")).toHaveLength(7)
      }).pipe(Effect.provide(concurrentLayer)))

    it.effect("prune removes expired records only, up to the limit", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const organizationId = OrganizationId.make(randomUUID())
        const expired = [1, 2, 3].map((i) => claim({ organizationId, expiresAt: at(T0 + i) }))
        const live = claim({ organizationId, expiresAt: at(T0 + DAY) })
        for (const c of [...expired, live]) expect(yield* store.begin(c)).toEqual({ _tag: "Started" })
        expect(yield* store.complete(expired[0]!, { status: 201, body: "done" })).toBe(true)
        expect(yield* store.prune(at(T0 + 10), 2)).toBe(2)
        expect(yield* store.prune(at(T0 + 10), 2)).toBe(1)
        expect(yield* store.prune(at(T0 + 10), 2)).toBe(0)
        // The live one is still held.
        expect((yield* store.begin({ ...live, holder: randomUUID(), startedAt: at(T0 + 10) }))._tag).toBe("Existing")
      }).pipe(Effect.provide(layer)))
  })
