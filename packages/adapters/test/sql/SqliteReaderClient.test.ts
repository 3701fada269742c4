/**
 * The SQLite client with reader threads: single reads run off the event loop and see every commit
 * made before them; statements inside a transaction stay on the main connection; values, blobs,
 * big integers and errors come back as the main connection gives them; the workers are stopped
 * before the main connection closes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqliteReaderClient from "../../src/sql/SqliteReaderClient.js"

const tempFile = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-sqlite-readers-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => path.join(dir, "herald.db")))

const client = (filename: string, readers?: number) =>
  Effect.map(
    Layer.build(SqliteReaderClient.layer({ filename, ...(readers !== undefined ? { readers } : {}) })),
    (context) => Context.get(context, SqlClient.SqlClient)
  )

/** A read that counts to `n` in a recursive CTE: CPU inside SQLite, nothing on disk. */
const countTo = (sql: SqlClient.SqlClient, n: number) =>
  sql<{ readonly n: number }>`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n})
    SELECT COUNT(*) AS n FROM c`

/**
 * Runs `read` while a 5 ms timer ticks on the main thread: how long the read took and the longest
 * gap between two ticks (how long the event loop was kept from running the timer).
 */
const whileTicking = <A, E>(read: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    let last = performance.now()
    let longestGap = 0
    const timer = setInterval(() => {
      const now = performance.now()
      longestGap = Math.max(longestGap, now - last)
      last = now
    }, 5)
    const started = performance.now()
    const result = yield* read.pipe(Effect.ensuring(Effect.sync(() => {
      clearInterval(timer)
      longestGap = Math.max(longestGap, performance.now() - last)
    })))
    return { result, took: performance.now() - started, longestGap }
  })

