/**
 * The SQLite `SqlClient`: one main connection (every write, every statement inside a transaction,
 * PRAGMAs) and a pool of worker threads with read-only connections on the same WAL file for the
 * single read statements issued outside a transaction (`internal/SqliteReaderPool.ts`).
 *
 * better-sqlite3 is synchronous: on the main connection a slow read stops the event loop (every
 * other request, the health probe, the dispatcher) for as long as it runs. Routed to a worker it
 * stops nothing. What is routed is decided by SQLite itself: a statement is sent to a worker only
 * when it begins with SELECT or WITH and SQLite reports it read-only and returning rows
 * (`sqlite3_stmt_readonly`), so a `WITH ... INSERT`, `... RETURNING` or a PRAGMA (whose answer is
 * per connection, e.g. `data_version`) stays on the main connection.
 *
 * Consistency is the single connection's: a routed read first waits for any transaction open on
 * the main connection to end (as a read on the main connection waited for it), then starts its own
 * read transaction on a worker, which sees every commit made before (a COMMIT on the main
 * connection is synchronous, finished before the next statement is sent). A read inside a
 * transaction runs on the main connection, seeing the transaction's own uncommitted writes.
 *
 * The main connection is built as @effect/sql-sqlite-node's (`SqliteClient.make`): same compiler,
 * one connection behind a one-permit semaphore, transactions holding the permit, the same
 * `SqlError` messages, prepared statements kept in a cache of 200. `:memory:` databases (which a
 * second connection cannot open) and `readers: 0` keep every statement on the main connection.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { createRequire } from "node:module"
import * as ReaderPool from "./internal/SqliteReaderPool.js"

/** The readers a server starts by default: enough that one slow read leaves another reader free. */
export const defaultReaders = 2

export interface Options {
  readonly filename: string
  /** Worker threads with a read-only connection each; 0 keeps every statement on the main connection. */
  readonly readers?: number
  readonly prepareCacheSize?: number
}

/** The few calls of better-sqlite3 (which ships no type declarations) used here. */
interface Statement {
  readonly reader: boolean
  readonly readonly: boolean
  safeIntegers(toggle: boolean): Statement
  raw(toggle: boolean): Statement
  all(...params: ReadonlyArray<unknown>): Array<object>
  run(...params: ReadonlyArray<unknown>): unknown
}
interface Database {
  prepare(sql: string): Statement
  pragma(sql: string): unknown
  close(): void
}
interface Driver {
  new(filename: string): Database
  readonly SqliteError: new(message: string, code: string) => Error & { readonly code: string }
}

const loadDriver = (): { readonly path: string; readonly Database: Driver } => {
  const require = createRequire(import.meta.url)
  const path = require.resolve("better-sqlite3")
  return { path, Database: require(path) as Driver }
}

/** A prepared statement of the main connection and whether a worker may run it instead. */
interface Prepared {
  readonly statement: Statement
  readonly routable: boolean
}

const startsAsRead = /^\s*(?:SELECT|WITH)\b/i

