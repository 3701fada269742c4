/**
 * Group commit on SQLite: concurrent transactions share one COMMIT, a failing one is rolled back
 * alone, and every caller is answered only once a separate connection can read its committed write.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlTransactor from "../../src/sql/SqlTransactor.js"

/** The server's client and an independent reader (another connection) on one fresh SQLite file. */
const setup = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-group-commit-"))),
    (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
  )
  const filename = path.join(dir, "herald.db")
  const sql = Context.get(yield* Layer.build(SqlDatabase.layer({ _tag: "Sqlite", filename })), SqlClient.SqlClient)
  yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
  const reader = Context.get(
    yield* Layer.build(SqlDatabase.layerClient({ _tag: "Sqlite", filename })),
    SqlClient.SqlClient
  )
  const group = yield* SqlTransactor.makeGroupCommit(sql)
  const visibleToReader = (id: number) =>
    Effect.map(reader<{ n: number }>`SELECT COUNT(*) AS n FROM items WHERE id = ${id}`, (rows) => rows[0]!.n === 1)
  return { sql, group, visibleToReader }
})

describe("group commit (SQLite)", () => {
  it.live("60 concurrent transactions commit in fewer COMMITs, each answered after its write is durable", () =>
    Effect.gen(function*() {
      const { group, sql, visibleToReader } = yield* setup
      const results = yield* Effect.all(
        Array.from({ length: 60 }, (_, i) =>
          group.transactor.withTransaction(
            Effect.gen(function*() {
              yield* sql`INSERT INTO items (id, label) VALUES (${i}, ${`item ${i}`})`
              yield* Effect.yieldNow()
              yield* sql`UPDATE items SET label = ${`item ${i} updated`} WHERE id = ${i}`
              return i
            })
          ).pipe(
            // The moment the caller is answered, another connection already reads the row.
            Effect.flatMap((id) => visibleToReader(id))
          )),
        { concurrency: "unbounded" }
      )
      expect(results.every((visible) => visible)).toBe(true)
      const rows = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM items WHERE label LIKE '%updated'`
      expect(rows[0]!.n).toBe(60)
      expect(group.commits()).toBeLessThan(60)
      expect(group.commits()).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.scoped))

  it.live("callers that arrive one event-loop turn apart (as HTTP requests do) still share a COMMIT", () =>
    Effect.gen(function*() {
      const { group, sql } = yield* setup
      const turn = Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))
      // Each caller reaches the transactor one turn after the previous one, as requests whose bodies
      // are read on separate turns do; without gathering, each formed a group of one.
      const fibers = []
      for (let i = 0; i < 20; i++) {
        fibers.push(
          yield* Effect.fork(group.transactor.withTransaction(sql`INSERT INTO items (id, label) VALUES (${i}, 'x')`))
        )
        yield* turn
      }
      for (const fiber of fibers) yield* Fiber.join(fiber)
      const rows = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM items`
      expect(rows[0]!.n).toBe(20)
      expect(group.commits()).toBeLessThanOrEqual(10)
    }).pipe(Effect.scoped))

  it.live("a failing member is rolled back alone; the others of its group commit", () =>
    Effect.gen(function*() {
      const { group, sql, visibleToReader } = yield* setup
      const outcomes = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) =>
          group.transactor.withTransaction(
            Effect.gen(function*() {
              yield* sql`INSERT INTO items (id, label) VALUES (${i}, 'x')`
              if (i === 4) return yield* Effect.fail(`refused ${i}` as const)
              if (i === 7) return yield* Effect.die("defect in member 7")
              // A nested transaction inside a member is a savepoint of the group's transaction.
              yield* group.transactor.withTransaction(sql`UPDATE items SET label = 'nested' WHERE id = ${i}`)
              return i
            })
          ).pipe(Effect.either, Effect.exit)),
        { concurrency: "unbounded" }
      )
      expect(group.commits()).toBeLessThan(12)
      for (let i = 0; i < 12; i++) {
        const exit = outcomes[i]!
        if (i === 7) {
          expect(exit._tag).toBe("Failure")
        } else if (i === 4) {
          expect(exit._tag === "Success" && Either.isLeft(exit.value) && exit.value.left).toBe("refused 4")
        } else {
          expect(exit._tag === "Success" && Either.isRight(exit.value) && exit.value.right).toBe(i)
        }
        expect(yield* visibleToReader(i)).toBe(i !== 4 && i !== 7)
      }
      const nested = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM items WHERE label = 'nested'`
      expect(nested[0]!.n).toBe(10)
    }).pipe(Effect.scoped))

  it.live("a caller interrupted while waiting for its turn leaves the group running for the others", () =>
    Effect.gen(function*() {
      const { group, sql, visibleToReader } = yield* setup
      const slow = yield* Effect.fork(group.transactor.withTransaction(
        Effect.zipRight(sql`INSERT INTO items (id, label) VALUES (1, 'slow')`, Effect.sleep("100 millis"))
      ))
      yield* Effect.sleep("10 millis")
      const waiting = yield* Effect.fork(
        group.transactor.withTransaction(sql`INSERT INTO items (id, label) VALUES (2, 'gone')`)
      )
      const after = yield* Effect.fork(
        group.transactor.withTransaction(sql`INSERT INTO items (id, label) VALUES (3, 'after')`)
      )
      yield* Effect.sleep("10 millis")
      // Still queued behind the slow member: interrupting it ends it at once.
      yield* Fiber.interrupt(waiting)
      expect(yield* Fiber.join(slow).pipe(Effect.as("done"))).toBe("done")
      expect(yield* Fiber.join(after).pipe(Effect.as("done"))).toBe("done")
      expect(yield* visibleToReader(1)).toBe(true)
      expect(yield* visibleToReader(2)).toBe(false)
      expect(yield* visibleToReader(3)).toBe(true)
    }).pipe(Effect.scoped))
})
