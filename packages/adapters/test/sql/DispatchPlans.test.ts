/**
 * The plans SQLite picks for the dispatcher's writes on destinations in flight: recording a batch of
 * outcomes (`completeAll`) and renewing leases (`renew`) look each destination up by its primary key.
 * With the `destinations_leases` index (every destination `publishing`) they scanned all destinations
 * in flight once per member, so a due burst of thousands made each batch hundreds of milliseconds.
 * The metrics sweep's claim reads its due destinations from two index ranges, not every published
 * destination of the platform (most of an old store, whose metrics schedules have ended).
 * The statements are captured as better-sqlite3 runs them and explained with the same parameters.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { PostStore } from "@herald/core/posts/PostStore"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import { MetricsStore } from "@herald/core/analytics/MetricsStore"
import * as Option from "effect/Option"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { accountValue, at, destination, givenOrganization, post, T0 } from "../contract/Fixtures.js"
import { sqlite } from "../support/TestDatabases.js"

interface Statement {
  readonly reader: boolean
  readonly all: (...params: Array<unknown>) => Array<unknown>
  readonly run: (...params: Array<unknown>) => unknown
}
interface BetterSqlite {
  readonly prototype: { prepare: (this: unknown, sql: string) => Statement }
}
const Database = createRequire(import.meta.url)("better-sqlite3") as BetterSqlite

/** Every statement run while `self` runs, with its parameters. */
const capturing = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const ran: Array<{ readonly sql: string; readonly params: ReadonlyArray<unknown> }> = []
    const original = Database.prototype.prepare
    const result = yield* Effect.acquireUseRelease(
      Effect.sync(() => {
        Database.prototype.prepare = function(this: unknown, sql: string) {
          const statement = original.call(this, sql)
          for (const method of ["all", "run"] as const) {
            const run = statement[method]
            Object.defineProperty(statement, method, {
              value: (...params: Array<unknown>) => {
                ran.push({ sql, params })
                return run.apply(statement, params)
              }
            })
          }
          return statement
        }
      }),
      () => self,
      () => Effect.sync(() => (Database.prototype.prepare = original))
    )
    return { result, ran }
  })

const planOf = (statement: { readonly sql: string; readonly params: ReadonlyArray<unknown> }) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${statement.sql}`, [...statement.params])
  ).pipe(
    Effect.map((rows) => rows.map((r) => r.detail))
  )

const layer = SqlStores.layer.pipe(
  Layer.provide(Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))),
  Layer.provideMerge(sqlite)
)

describe("dispatch plans on SQLite", () => {
  it.effect("completeAll and renew look destinations in flight up by id, not by scanning them", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const posts = yield* PostStore
      const store = yield* DispatchStore
      for (let i = 0; i < 30; i++) {
        const p = post(org.id)
        yield* posts.insert({
          post: p,
          destinations: [destination({ post: p, account: accountValue(org.id, 1) }, { dueAt: at(T0) })]
        })
      }
      const claims = yield* store.claimDue({ now: at(T0), limit: 30, leaseFor: "1 minute", workerId: "w" })
      expect(claims).toHaveLength(30)
      const renewed = yield* capturing(store.renew(claims.slice(0, 10), at(T0 + 120_000)))
      expect(renewed.result.size).toBe(10)
      const completed = yield* capturing(store.completeAll(
        claims.slice(0, 10).map((claim) => ({
          claim,
          completion: { _tag: "Failed", error: "refused", failedAt: at(T0 + 1000) } as const
        }))
      ))
      expect(completed.result).toEqual(Array.from({ length: 10 }, () => true))
      for (const captured of [renewed.ran, completed.ran]) {
        const update = captured.find((s) => /^\s*UPDATE destinations/.test(s.sql))!
        const plan = yield* planOf(update)
        expect(plan.join("\n")).toMatch(/SEARCH destinations USING INDEX sqlite_autoindex_destinations_1 \(id=\?\)/)
        expect(plan.join("\n")).not.toMatch(/SCAN destinations/)
      }
    }).pipe(Effect.provide(layer)))

  it.effect("the metrics sweep's claim reads the scheduled and the first fetches from their own indexes", () =>
    Effect.gen(function*() {
      const org = yield* givenOrganization
      const posts = yield* PostStore
      const metrics = yield* MetricsStore
      for (let i = 0; i < 20; i++) {
        const p = post(org.id)
        yield* posts.insert({
          post: p,
          destinations: [destination({ post: p, account: accountValue(org.id, 1) }, {
            status: "published",
            platformPostId: Option.some(`pp-${i}`),
            publishedAt: Option.some(at(T0 - 7_200_000 + i))
          })]
        })
      }
      const claimed = yield* capturing(metrics.claimDue({
        platform: "x",
        now: at(T0),
        limit: 5,
        steps: 5,
        firstAfter: "1 hour",
        leaseFor: "2 minutes"
      }))
      expect(claimed.result).toHaveLength(5)
      const plan = (yield* planOf(claimed.ran.find((s) => /^\s*WITH picked/.test(s.sql))!)).join("\n")
      expect(plan).toMatch(
        /SEARCH destinations USING INDEX destinations_metrics_next \(platform=\? AND next_metrics_at/
      )
      expect(plan).toMatch(
        /SEARCH destinations USING INDEX destinations_metrics_first \(platform=\? AND metrics_step<\?\)/
      )
      expect(plan).not.toMatch(/SCAN destinations/)
    }).pipe(Effect.provide(layer)))
})
