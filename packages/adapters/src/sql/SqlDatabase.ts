import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { MigrationError } from "@effect/sql/Migrator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as path from "node:path"
import Pg from "pg"
import * as PgPrepared from "./internal/PgPrepared.js"
import * as PoolUsage from "./PoolUsage.js"
import * as Migrations from "./Migrations.js"
import * as SqliteReaderClient from "./SqliteReaderClient.js"

/**
 * SQLite durability: `FULL` fsyncs every commit, so an accepted post survives a power loss;
 * `NORMAL` (with WAL) may lose the last commits on power loss but never corrupts the file.
 */
export type SqliteSynchronous = "FULL" | "NORMAL"

export interface SqliteOptions {
  readonly filename: string
  readonly synchronous?: SqliteSynchronous
  /**
   * Worker threads that run single reads off the event loop, each with a read-only connection
   * (`SqliteReaderClient`); 0 runs every statement on the main connection. Default 2.
   */
  readonly readers?: number
}

/** Owner-only: the store holds sessions, key hashes and encrypted platform credentials. */
const privateDirMode = 0o700
const privateFileMode = 0o600

/**
 * The database file, its directory created if missing (0700), and the file itself created 0600
 * before SQLite opens it (SQLite gives its `-wal` and `-shm` files the database file's mode). A file
 * left readable by others (made by an earlier version under the default umask) is narrowed to 0600.
 */
export const preparePrivateFile = (filename: string): void => {
  fs.mkdirSync(path.dirname(filename), { recursive: true, mode: privateDirMode })
  fs.closeSync(fs.openSync(filename, "a", privateFileMode))
  for (const file of [filename, `${filename}-wal`, `${filename}-shm`]) {
    try {
      if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, privateFileMode)
    } catch {
      // Missing, or not ours to change: SQLite reports what matters when it opens the file.
    }
  }
}

/**
 * The embedded default: one SQLite file in WAL mode, created owner-only (`preparePrivateFile`), with
 * its single reads run on a pool of reader threads (`SqliteReaderClient`).
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError> => {
  const client = Layer.unwrapEffect(
    Effect.sync(() => {
      if (options.filename !== ":memory:") preparePrivateFile(options.filename)
      return SqliteReaderClient.layer({
        filename: options.filename,
        ...(options.readers !== undefined ? { readers: options.readers } : {})
      })
    })
  )
  const pragmas = Layer.effectDiscard(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // WAL is set by the client. A second process (e.g. `herald keys create` beside a running server)
      // waits for the write lock instead of failing at once.
      yield* sql.unsafe(`PRAGMA synchronous = ${options.synchronous ?? "FULL"}`)
      yield* sql.unsafe("PRAGMA busy_timeout = 5000")
      yield* sql.unsafe("PRAGMA foreign_keys = ON")
      // Statement journals in memory: a statement inside a transaction that fires triggers (a claim
      // or a recording of 500 destinations refreshes their posts and rollups) journals the pages it
      // changes so it can be undone alone; in a temporary file that was one write(2) per page, ~90,000
      // for 3,000 claims and their recordings on a 30k-post store, half the dispatcher's CPU.
      yield* sql.unsafe("PRAGMA temp_store = MEMORY")
    })
  )
  return pragmas.pipe(Layer.provideMerge(client))
}

export interface PgOptions {
  readonly url: Redacted.Redacted<string> | string
  readonly maxConnections?: number
}

/**
 * Postgres, for many processes on one database. The pool is @effect/sql-pg's own but for its client
 * class, which sends the statements the stores mark as prepared (`PgPrepared`) named; like
 * `PgClient.layer`, it answers a first query before the layer is built (5 s at most).
 */
export const layerPg = (options: PgOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.gen(function*() {
        const pool = new Pg.Pool({
          connectionString: Redacted.value(typeof options.url === "string" ? Redacted.make(options.url) : options.url),
          max: options.maxConnections ?? 10,
          application_name: "herald",
          // A connection that cannot be made within 5 s fails (the default waits forever), so a request
          // meets an unreachable Postgres with a retryable error instead of hanging.
          connectionTimeoutMillis: 5_000,
          Client: PgPrepared.PreparingClient
        })
        pool.on("error", () => {})
        yield* Effect.tryPromise({
          try: () => pool.query("SELECT 1"),
          catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
        }).pipe(
          Effect.timeoutFail({
            duration: "5 seconds",
            onTimeout: () =>
              new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
          }),
          Effect.tapError(() => Effect.promise(() => pool.end()))
        )
        yield* PoolUsage.track(pool)
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ),
    applicationName: "herald"
  })

export type DatabaseConfig =
  | {
    readonly _tag: "Sqlite"
    readonly filename: string
    readonly synchronous?: SqliteSynchronous
    readonly readers?: number
  }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string> | string; readonly maxConnections?: number }

/**
 * Chooses the store from configuration: a database URL means Postgres, otherwise SQLite in the data
 * dir (with `sqliteReaders` reader threads, `SqliteReaderClient.defaultReaders` when not given).
 */
export const configFrom = (options: {
  readonly dataDir: string
  readonly databaseUrl?: string | undefined
  readonly sqliteReaders?: number | undefined
}): DatabaseConfig =>
  options.databaseUrl !== undefined && options.databaseUrl !== ""
    ? { _tag: "Postgres", url: Redacted.make(options.databaseUrl) }
    : {
      _tag: "Sqlite",
      filename: path.join(options.dataDir, "herald.db"),
      ...(options.sqliteReaders !== undefined ? { readers: options.sqliteReaders } : {})
    }

export const layerClient = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  config._tag === "Sqlite"
    ? layerSqlite({
      filename: config.filename,
      ...(config.synchronous ? { synchronous: config.synchronous } : {}),
      ...(config.readers !== undefined ? { readers: config.readers } : {})
    })
    : layerPg({ url: config.url, ...(config.maxConnections ? { maxConnections: config.maxConnections } : {}) })

/** The client with every pending migration applied before anything uses it. */
export const layer = (config: DatabaseConfig): Layer.Layer<SqlClient.SqlClient, SqlError | MigrationError> =>
  Layer.effectDiscard(Migrations.run).pipe(Layer.provideMerge(layerClient(config)))
