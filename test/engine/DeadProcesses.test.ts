/**
 * Dead processes found in seconds, driven by the test clock over SQLite: a process whose heartbeat is
 * 20 s stale has its in-flight destinations taken over and settled by asking the platform (found:
 * published; absent: re-queued; cannot tell: failed, outcome unknown); a long publish keeps its claim
 * by renewing its lease; a stalled process whose claims were taken over neither sends nor records.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import type { PlatformClient } from "@herald/core/platforms/Platforms"
import { ProcessInfo, ProcessStore } from "@herald/core/kernel/Processes"
import * as Processes from "@herald/core/kernel/Processes"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Engine from "./EngineHarness.js"

const newLedger = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "herald-ledger-")), "ledger.jsonl")

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices>, clients: ReadonlyArray<PlatformClient>) =>
  Effect.provide(self, Engine.layer({ clients }))

const sweeper: Dispatcher.Options = { workerId: "sweeper" }

/** A process that registered and then stopped heartbeating (it was killed). */
const registerProcess = (id: string) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    yield* (yield* ProcessStore).register(
      new ProcessInfo({ id, kind: "worker", hostname: "host", pid: 1, startedAt: now, lastHeartbeatAt: now })
    )
  })

/** `process` claims every due destination, as its dispatcher would, with the default 30 s lease. */
const claimAs = (process: string) =>
  Effect.gen(function*() {
    const store = yield* DispatchStore
    return yield* store.claimDue({ now: yield* DateTime.now, limit: 10, leaseFor: "30 seconds", workerId: process })
  })

const destinationOf = (postId: Parameters<typeof Engine.findPost>[0]) =>
  Effect.map(Engine.findPost(postId), (r) => r.destinations[0])

const ledgerFor = (ledger: string, destinationId: string) =>
  Sandbox.readLedger(ledger).filter((e) => e.destinationId === destinationId)

const processIds = Effect.flatMap(ProcessStore, (s) => Effect.map(s.list, (list) => list.map((p) => p.id)))

