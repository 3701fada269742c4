import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Destination } from "@herald/core/domain/Destination"
import { type Claim, DispatchStore } from "@herald/core/publishing/DispatchStore"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import { PostStore } from "@herald/core/posts/PostStore"
import { ProcessInfo, ProcessStore } from "@herald/core/kernel/Processes"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { accountValue, at, destination, givenOrganization, post, type StoresLayer, T0 } from "./Fixtures.js"

const minute = 60_000

/** Inserts one post per destination spec, each destination on its own post. */
const givenDestinations = (
  organizationId: OrganizationId,
  specs: ReadonlyArray<Partial<ConstructorParameters<typeof Destination>[0]>>
) =>
  Effect.gen(function*() {
    const posts = yield* PostStore
    const out: Array<Destination> = []
    for (const spec of specs) {
      const p = post(organizationId)
      const d = destination({ post: p, account: accountValue(organizationId, 1) }, spec)
      yield* posts.insert({ post: p, destinations: [d] })
      out.push(d)
    }
    return out
  })

const reload = (d: Destination) =>
  Effect.gen(function*() {
    const found = yield* (yield* PostStore).findById(d.organizationId, d.postId)
    return Option.getOrThrow(found).destinations.find((x) => x.id === d.id)!
  })

const leaseOf = (d: Destination) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ lease_token: string | null; leased_by: string | null; lease_expires_at: unknown }>`
      SELECT lease_token, leased_by, lease_expires_at FROM destinations WHERE id = ${d.id}`
    const row = rows[0]!
    return {
      token: row.lease_token,
      by: row.leased_by,
      expiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at)
    }
  })

const claim = (now: number, limit: number, workerId = "w1") =>
  Effect.flatMap(DispatchStore, (store) => store.claimDue({ now: at(now), limit, leaseFor: "1 minute", workerId }))

