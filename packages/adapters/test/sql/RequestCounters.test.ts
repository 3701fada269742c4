/**
 * `RequestCounters` on every database (memory on SQLite, the UNLOGGED table on Postgres), and on
 * Postgres two instances on separate connection pools, as two server processes have: their
 * increments share one count with no slack.
 */
import { describe, expect, it } from "@effect/vitest"
import { RequestCounters } from "@herald/core/access/RequestCounters"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlRequestCounters from "../../src/sql/SqlRequestCounters.js"
import { createFreshPgDatabase, databasesUnderTest, type TestDatabaseLayer } from "../support/TestDatabases.js"

const at = (millis: number) => DateTime.unsafeMake(millis)
const T0 = 1_700_000_000_000

const countersOn = (database: TestDatabaseLayer) => SqlRequestCounters.layer.pipe(Layer.provideMerge(database))

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`RequestCounters on ${db.label}`, () => {
    if (db.layer === undefined) return
    const layer = countersOn(db.layer)

    it.effect("counts per key and window, and purges ended windows", () =>
      Effect.gen(function*() {
        const counters = yield* RequestCounters
        const w1 = at(T0 + 60_000)
        const w2 = at(T0 + 120_000)
        expect(yield* counters.increment("k", w1, 1)).toBe(1)
        expect(yield* counters.increment("k", w1, 5)).toBe(6)
        expect(yield* counters.increment("k", w2, 2)).toBe(2)
        expect(yield* counters.increment("other", w1, 3)).toBe(3)
        yield* counters.purge(w2)
        expect(yield* counters.increment("k", w1, 1)).toBe(1)
        expect(yield* counters.increment("k", w2, 1)).toBe(3)
      }).pipe(Effect.provide(layer)))

    // Postgres only: SQLite keeps these counters in memory, there is no table to plan.
    if (db.label === "postgres") {
      it.effect("the purge of ended windows reads them by their end (request_counters_by_end)", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // Planned as it would be on a large table: an index that serves the range is used.
          const plan = yield* sql.withTransaction(Effect.zipRight(
            sql`SET LOCAL enable_seqscan = off`,
            sql<{ "QUERY PLAN": string }>`EXPLAIN DELETE FROM request_counters WHERE window_end < ${T0}`
          ))
          expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("request_counters_by_end")
        }).pipe(Effect.provide(layer)))
    }

    it.live("300 concurrent increments over three keys: every caller sees a distinct running total", () =>
      Effect.gen(function*() {
        const counters = yield* RequestCounters
        const window = at(T0 + 60_000)
        const keys = ["a", "b", "c"] as const
        const totals = yield* Effect.all(
          Array.from(
            { length: 300 },
            (_, i) => Effect.map(counters.increment(keys[i % 3]!, window, 1), (n) => [i % 3, n] as const)
          ),
          { concurrency: "unbounded" }
        )
        for (const k of [0, 1, 2]) {
          const seen = totals.filter(([key]) => key === k).map(([, n]) => n).sort((x, y) => x - y)
          expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
        }
      }).pipe(Effect.provide(layer)))

    it.effect("incrementWithin counts in `then` only the part within `first`'s limit", () =>
      Effect.gen(function*() {
        const counters = yield* RequestCounters
        const minute = { key: "k:minute", windowEnd: at(T0 + 60_000) }
        const hour = { key: "k:hour", windowEnd: at(T0 + 3_600_000) }
        expect(yield* counters.incrementWithin(minute, 2, hour, 1)).toEqual({ firstTotal: 1, thenTotal: 1 })
        expect(yield* counters.incrementWithin(minute, 2, hour, 1)).toEqual({ firstTotal: 2, thenTotal: 1 + 1 })
        // Refused by the first limit: not counted in `then`.
        expect(yield* counters.incrementWithin(minute, 2, hour, 1)).toEqual({ firstTotal: 3, thenTotal: undefined })
        expect(yield* counters.increment("k:hour", hour.windowEnd, 0)).toBe(2)
        // A later window of `first` starts afresh; `then` goes on from where it was.
        const next = { key: "k:minute", windowEnd: at(T0 + 120_000) }
        expect(yield* counters.incrementWithin(next, 2, hour, 1)).toEqual({ firstTotal: 1, thenTotal: 3 })
        // An amount straddling the limit counts only its part within it.
        expect(yield* counters.incrementWithin(next, 4, hour, 5)).toEqual({ firstTotal: 6, thenTotal: 6 })
        expect(yield* counters.increment("k:minute", next.windowEnd, 0)).toBe(6)
      }).pipe(Effect.provide(layer)))

    it.live("300 concurrent incrementWithin over three keys: exact running totals, refused ones not counted", () =>
      Effect.gen(function*() {
        const counters = yield* RequestCounters
        const keys = ["a", "b", "c"] as const
        const calls = Array.from({ length: 300 }, (_, i) => {
          const k = keys[i % 3]!
          // Two minute windows share the hour window, so a batch may add to one `then` row twice.
          const minuteEnd = at(T0 + 60_000 * (1 + (i % 2)))
          return Effect.map(
            counters.incrementWithin({ key: `${k}:minute`, windowEnd: minuteEnd }, 40, {
              key: `${k}:hour`,
              windowEnd: at(T0 + 3_600_000)
            }, 1),
            (totals) => [i % 3, i % 2, totals] as const
          )
        })
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        for (const k of [0, 1, 2]) {
          for (const m of [0, 1]) {
            const firsts = results.filter(([key, minute]) => key === k && minute === m).map(([, , t]) => t.firstTotal)
            expect([...firsts].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
          }
          const mine = results.filter(([key]) => key === k).map(([, , t]) => t)
          for (const t of mine) expect(t.thenTotal === undefined).toBe(t.firstTotal > 40)
          const thens = mine.flatMap((t) => t.thenTotal === undefined ? [] : [t.thenTotal])
          expect([...thens].sort((x, y) => x - y)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1))
          expect(yield* counters.increment(`${keys[k]}:hour`, at(T0 + 3_600_000), 0)).toBe(80)
        }
      }).pipe(Effect.provide(layer)))

    if (db.label === "postgres") {
      it.live("the table is UNLOGGED (no WAL, so no flush per counted request)", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ relpersistence: string }>`
            SELECT relpersistence FROM pg_class WHERE relname = 'request_counters'`
          expect(rows[0]?.relpersistence).toBe("u")
        }).pipe(Effect.provide(layer)))

      /** Two instances on one fresh database, each with its own pool (two processes), built in the test's scope. */
      const twoInstances = Effect.gen(function*() {
        const database = yield* Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (d) => d.drop)
        const instance = Effect.map(
          Layer.build(SqlRequestCounters.layer.pipe(
            Layer.provide(SqlDatabase.layer({ _tag: "Postgres", url: database.url, maxConnections: 3 }))
          )),
          Context.get(RequestCounters)
        )
        return [yield* instance, yield* instance] as const
      })

      it.live("two instances on separate pools (two processes) share each window exactly", () =>
        Effect.gen(function*() {
          const [a, b] = yield* twoInstances
          const window = at(T0 + 60_000)
          const totals = yield* Effect.all(
            Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? a : b).increment("shared", window, 1)),
            { concurrency: "unbounded" }
          )
          expect([...totals].sort((x, y) => x - y)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1))
        }).pipe(Effect.scoped))

      it.live("incrementWithin from two instances (two processes): the limit is shared exactly", () =>
        Effect.gen(function*() {
          const [a, b] = yield* twoInstances
          const minute = { key: "s:minute", windowEnd: at(T0 + 60_000) }
          const hour = { key: "s:hour", windowEnd: at(T0 + 3_600_000) }
          const totals = yield* Effect.all(
            Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).incrementWithin(minute, 150, hour, 1)),
            { concurrency: "unbounded" }
          )
          expect(totals.map((t) => t.firstTotal).sort((x, y) => x - y)).toEqual(
            Array.from({ length: 200 }, (_, i) => i + 1)
          )
          const thens = totals.flatMap((t) => t.thenTotal === undefined ? [] : [t.thenTotal]).sort((x, y) => x - y)
          expect(thens).toEqual(Array.from({ length: 150 }, (_, i) => i + 1))
        }).pipe(Effect.scoped))
    }
  })
}