describe("dead processes (SQLite, test clock)", () => {
  it.effect("a process killed after the platform got the post: taken over after 20 s, found, published", () => {
    const ledger = newLedger()
    const x = Sandbox.make("x", { ledger })
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "reached the platform", platforms: ["x"] })
        yield* registerProcess("doomed")
        const [claim] = yield* claimAs("doomed")
        const account = yield* Engine.account("x")
        const sent = yield* Dispatcher.buildRequest(post, claim!.destination, account, claim!.destination.attempts)
          .pipe(
            Effect.flatMap(x.publish)
          )
        // ...and the process dies before recording anything.
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ claimed: 0, expired: 0 })
        yield* TestClock.adjust("19 seconds")
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ claimed: 0, expired: 0 })
        yield* TestClock.adjust("2 seconds")
        // Heartbeat 21 s stale (lease still 9 s to go): dead, taken over, settled by the platform.
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ claimed: 0, expired: 1, settledFound: 1 })
        const d = yield* destinationOf(post.id)
        expect([d.status, d.attempts, d.platformPostId, d.platformPostUrl, d.error]).toEqual([
          "published",
          1,
          Option.some(sent.platformPostId),
          Option.some(sent.platformPostUrl),
          Option.none()
        ])
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.published"])
        const published = (yield* Engine.eventsOf(post.id))[0]!
        expect(published.data.platform_post_id).toBe(sent.platformPostId)
        expect(ledgerFor(ledger, d.id).length).toBe(1)
        // Its claims taken over, the dead process's row is gone.
        expect(yield* processIds).toEqual([])
        // The dead process's late completion is refused.
        const late = yield* Dispatcher.record(claim!, { _tag: "Published", result: sent }, {
          post: Option.some(post),
          destinationCount: 1
        })
        expect(late).toBe("lost")
      }),
      [x]
    )
  })

  it.effect("absent on the platform: re-queued and published once; a platform that cannot tell: failed unknown", () => {
    const ledger = newLedger()
    const x = Sandbox.make("x", { ledger })
    return provide(
      Effect.gen(function*() {
        const a = yield* Engine.insertPost({ content: "never sent", platforms: ["x"] })
        // The default sandbox here keeps no ledger: it cannot speak for another process.
        const b = yield* Engine.insertPost({ content: "no ledger", platforms: ["telegram"] })
        yield* registerProcess("doomed")
        expect((yield* claimAs("doomed")).length).toBe(2)
        yield* TestClock.adjust("21 seconds")
        // Due again at once (the platform confirmed nothing went out): claimed in the same round.
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({
          expired: 2,
          settledFound: 0,
          settledAbsent: 1,
          claimed: 1,
          published: 1
        })
        const unknown = yield* destinationOf(b.post.id)
        expect([unknown.status, unknown.error]).toEqual(["failed", Option.some(Dispatcher.unknownOutcomeMessage)])
        expect(yield* Engine.eventTypes(b.post.id)).toEqual(["post.failed"])
        const published = yield* destinationOf(a.post.id)
        expect([published.status, published.attempts]).toEqual(["published", 2])
        expect(ledgerFor(ledger, published.id).map((e) => e.attempt)).toEqual([2])
        expect(yield* Engine.eventTypes(a.post.id)).toEqual(["post.publishing", "post.published"])
      }),
      [x]
    )
  })

  it.effect("absent on the last attempt: failed, not re-queued again", () => {
    const ledger = newLedger()
    const x = Sandbox.make("x", { ledger })
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "kills its workers", platforms: ["x"] })
        // Two attempts already died the same way.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE destinations SET attempts = 2 WHERE post_id = ${post.id}`
        yield* registerProcess("doomed")
        expect((yield* claimAs("doomed")).length).toBe(1)
        yield* TestClock.adjust("21 seconds")
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ expired: 1, settledAbsent: 1, claimed: 0 })
        const d = yield* destinationOf(post.id)
        expect([d.status, d.attempts, d.error]).toEqual([
          "failed",
          3,
          Option.some(`${Dispatcher.absentOutcomeMessage} (gave up after 3 attempts)`)
        ])
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.failed"])
      }),
      [x]
    )
  })

  it.effect("the loop sweeps on its own schedule: a dead process is resolved while a long round is in flight", () => {
    const ledger = newLedger()
    const base = Sandbox.make("youtube", { ledger })
    const slow: PlatformClient = {
      ...base,
      timeout: "10 minutes",
      publish: (request) => Effect.zipRight(Effect.sleep("2 minutes"), base.publish(request))
    }
    return provide(
      Effect.gen(function*() {
        const dead = yield* Engine.insertPost({ content: "held by the dead", platforms: ["x"] })
        yield* registerProcess("doomed")
        expect((yield* claimAs("doomed")).length).toBe(1)
        // This process's round is busy with a two-minute upload.
        yield* Engine.insertPost({ content: "long upload", platforms: ["youtube"] })
        const loop = yield* Effect.fork(Dispatcher.run({ workerId: "busy", pollInterval: "1 second" }))
        yield* Engine.settle()
        for (let t = 0; t < 22; t++) {
          yield* TestClock.adjust("1 second")
          yield* Engine.settle("10 millis")
        }
        // 22 s: the dead process's destination is resolved (the sandbox without a ledger cannot tell).
        const d = yield* destinationOf(dead.post.id)
        expect([d.status, d.error]).toEqual(["failed", Option.some(Dispatcher.unknownOutcomeMessage)])
        // Stopping waits for the round in flight: let the upload finish first.
        yield* TestClock.adjust("2 minutes")
        yield* Engine.settle()
        yield* Fiber.interrupt(loop)
      }),
      [slow]
    )
  })

  it.effect("a lease expired without a process row (e.g. an older worker) is taken over at 30 s too", () =>
    provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "no row", platforms: ["discord"] })
        yield* claimAs("unregistered")
        yield* TestClock.adjust("29 seconds")
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ expired: 0 })
        yield* TestClock.adjust("2 seconds")
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ expired: 1 })
        expect((yield* destinationOf(post.id)).status).toBe("failed")
      }),
      []
    ))

  it.effect("a two-minute publish keeps its 30 s claim by renewing it; nobody takes it over", () => {
    const ledger = newLedger()
    const base = Sandbox.make("youtube", { ledger })
    const slow: PlatformClient = {
      ...base,
      timeout: "10 minutes",
      publish: (request) => Effect.zipRight(Effect.sleep("2 minutes"), base.publish(request))
    }
    return provide(
      Effect.scoped(Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "long upload", platforms: ["youtube"] })
        yield* Processes.start({ id: "busy", kind: "worker", hostname: "host", pid: 2 })
        const busy = yield* Effect.fork(Dispatcher.runOnce({ workerId: "busy" }))
        yield* Engine.settle()
        expect((yield* destinationOf(post.id)).status).toBe("publishing")
        for (let t = 0; t < 23; t++) {
          yield* TestClock.adjust("5 seconds")
          yield* Engine.settle("20 millis")
          expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({ claimed: 0, expired: 0 })
        }
        expect((yield* destinationOf(post.id)).status).toBe("publishing")
        yield* TestClock.adjust("5 seconds")
        expect(yield* Fiber.join(busy)).toMatchObject({ claimed: 1, published: 1, lost: 0 })
        const d = yield* destinationOf(post.id)
        expect([d.status, d.attempts]).toEqual(["published", 1])
        expect(ledgerFor(ledger, d.id).length).toBe(1)
        expect(yield* processIds).toEqual(["busy"])
      })),
      [slow]
    )
  })

  it.effect("a stalled process is fenced: its claim taken over, it does not send, its outcome is refused", () => {
    const ledger = newLedger()
    const x = Sandbox.make("x", { ledger })
    let stalls = 1
    // Preparing the first publish (reading its media) stalls 28 s (inside the client's 30 s timeout);
    // later ones do not.
    const media = Effect.provideService(Dispatcher.DispatchMedia, {
      resolve: () => (stalls-- > 0 ? Effect.as(Effect.sleep("28 seconds"), []) : Effect.succeed([]))
    })
    return provide(
      media(Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "stalled", platforms: ["x"] })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE posts SET media_ids = ${JSON.stringify(["00000000-0000-4000-8000-000000000001"])}
          WHERE id = ${post.id}`
        // Registered, then its heartbeat stalls with the rest of it (no heartbeat fiber runs here).
        yield* registerProcess("stalled")
        const stalled = yield* Effect.fork(Dispatcher.runOnce({ workerId: "stalled" }))
        yield* Engine.settle()
        for (let t = 0; t < 4; t++) {
          yield* TestClock.adjust("5 seconds")
          yield* Engine.settle("20 millis")
        }
        yield* TestClock.adjust("1 second")
        // 21 s without a heartbeat: taken over; the platform has nothing, so it is re-queued and
        // published by the live process, on the next attempt.
        expect(yield* Dispatcher.runOnce(sweeper)).toMatchObject({
          expired: 1,
          settledAbsent: 1,
          claimed: 1,
          published: 1
        })
        // The stalled process resumes: its renewal (at 25 s) finds the claim gone, so when its media are
        // ready (at 28 s) it does not send.
        for (let t = 0; t < 2; t++) {
          yield* TestClock.adjust("5 seconds")
          yield* Engine.settle("20 millis")
        }
        expect(yield* Fiber.join(stalled)).toMatchObject({ claimed: 1, published: 0, lost: 1 })
        const d = yield* destinationOf(post.id)
        expect([d.status, d.attempts]).toEqual(["published", 2])
        // Sent once: by the live process, never by the stalled one.
        expect(Sandbox.readLedger(ledger).map((e) => [e.destinationId, e.attempt])).toEqual([[d.id, 2]])
      })),
      [x]
    )
  })
})

describe("a process cut off from its heartbeats (test clock)", () => {
  const scenario = (lastBeatAt: Effect.Effect<number>) => {
    const ledger = newLedger()
    const x = Sandbox.make("x", { ledger })
    let stalls = 1
    // Preparing the publish stalls 16 s: past the point (20 s dead-after less a 5 s margin) where a
    // process that has not heartbeat since it claimed must assume the others consider it dead.
    const media = Effect.provideService(Dispatcher.DispatchMedia, {
      resolve: () => (stalls-- > 0 ? Effect.as(Effect.sleep("16 seconds"), []) : Effect.succeed([]))
    })
    return provide(
      media(Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "cut off", platforms: ["x"] })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE posts SET media_ids = ${JSON.stringify(["00000000-0000-4000-8000-000000000001"])}
          WHERE id = ${post.id}`
        const clock = yield* Effect.clock
        const liveness = { lastBeatAt, clock, offsetMillis: Effect.succeed(0) }
        const round = yield* Effect.fork(
          Dispatcher.runOnce({ workerId: "cut-off" }).pipe(Effect.provideService(Processes.Liveness, liveness))
        )
        yield* Engine.settle()
        for (let t = 0; t < 4; t++) {
          yield* TestClock.adjust("5 seconds")
          yield* Engine.settle("20 millis")
        }
        return { summary: yield* Fiber.join(round), sent: Sandbox.readLedger(ledger).length }
      })),
      [x]
    )
  }

  it.effect("its last heartbeat 16 s old: it does not send, the destination is re-queued", () =>
    Effect.gen(function*() {
      const { sent, summary } = yield* scenario(Effect.succeed(0))
      expect(summary).toMatchObject({ claimed: 1, published: 0, requeued: 1 })
      expect(sent).toBe(0)
    }))

  it.effect("heartbeating: the same slow preparation is sent", () =>
    Effect.gen(function*() {
      const { sent, summary } = yield* scenario(Effect.map(DateTime.now, (now) => now.epochMillis))
      expect(summary).toMatchObject({ claimed: 1, published: 1 })
      expect(sent).toBe(1)
    }))
})