export const dispatchStoreContract = (layer: StoresLayer, concurrentLayer: StoresLayer) =>
  describe("DispatchStore", () => {
    it.effect("claims only due queued destinations, oldest due first, up to the limit", () =>
      Effect.gen(function*() {
        const org = yield* givenOrganization
        const [d3, d1, d2, future, published, failed, publishing] = yield* givenDestinations(org.id, [
          { dueAt: at(T0 - 3) },
          { dueAt: at(T0 - 1) },
          { dueAt: at(T0 - 2) },
          { dueAt: at(T0 + 100) },
          { dueAt: at(T0 - 10), status: "published" },
          { dueAt: at(T0 - 10), status: "failed" },
          { dueAt: at(T0 - 10), status: "publishing" }
        ])
        const first = yield* claim(T0, 2, "worker-a")
        expect(first.map((c) => c.destination.id)).toEqual([d3!.id, d2!.id])
        for (const c of first) {
          expect(c.destination.status).toBe("publishing")
          expect(c.destination.attempts).toBe(1)
          expect(c.leaseExpiresAt).toEqual(at(T0 + minute))
          expect(yield* reload(c.destination)).toEqual(c.destination)
          expect(yield* leaseOf(c.destination)).toEqual({ token: c.leaseToken, by: "worker-a", expiresAt: T0 + minute })
        }
        expect(first[0]!.leaseToken).not.toBe(first[1]!.leaseToken)
        // Due exactly now counts as due.
        const second = yield* claim(T0 - 1, 10)
        expect(second.map((c) => c.destination.id)).toEqual([d1!.id])
        expect(yield* claim(T0 + 99, 10)).toEqual([])
        expect(yield* claim(T0 + 1000, 0)).toEqual([])
        for (const untouched of [future, published, failed, publishing]) {
          expect(yield* reload(untouched!)).toEqual(untouched)
        }
      }).pipe(Effect.provide(layer)))

    it.effect("completion is fenced by lease token and attempt", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0) }])
        const [c] = yield* claim(T0, 1)
        const held = yield* reload(c!.destination)
        const published = {
          _tag: "Published",
          platformPostId: "p1",
          platformPostUrl: "https://x.com/p1",
          publishedAt: at(T0 + 5)
        } as const
        const wrongToken: Claim = { ...c!, leaseToken: "someone-else" }
        expect(yield* store.complete(wrongToken, published)).toBe(false)
        const stale: Claim = {
          ...c!,
          destination: new Destination({ ...c!.destination, attempts: c!.destination.attempts - 1 })
        }
        expect(yield* store.complete(stale, published)).toBe(false)
        expect(yield* reload(c!.destination)).toEqual(held)
        expect(yield* store.complete(c!, published)).toBe(true)
        // The claim is spent: a second completion writes nothing.
        expect(yield* store.complete(c!, { _tag: "Failed", error: "late", failedAt: at(T0 + 9) })).toBe(false)
        const done = yield* reload(c!.destination)
        expect(done.status).toBe("published")
      }).pipe(Effect.provide(layer)))

    it.effect("completeAll writes a batch in one go, each member fenced alone", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [
          { dueAt: at(T0 - 4) },
          { dueAt: at(T0 - 3), error: Option.some("earlier failure") },
          { dueAt: at(T0 - 2) },
          { dueAt: at(T0 - 1) }
        ])
        const [published, requeued, failed, lost] = yield* claim(T0, 4)
        const lostBefore = yield* reload(lost!.destination)
        const written = yield* store.completeAll([
          {
            claim: published!,
            completion: {
              _tag: "Published",
              platformPostId: "p1",
              platformPostUrl: "https://x.com/p1",
              publishedAt: at(T0 + 5)
            }
          },
          { claim: requeued!, completion: { _tag: "Requeued", error: "try later", dueAt: at(T0 + 60_000) } },
          { claim: failed!, completion: { _tag: "Failed", error: "refused", failedAt: at(T0 + 7) } },
          {
            claim: { ...lost!, leaseToken: "taken-over" },
            completion: { _tag: "Failed", error: "late", failedAt: at(T0 + 8) }
          }
        ])
        expect(written).toEqual([true, true, true, false])
        const p = yield* reload(published!.destination)
        expect([p.status, p.error, p.platformPostId, p.platformPostUrl, p.publishedAt, p.failedAt, p.dueAt]).toEqual([
          "published",
          Option.none(),
          Option.some("p1"),
          Option.some("https://x.com/p1"),
          Option.some(at(T0 + 5)),
          Option.none(),
          at(T0 - 4)
        ])
        const r = yield* reload(requeued!.destination)
        expect([r.status, r.error, r.dueAt, r.attempts, r.platformPostId, r.failedAt]).toEqual([
          "queued",
          Option.some("try later"),
          at(T0 + 60_000),
          1,
          Option.none(),
          Option.none()
        ])
        const f = yield* reload(failed!.destination)
        expect([f.status, f.error, f.failedAt, f.publishedAt, f.dueAt]).toEqual([
          "failed",
          Option.some("refused"),
          Option.some(at(T0 + 7)),
          Option.none(),
          at(T0 - 2)
        ])
        for (const d of [p, r, f]) expect(yield* leaseOf(d)).toEqual({ token: null, by: null, expiresAt: null })
        // The lost member is untouched and still held by its real claim, which can complete it.
        expect(yield* reload(lost!.destination)).toEqual(lostBefore)
        expect(yield* store.completeAll([])).toEqual([])
        expect(
          yield* store.completeAll([{ claim: lost!, completion: { _tag: "Failed", error: "x", failedAt: at(T0 + 9) } }])
        )
          .toEqual([true])
      }).pipe(Effect.provide(layer)))

    it.effect("completeAll writes any text as given: quotes, backslashes, JSON-like text, line breaks, non-ASCII", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0 - 2) }, { dueAt: at(T0 - 1) }, { dueAt: at(T0) }])
        const [published, failed, broken] = yield* claim(T0, 3)
        const id = `"quoted" \\ {"json": [1, null]} 'single' ${"\n"}line — ünïcode 🚀 $1 %s`
        const error = `refused: {"error":{"message":"bad \\"token\\"","code":190}}\r\n\ttab — 日本語 🙅`
        // A lone surrogate is not valid UTF-8: the write must still succeed.
        const lone = `x\uD800y`
        const written = yield* store.completeAll([
          {
            claim: published!,
            completion: {
              _tag: "Published",
              platformPostId: id,
              platformPostUrl: `https://x.com/${id}`,
              publishedAt: at(T0 + 1)
            }
          },
          { claim: failed!, completion: { _tag: "Failed", error, failedAt: at(T0 + 2) } },
          { claim: broken!, completion: { _tag: "Failed", error: lone, failedAt: at(T0 + 3) } }
        ])
        expect(written).toEqual([true, true, true])
        const p = yield* reload(published!.destination)
        expect([p.platformPostId, p.platformPostUrl]).toEqual([Option.some(id), Option.some(`https://x.com/${id}`)])
        expect((yield* reload(failed!.destination)).error).toEqual(Option.some(error))
        // What the pg driver makes of it as a bind parameter (U+FFFD), also through the JSON parameter.
        const sql = yield* SqlClient.SqlClient
        const stored = (yield* reload(broken!.destination)).error
        if (sql.onDialectOrElse({ pg: () => true, orElse: () => false })) {
          expect(stored).toEqual(Option.some(Buffer.from(lone).toString("utf8")))
        } else expect(Option.isSome(stored)).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("Published records the platform post and clears the lease and error", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0), error: Option.some("earlier failure") }])
        const [c] = yield* claim(T0, 1)
        const ok = yield* store.complete(c!, {
          _tag: "Published",
          platformPostId: "1789",
          platformPostUrl: "https://x.com/acme/status/1789",
          publishedAt: at(T0 + 500)
        })
        expect(ok).toBe(true)
        const d = yield* reload(c!.destination)
        expect([d.status, d.attempts, d.error, d.platformPostId, d.platformPostUrl, d.publishedAt]).toEqual([
          "published",
          1,
          Option.none(),
          Option.some("1789"),
          Option.some("https://x.com/acme/status/1789"),
          Option.some(at(T0 + 500))
        ])
        expect(yield* leaseOf(d)).toEqual({ token: null, by: null, expiresAt: null })
      }).pipe(Effect.provide(layer)))

    it.effect("Requeued makes it due again later; the old claim cannot complete the new attempt", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0) }])
        const [c] = yield* claim(T0, 1)
        expect(yield* store.complete(c!, { _tag: "Requeued", error: "503 from platform", dueAt: at(T0 + 30_000) }))
          .toBe(true)
        const requeued = yield* reload(c!.destination)
        expect([requeued.status, requeued.dueAt, requeued.error, requeued.attempts]).toEqual([
          "queued",
          at(T0 + 30_000),
          Option.some("503 from platform"),
          1
        ])
        expect(yield* leaseOf(requeued)).toEqual({ token: null, by: null, expiresAt: null })
        expect(yield* claim(T0 + 29_999, 10)).toEqual([])
        const [again] = yield* claim(T0 + 30_000, 10)
        expect(again!.destination.attempts).toBe(2)
        expect(yield* store.complete(c!, { _tag: "Failed", error: "stale", failedAt: at(T0) })).toBe(false)
        expect(yield* store.complete(again!, { _tag: "Failed", error: "gave up", failedAt: at(T0 + 31_000) }))
          .toBe(true)
        const failed = yield* reload(c!.destination)
        expect([failed.status, failed.error, failed.failedAt, failed.attempts]).toEqual([
          "failed",
          Option.some("gave up"),
          Option.some(at(T0 + 31_000)),
          2
        ])
        expect(yield* leaseOf(failed)).toEqual({ token: null, by: null, expiresAt: null })
        expect(yield* claim(T0 + 100_000, 10)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("expiredClaims returns publishing destinations whose lease ran out, with their lease", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0) }, { dueAt: at(T0 + 1) }, { dueAt: at(T0 + 2) }])
        const early = yield* store.claimDue({ now: at(T0), limit: 1, leaseFor: "1 minute", workerId: "w" })
        const late = yield* store.claimDue({ now: at(T0 + 10), limit: 2, leaseFor: "5 minutes", workerId: "w" })
        expect(yield* store.expiredClaims(at(T0 + minute), 10)).toEqual([])
        expect(yield* store.expiredClaims(at(T0 + minute + 1), 10)).toEqual(early)
        const all = yield* store.expiredClaims(at(T0 + 10 * minute), 10)
        // Oldest lease first; equal leases by id.
        const byId = (a: Claim, b: Claim) => (a.destination.id < b.destination.id ? -1 : 1)
        expect(all).toEqual([...early, ...[...late].sort(byId)])
        expect(yield* store.expiredClaims(at(T0 + 10 * minute), 2)).toEqual(all.slice(0, 2))
        // A recovered claim is still a valid fence.
        expect(yield* store.complete(all[0]!, { _tag: "Failed", error: "worker died", failedAt: at(T0) })).toBe(true)
        expect(yield* store.expiredClaims(at(T0 + 10 * minute), 10)).toEqual([...late].sort(byId))
      }).pipe(Effect.provide(layer)))

    it.effect("claims record when they were claimed; renew extends only leases still held", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0) }, { dueAt: at(T0 + 1) }])
        const [a, b] = yield* claim(T0 + 5, 10)
        expect(a!.claimedAt).toEqual(at(T0 + 5))
        expect(yield* store.renew([], at(T0))).toEqual(new Set())
        // b is completed: its lease is gone and cannot be renewed.
        expect(yield* store.complete(b!, { _tag: "Failed", error: "x", failedAt: at(T0 + 6) })).toBe(true)
        const renewed = yield* store.renew([a!, b!, { ...a!, leaseToken: "not-a-token" }], at(T0 + 10 * minute))
        expect(renewed).toEqual(new Set([a!.leaseToken]))
        expect(yield* leaseOf(a!.destination)).toEqual({ token: a!.leaseToken, by: "w1", expiresAt: T0 + 10 * minute })
        // Renewed: not expired at the original lease end.
        expect(yield* store.expiredClaims(at(T0 + 2 * minute), 10)).toEqual([])
        // The renewed claim still completes (same token and attempt).
        expect(yield* store.complete(a!, { _tag: "Failed", error: "y", failedAt: at(T0 + 7) })).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("takeOverAbandoned takes expired leases and dead holders' claims, fencing the old holder", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const processes = yield* ProcessStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0) }, { dueAt: at(T0 + 1) }, { dueAt: at(T0 + 2) }])
        const beat = (id: string, heartbeat: number) =>
          processes.register(
            new ProcessInfo({
              id,
              kind: "worker",
              hostname: "h",
              pid: 1,
              startedAt: at(T0),
              lastHeartbeatAt: at(heartbeat)
            })
          )
        yield* beat("dead", T0)
        yield* beat("alive", T0 + 50_000)
        const [expiring] = yield* store.claimDue({ now: at(T0), limit: 1, leaseFor: "10 seconds", workerId: "alive" })
        const [deadHeld] = yield* store.claimDue({ now: at(T0 + 1), limit: 1, leaseFor: "1 minute", workerId: "dead" })
        const [aliveHeld] = yield* store.claimDue({
          now: at(T0 + 2),
          limit: 1,
          leaseFor: "1 minute",
          workerId: "alive"
        })
        const takeOver = (now: number, deadBefore: number, limit = 10) =>
          store.takeOverAbandoned({
            now: at(now),
            deadBefore: at(deadBefore),
            limit,
            leaseFor: "30 seconds",
            workerId: "sweeper"
          })
        // Nothing abandoned yet: leases live, heartbeats fresh enough.
        expect(yield* takeOver(T0 + 5_000, T0 - 1)).toEqual([])
        // The dead holder's heartbeat is stale: taken over before its lease ran out.
        const first = yield* takeOver(T0 + 5_000, T0 + 1)
        expect(first.map((c) => c.destination.id)).toEqual([deadHeld!.destination.id])
        const taken = first[0]!
        expect(taken.leaseToken).not.toBe(deadHeld!.leaseToken)
        expect(taken.destination.attempts).toBe(deadHeld!.destination.attempts)
        expect(taken.claimedAt).toEqual(at(T0 + 1))
        expect(taken.leaseExpiresAt).toEqual(at(T0 + 35_000))
        expect(yield* leaseOf(taken.destination)).toMatchObject({ by: "sweeper", expiresAt: T0 + 35_000 })
        // Taken once: a second sweep does not take it again while the sweeper's lease lives.
        expect((yield* takeOver(T0 + 6_000, T0 + 1)).map((c) => c.destination.id)).toEqual([])
        // Later the expired lease is taken too; the live holder's claim is left alone.
        const second = yield* takeOver(T0 + 11_000, T0 + 1)
        expect(second.map((c) => c.destination.id)).toEqual([expiring!.destination.id])
        // The old holders are fenced off; the sweeper's claims complete.
        const done = {
          _tag: "Published",
          platformPostId: "1",
          platformPostUrl: "u",
          publishedAt: at(T0 + 12_000)
        } as const
        expect(yield* store.complete(deadHeld!, done)).toBe(false)
        expect(yield* store.complete(expiring!, done)).toBe(false)
        expect(yield* store.renew([deadHeld!, expiring!], at(T0 + 60_000))).toEqual(new Set())
        expect(yield* store.complete(taken, done)).toBe(true)
        expect(yield* store.complete(second[0]!, done)).toBe(true)
        expect(yield* store.complete(aliveHeld!, done)).toBe(true)
        // Its claims taken over, the dead process's row is removed; the live one stays.
        expect(yield* processes.removeDead(at(T0 + 1))).toEqual(["dead"])
        expect((yield* processes.list).map((p) => p.id)).toEqual(["alive"])
      }).pipe(Effect.provide(layer)))

    it.effect("removeDead keeps a stale process that still holds a destination in flight", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        const processes = yield* ProcessStore
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [{ dueAt: at(T0) }])
        yield* processes.register(
          new ProcessInfo({
            id: "dead",
            kind: "worker",
            hostname: "h",
            pid: 1,
            startedAt: at(T0),
            lastHeartbeatAt: at(T0)
          })
        )
        yield* store.claimDue({ now: at(T0), limit: 1, leaseFor: "1 minute", workerId: "dead" })
        expect(yield* processes.removeDead(at(T0 + 1))).toEqual([])
        expect((yield* processes.list).map((p) => p.id)).toEqual(["dead"])
      }).pipe(Effect.provide(layer)))

    it.live("concurrent sweepers take each abandoned destination exactly once", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        const account = accountValue(org.id, 1)
        for (let i = 0; i < 5; i++) {
          const p = post(org.id)
          yield* posts.insert({
            post: p,
            destinations: Array.from({ length: 100 }, () => destination({ post: p, account }, { dueAt: at(T0) }))
          })
        }
        let held = 0
        while (true) {
          const batch = yield* store.claimDue({ now: at(T0), limit: 100, leaseFor: "1 second", workerId: "dead" })
          if (batch.length === 0) break
          held += batch.length
        }
        expect(held).toBe(500)
        const sweeper = (n: number) =>
          Effect.gen(function*() {
            const mine: Array<string> = []
            while (true) {
              const batch = yield* store.takeOverAbandoned({
                now: at(T0 + 5_000),
                deadBefore: at(T0),
                limit: 25,
                leaseFor: "1 minute",
                workerId: `s${n}`
              })
              if (batch.length === 0) return mine
              for (const c of batch) mine.push(c.destination.id)
            }
          })
        const taken = (yield* Effect.all(Array.from({ length: 6 }, (_, n) => sweeper(n)), { concurrency: "unbounded" }))
          .flat()
        expect(taken.length).toBe(500)
        expect(new Set(taken).size).toBe(500)
      }).pipe(Effect.provide(concurrentLayer)), 60_000)

    it.effect("nextDueAt is the earliest due time of a queued destination", () =>
      Effect.gen(function*() {
        const store = yield* DispatchStore
        expect(yield* store.nextDueAt).toEqual(Option.none())
        const org = yield* givenOrganization
        yield* givenDestinations(org.id, [
          { dueAt: at(T0 - 50), status: "published" },
          { dueAt: at(T0 - 40), status: "publishing" },
          { dueAt: at(T0 + 20) },
          { dueAt: at(T0 + 10) }
        ])
        expect(yield* store.nextDueAt).toEqual(Option.some(at(T0 + 10)))
        yield* claim(T0 + 10, 1)
        expect(yield* store.nextDueAt).toEqual(Option.some(at(T0 + 20)))
      }).pipe(Effect.provide(layer)))

    it.live(
      "claims overlap only where an open claim's rows are passed by: a claim beside it takes the next rows at once",
      () =>
        Effect.gen(function*() {
          const store = yield* DispatchStore
          const sql = yield* SqlClient.SqlClient
          // Postgres: row locks and SKIP LOCKED; SQLite: one writer, a second claim would wait its turn.
          expect(store.claimsOverlap).toBe(sql.onDialectOrElse({ pg: () => true, orElse: () => false }))
          if (!store.claimsOverlap) return
          const org = yield* givenOrganization
          const [d1, d2, d3, d4] = yield* givenDestinations(org.id, [
            { dueAt: at(T0 - 4) },
            { dueAt: at(T0 - 3) },
            { dueAt: at(T0 - 2) },
            { dueAt: at(T0 - 1) }
          ])
          const claimedFirst = yield* Deferred.make<ReadonlyArray<Claim>>()
          const commit = yield* Deferred.make<void>()
          const first = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
            yield* Deferred.succeed(claimedFirst, yield* claim(T0, 2, "first"))
            yield* Deferred.await(commit)
          })))
          const held = yield* Deferred.await(claimedFirst)
          // The first claim's transaction is still open: the second claim passes its rows by, unblocked.
          const beside = yield* claim(T0, 10, "second").pipe(Effect.timeout("5 seconds"))
          yield* Deferred.succeed(commit, undefined)
          yield* Fiber.join(first)
          expect(held.map((c) => c.destination.id)).toEqual([d1!.id, d2!.id])
          expect(beside.map((c) => c.destination.id)).toEqual([d3!.id, d4!.id])
          expect(yield* leaseOf(d1!)).toMatchObject({ by: "first" })
          expect(yield* leaseOf(d3!)).toMatchObject({ by: "second" })
        }).pipe(Effect.provide(concurrentLayer)),
      30_000
    )

    it.live("8 concurrent claimers take each of 2000 due destinations exactly once", () =>
      Effect.gen(function*() {
        const posts = yield* PostStore
        const store = yield* DispatchStore
        const org = yield* givenOrganization
        const account = accountValue(org.id, 1)
        for (let i = 0; i < 20; i++) {
          const p = post(org.id)
          yield* posts.insert({
            post: p,
            destinations: Array.from({ length: 100 }, (_, j) =>
              destination({ post: p, account }, { dueAt: at(T0 - ((i * 100 + j) % 37)) }))
          })
        }
        const claimer = (worker: number) =>
          Effect.gen(function*() {
            const mine: Array<string> = []
            while (true) {
              const batch = yield* store.claimDue({
                now: at(T0),
                limit: 50,
                leaseFor: "1 minute",
                workerId: `w${worker}`
              })
              if (batch.length === 0) {
                return mine
              }
              for (const c of batch) {
                mine.push(c.destination.id)
              }
            }
          })
        const perWorker = yield* Effect.all(
          Array.from({ length: 8 }, (_, w) =>
            claimer(w)),
          {
            concurrency: "unbounded"
          }
        )
        const claimed = perWorker.flat()
        expect(claimed.length).toBe(2000)
        expect(new Set(claimed).size).toBe(2000)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ status: string; attempts: number | string; n: number | string }>`
          SELECT status, attempts, COUNT(*) AS n FROM destinations GROUP BY status, attempts`
        expect(rows.map((r) => [r.status, Number(r.attempts), Number(r.n)])).toEqual([["publishing", 1, 2000]])
      }).pipe(Effect.provide(concurrentLayer)), 60_000)
  })