export const make = (options: Options): Effect.Effect<Client.SqlClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const driver = loadDriver()
    const compiler = Statement.makeCompilerSqlite()
    const scope = yield* Effect.scope

    const db = new driver.Database(options.filename)
    yield* Scope.addFinalizer(scope, Effect.sync(() => db.close()))
    db.pragma("journal_mode = WAL")

    const readerCount = options.filename === ":memory:" || options.filename === ""
      ? 0
      : options.readers ?? defaultReaders
    // Added after the main connection's finalizer, so run before it: the workers close their
    // connections first and the main connection, closing last, checkpoints and removes the WAL.
    const readers = readerCount > 0
      ? yield* ReaderPool.make({
        filename: options.filename,
        size: readerCount,
        driver: driver.path,
        SqliteError: driver.Database.SqliteError,
        ...(options.prepareCacheSize !== undefined ? { prepareCacheSize: options.prepareCacheSize } : {})
      })
      : undefined

    // Prepared statements by text, least recently used first (a Map keeps insertion order).
    const capacity = options.prepareCacheSize ?? 200
    const cache = new Map<string, Prepared>()
    const prepare = (sql: string): Prepared | SqlError => {
      const hit = cache.get(sql)
      if (hit !== undefined) {
        cache.delete(sql)
        cache.set(sql, hit)
        return hit
      }
      let statement: Statement
      try {
        statement = db.prepare(sql)
      } catch (cause) {
        return new SqlError({ cause, message: "Failed to prepare statement " })
      }
      const prepared = { statement, routable: statement.reader && statement.readonly && startsAsRead.test(sql) }
      if (cache.size >= capacity) cache.delete(cache.keys().next().value!)
      cache.set(sql, prepared)
      return prepared
    }

    const safeIntegersOf = (fiber: { readonly currentContext: Context.Context<never> }) =>
      Context.get(fiber.currentContext, Client.SafeIntegers)

    /** Runs a statement on the main connection (the caller holds the connection). */
    const runMain = (statement: Statement, params: ReadonlyArray<unknown>, raw: boolean, values: boolean) =>
      Effect.withFiberRuntime<ReadonlyArray<object>, SqlError>((fiber) => {
        try {
          statement.safeIntegers(safeIntegersOf(fiber))
          if (statement.reader) {
            if (!values) return Effect.succeed(statement.all(...params))
            statement.raw(true)
            try {
              return Effect.succeed(statement.all(...params))
            } finally {
              statement.raw(false)
            }
          }
          const result = statement.run(...params)
          return Effect.succeed(raw ? (result as ReadonlyArray<object>) : [])
        } catch (cause) {
          return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
        }
      })

    const semaphore = yield* Effect.makeSemaphore(1)
    /** Waits until no transaction holds the main connection, without keeping it. */
    const noOpenTransaction = semaphore.withPermits(1)(Effect.void)

    /**
     * A connection whose statements run on the main connection: `held` when the caller already holds
     * it (inside a transaction), otherwise each statement takes it for its run.
     */
    const connection = (held: boolean): Connection => {
      const onMain = (sql: string, params: ReadonlyArray<unknown>, raw: boolean, values: boolean) =>
        Effect.suspend(() => {
          const prepared = prepare(sql)
          if (prepared instanceof SqlError) return Effect.fail(prepared)
          if (held) return runMain(prepared.statement, params, raw, values)
          if (readers !== undefined && prepared.routable && !raw) {
            return Effect.zipRight(
              noOpenTransaction,
              Effect.withFiberRuntime<ReadonlyArray<object>, SqlError>((fiber) =>
                readers.run(sql, params, values, safeIntegersOf(fiber))
              )
            )
          }
          return semaphore.withPermits(1)(runMain(prepared.statement, params, raw, values))
        })
      return {
        execute: (sql, params, transformRows) =>
          transformRows
            ? Effect.map(onMain(sql, params, false, false), transformRows)
            : onMain(sql, params, false, false),
        executeRaw: (sql, params) => onMain(sql, params, true, false),
        executeValues: (sql, params) =>
          onMain(sql, params, false, true) as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
        executeUnprepared: (sql, params, transformRows) => {
          // Transaction control (BEGIN, COMMIT, SAVEPOINT) and one-off statements: always the main connection.
          const run = Effect.suspend(() => {
            let statement: Statement
            try {
              statement = db.prepare(sql)
            } catch (cause) {
              return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
            }
            return runMain(statement, params ?? [], false, false)
          })
          const guarded = held ? run : semaphore.withPermits(1)(run)
          return transformRows ? Effect.map(guarded, transformRows) : guarded
        },
        executeStream: () => Effect.dieMessage("executeStream not implemented")
      }
    }

    const shared = connection(false)
    const owned = connection(true)
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        owned
      )
    )

    return yield* Client.make({
      acquirer: Effect.succeed(shared),
      compiler,
      transactionAcquirer,
      spanAttributes: [["db.system.name", "sqlite"]]
    })
  })

/** The client as a layer (`SqlClient`), its connections closed and its workers stopped with the layer. */
export const layer = (options: Options): Layer.Layer<Client.SqlClient> =>
  Layer.scoped(Client.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