describe("Processes.start (test clock)", () => {
  it.effect("registers, heartbeats every 5 s, registers again when declared dead, deregisters when stopped", () =>
    Effect.provide(
      Effect.gen(function*() {
        const store = yield* ProcessStore
        const heartbeatOf = Effect.map(store.list, (list) => list.find((p) => p.id === "p1")?.lastHeartbeatAt)
        const scope = yield* Scope.make()
        yield* Processes.start({ id: "p1", kind: "serve", hostname: "host-a", pid: 7 }).pipe(Scope.extend(scope))
        const [row] = yield* store.list
        expect([row!.kind, row!.hostname, row!.pid, row!.startedAt]).toEqual([
          "serve",
          "host-a",
          7,
          yield* DateTime.now
        ])
        yield* TestClock.adjust("5 seconds")
        yield* Engine.settle("20 millis")
        expect(yield* heartbeatOf).toEqual(DateTime.unsafeMake(5_000))
        // Another process's sweep removed the row (this one looked dead): the next heartbeat re-registers.
        expect(yield* store.removeDead(DateTime.unsafeMake(6_000))).toEqual(["p1"])
        yield* TestClock.adjust("5 seconds")
        yield* Engine.settle("20 millis")
        expect(yield* heartbeatOf).toEqual(DateTime.unsafeMake(10_000))
        yield* Scope.close(scope, Exit.void)
        expect(yield* store.list).toEqual([])
      }),
      Engine.layer()
    ))
})