describe("SQLite reader threads", () => {
  it.live(
    "a slow single read runs off the event loop; on the main connection the same read blocks it",
    () =>
      Effect.gen(function*() {
        const filename = yield* tempFile
        const pooled = yield* client(filename)
        const mainOnly = yield* client(filename, 0)
        // About a second or two of SQLite work on this machine; what matters is only that it is long
        // next to the 5 ms timer.
        const n = 1_500_000
        const off = yield* whileTicking(countTo(pooled, n))
        expect(off.result).toEqual([{ n }])
        const on = yield* whileTicking(countTo(mainOnly, n))
        expect(on.result).toEqual([{ n }])
        // The control: on the main connection the timer could not run while the read ran.
        expect(on.longestGap).toBeGreaterThan(on.took * 0.8)
        // Through the readers the timer kept running through the read (a loaded machine can hold a
        // process off its core for a while, hence the margin; the control above is near the whole read).
        expect(off.longestGap).toBeLessThan(off.took / 2)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("a single read sees every write committed before it, at once", () =>
    Effect.gen(function*() {
      const sql = yield* client(yield* tempFile)
      yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
      for (let i = 0; i < 100; i++) {
        yield* sql`INSERT INTO items (id, label) VALUES (${i}, ${`item ${i}`})`
        expect(yield* sql`SELECT label FROM items WHERE id = ${i}`).toEqual([{ label: `item ${i}` }])
        yield* sql.withTransaction(sql`UPDATE items SET label = ${`changed ${i}`} WHERE id = ${i}`)
        expect(yield* sql`SELECT label FROM items WHERE id = ${i}`).toEqual([{ label: `changed ${i}` }])
        yield* sql`DELETE FROM items WHERE id = ${i}`
        expect(yield* sql`SELECT COUNT(*) AS n FROM items`).toEqual([{ n: 0 }])
      }
    }).pipe(Effect.scoped))

  it.live("a read inside a transaction sees the transaction's own uncommitted writes; one outside waits for its end", () =>
    Effect.gen(function*() {
      const sql = yield* client(yield* tempFile)
      yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
      const inside = yield* sql.withTransaction(
        Effect.gen(function*() {
          yield* sql`INSERT INTO items (id, label) VALUES (1, 'one')`
          const seen = yield* sql`SELECT label FROM items WHERE id = 1`
          return yield* Effect.fail({ seen })
        })
      ).pipe(Effect.flip, Effect.flatMap((e) => ("seen" in e ? Effect.succeed(e) : Effect.die(e))))
      expect(inside.seen).toEqual([{ label: "one" }])
      // Rolled back: nobody sees it.
      expect(yield* sql`SELECT COUNT(*) AS n FROM items`).toEqual([{ n: 0 }])

      // A read issued while another fiber's transaction is open answers with what that transaction
      // committed, as on a single connection.
      const opened = yield* Effect.makeLatch(false)
      const writer = yield* Effect.fork(sql.withTransaction(
        Effect.gen(function*() {
          yield* sql`INSERT INTO items (id, label) VALUES (2, 'two')`
          yield* opened.open
          yield* Effect.sleep("50 millis")
        })
      ))
      yield* opened.await
      expect(yield* sql`SELECT label FROM items`).toEqual([{ label: "two" }])
      yield* Fiber.join(writer)
    }).pipe(Effect.scoped))

  it.live("blobs, big integers, reals, text and NULL come back as the main connection gives them", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      const pooled = yield* client(filename)
      const mainOnly = yield* client(filename, 0)
      yield* pooled`CREATE TABLE v (id INTEGER PRIMARY KEY, b BLOB, big INTEGER, r REAL, t TEXT, z TEXT)`
      const blob = Buffer.from([0, 1, 2, 250, 255])
      const big = 2n ** 62n + 3n
      yield* pooled`INSERT INTO v (id, b, big, r, t, z) VALUES (1, ${blob}, ${big}, ${1.5}, ${"héllo"}, ${null})`
      const select = (sql: SqlClient.SqlClient) => sql`SELECT b, big, r, t, z, ${blob} AS param FROM v`
      const rows = (yield* select(pooled)) as ReadonlyArray<
        { readonly b: Buffer; readonly param: Buffer; readonly big: unknown }
      >
      expect(rows).toEqual(yield* select(mainOnly))
      expect(Buffer.isBuffer(rows[0].b)).toBe(true)
      expect(Buffer.isBuffer(rows[0].param)).toBe(true)
      expect(Buffer.compare(rows[0].b, blob)).toBe(0)
      expect(rows[0]).toMatchObject({ r: 1.5, t: "héllo", z: null })
      // Without SafeIntegers a big integer is a (rounded) number, with it a bigint, as on the main connection.
      expect(typeof rows[0].big).toBe("number")
      const safe = yield* select(pooled).pipe(Effect.provideService(SqlClient.SafeIntegers, true))
      expect(safe[0].big).toBe(big)
      expect(safe).toEqual(yield* select(mainOnly).pipe(Effect.provideService(SqlClient.SafeIntegers, true)))
      // Rows as arrays (`.values`) too.
      const values = yield* pooled`SELECT b, t FROM v`.values
      expect(values).toEqual([[blob, "héllo"]])
      expect(Buffer.isBuffer(values[0]![0])).toBe(true)
    }).pipe(Effect.scoped))

  it.live("a failing read fails with the same SqlError, SQLite code included", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      const pooled = yield* client(filename)
      const mainOnly = yield* client(filename, 0)
      const failure = (sql: SqlClient.SqlClient, statement: string) =>
        Effect.map(Effect.either(sql.unsafe(statement)), (result) => {
          if (Either.isRight(result)) throw new Error(`${statement} did not fail`)
          const error = result.left
          expect(error).toBeInstanceOf(SqlError)
          const cause = error.cause as { readonly name: string; readonly code: string; readonly message: string }
          return { message: error.message, name: cause.name, code: cause.code, cause: cause.message }
        })
      // Fails when run (malformed JSON), inside the worker.
      const atRun = "SELECT json_extract('{not json', '$.a') AS a"
      const pooledRun = yield* failure(pooled, atRun)
      expect(pooledRun).toEqual(yield* failure(mainOnly, atRun))
      expect(pooledRun).toMatchObject({
        message: "Failed to execute statement",
        name: "SqliteError",
        code: "SQLITE_ERROR"
      })
      // Fails when prepared.
      const atPrepare = "SELECT nothing FROM nowhere"
      expect(yield* failure(pooled, atPrepare)).toEqual(yield* failure(mainOnly, atPrepare))
      // The pool still answers afterwards.
      expect(yield* pooled`SELECT 1 AS one`).toEqual([{ one: 1 }])
    }).pipe(Effect.scoped))

  it.live("reads answer concurrently with writes on the same fibers' behalf; many reads in flight all answer", () =>
    Effect.gen(function*() {
      const sql = yield* client(yield* tempFile)
      yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)`
      const results = yield* Effect.all(
        Array.from({ length: 200 }, (_, i) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO items (id, label) VALUES (${i}, ${`item ${i}`})`
            return yield* sql<{ readonly label: string }>`SELECT label FROM items WHERE id = ${i}`
          })),
        { concurrency: "unbounded" }
      )
      expect(results.map((rows) => rows[0]?.label)).toEqual(Array.from({ length: 200 }, (_, i) => `item ${i}`))
    }).pipe(Effect.scoped))

  it.live("closing the client stops the readers before the main connection, which then removes the WAL", () =>
    Effect.gen(function*() {
      const filename = yield* tempFile
      const scope = yield* Scope.make()
      const sql = yield* client(filename).pipe(Scope.extend(scope))
      yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY)`
      yield* sql`INSERT INTO items (id) VALUES (1)`
      expect(yield* sql`SELECT id FROM items`).toEqual([{ id: 1 }])
      expect(fs.existsSync(`${filename}-wal`)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      // The last connection to close checkpoints and deletes the WAL: the main one, after the readers.
      expect(fs.existsSync(`${filename}-wal`)).toBe(false)
      const after = yield* Effect.either(sql`SELECT id FROM items`)
      expect(Either.isLeft(after)).toBe(true)
    }).pipe(Effect.scoped))

  it.live("an in-memory database keeps every statement on its one connection", () =>
    Effect.gen(function*() {
      const sql = yield* client(":memory:")
      yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY)`
      yield* sql`INSERT INTO items (id) VALUES (7)`
      expect(yield* sql`SELECT id FROM items`).toEqual([{ id: 7 }])
    }).pipe(Effect.scoped))
})
