import { describe, expect, it } from "@effect/vitest"
import { ProcessInfo, ProcessStore } from "@herald/core/kernel/Processes"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { at, type StoresLayer, T0 } from "./Fixtures.js"

const proc = (id: string, heartbeat: number, kind: "serve" | "worker" = "worker") =>
  new ProcessInfo({ id, kind, hostname: "host-a", pid: 4242, startedAt: at(T0), lastHeartbeatAt: at(heartbeat) })

export const processStoreContract = (layer: StoresLayer, options: { readonly databaseClock?: boolean } = {}) =>
  describe("ProcessStore", () => {
    it.effect("registers, heartbeats, lists and deregisters processes", () =>
      Effect.gen(function*() {
        const store = yield* ProcessStore
        yield* store.register(proc("w1", T0))
        yield* store.register(proc("s1", T0, "serve"))
        expect(yield* store.list).toEqual([proc("s1", T0, "serve"), proc("w1", T0)])
        expect(yield* store.heartbeat("w1", at(T0 + 5_000))).toBe(true)
        expect((yield* store.list).find((p) => p.id === "w1")?.lastHeartbeatAt).toEqual(at(T0 + 5_000))
        // Registering again (after being declared dead) refreshes the heartbeat, keeps the row.
        yield* store.register(proc("w1", T0 + 9_000))
        expect((yield* store.list).filter((p) => p.id === "w1").map((p) => p.lastHeartbeatAt)).toEqual([at(T0 + 9_000)])
        yield* store.deregister("w1")
        expect(yield* store.heartbeat("w1", at(T0 + 10_000))).toBe(false)
        expect((yield* store.list).map((p) => p.id)).toEqual(["s1"])
      }).pipe(Effect.provide(layer)))

    it.effect("removeDead removes stale processes only", () =>
      Effect.gen(function*() {
        const store = yield* ProcessStore
        yield* store.register(proc("stale", T0))
        yield* store.register(proc("fresh", T0 + 30_000))
        expect(yield* store.removeDead(at(T0))).toEqual([])
        expect(yield* store.removeDead(at(T0 + 20_000))).toEqual(["stale"])
        expect((yield* store.list).map((p) => p.id)).toEqual(["fresh"])
      }).pipe(Effect.provide(layer)))

    it.live(
      options.databaseClock === true
        ? "databaseTime reads the database's own clock (wall time, not the caller's)"
        : "databaseTime is none: the store has no clock of its own",
      () =>
        Effect.gen(function*() {
          const store = yield* ProcessStore
          const before = Date.now()
          const time = yield* store.databaseTime
          const after = Date.now()
          if (options.databaseClock !== true) {
            expect(Option.isNone(time)).toBe(true)
            return
          }
          expect(Option.isSome(time)).toBe(true)
          const ms = Option.isSome(time) ? DateTime.toEpochMillis(time.value) : 0
          // Same host in the tests: within a second of the wall clock around the call.
          expect(ms).toBeGreaterThan(before - 1_000)
          expect(ms).toBeLessThan(after + 1_000)
        }).pipe(Effect.provide(layer))
    )
  })
