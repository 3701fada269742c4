/**
 * A pool of worker threads, each with its own read-only better-sqlite3 connection on the same WAL
 * database file, that run single read statements off the event loop. better-sqlite3 runs every
 * statement synchronously on the thread that calls it; a read that takes seconds on the main thread
 * stops every other request, the health probe and the dispatcher for those seconds. On a worker it
 * stops only that worker.
 *
 * Each statement is its own read transaction on the worker's connection, so it sees every commit
 * made before it was sent (WAL readers take the newest committed snapshot when a statement starts).
 *
 * Workers start on the first read sent (a short CLI command that never reads through the pool
 * starts none), are referenced only while they owe an answer (an idle pool never keeps the process
 * alive), and are terminated when the pool's scope closes.
 */
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Worker } from "node:worker_threads"

/**
 * The worker's program, run with `eval` (CommonJS): a file of its own would be missing from the
 * bundled `herald` command, and could not be loaded as TypeScript by the test runner. It answers
 * `[id, sql, params, values, safeIntegers]` with `[id, rows, hasBlob]` or `[id, undefined, false, error]`.
 * `hasBlob` tells the main thread that some value is a blob, which arrives as a plain Uint8Array
 * (structured clone does not keep Buffer) and is turned back into the Buffer the driver gives.
 */
const workerSource = `"use strict"
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const errorOf = (e, phase) => ({ message: String(e && e.message), code: e && typeof e.code === "string" ? e.code : undefined, phase })
let db
let openError
try {
  db = new Database(workerData.filename, { readonly: true, fileMustExist: true })
  db.pragma("busy_timeout = " + workerData.busyTimeout)
} catch (e) {
  openError = errorOf(e, "open")
}
const cache = new Map()
const prepare = (sql) => {
  let statement = cache.get(sql)
  if (statement !== undefined) {
    cache.delete(sql)
    cache.set(sql, statement)
    return statement
  }
  statement = db.prepare(sql)
  if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value)
  cache.set(sql, statement)
  return statement
}
const hasBlob = (rows) => {
  for (const row of rows) for (const key in row) if (row[key] instanceof Uint8Array) return true
  return false
}
parentPort.on("message", ([id, sql, params, values, safeIntegers]) => {
  if (openError !== undefined) return parentPort.postMessage([id, undefined, false, openError])
  let statement
  try {
    statement = prepare(sql)
  } catch (e) {
    return parentPort.postMessage([id, undefined, false, errorOf(e, "prepare")])
  }
  let rows
  try {
    statement.safeIntegers(safeIntegers)
    statement.raw(values)
    rows = statement.all(...params)
  } catch (e) {
    return parentPort.postMessage([id, undefined, false, errorOf(e, "execute")])
  }
  parentPort.postMessage([id, rows, hasBlob(rows)])
})
`

/** What a worker reports when a statement fails: the driver's message and SQLite's code. */
interface WorkerError {
  readonly message: string
  readonly code: string | undefined
  readonly phase: "open" | "prepare" | "execute"
}

type Reply = readonly [id: number, rows: ReadonlyArray<object> | undefined, hasBlob: boolean, error?: WorkerError]

/** better-sqlite3's error class (the one a statement on the main connection throws), for the same `cause`. */
type SqliteErrorClass = new(message: string, code: string) => Error & { readonly code: string }

export interface Options {
  readonly filename: string
  readonly size: number
  /** Path of the better-sqlite3 module the workers load (the one the main connection uses). */
  readonly driver: string
  readonly SqliteError: SqliteErrorClass
  readonly prepareCacheSize?: number
  readonly busyTimeoutMillis?: number
}

export interface ReaderPool {
  /** Runs one read statement on the least busy worker: rows as objects, or as arrays (`values`). */
  readonly run: (
    sql: string,
    params: ReadonlyArray<unknown>,
    values: boolean,
    safeIntegers: boolean
  ) => Effect.Effect<ReadonlyArray<object>, SqlError>
  /** Workers started so far (for tests). */
  readonly started: () => number
}

interface Reader {
  readonly worker: Worker
  /** Answers still owed by the worker, including those no one waits for any more. */
  inFlight: number
  /** Callers waiting, by request id. */
  readonly waiting: Map<number, (reply: Reply) => void>
}

const messages: Record<WorkerError["phase"], string> = {
  open: "Failed to open the database for reading",
  prepare: "Failed to prepare statement ",
  execute: "Failed to execute statement"
}

/** Blobs arrive as Uint8Array; the driver (and every store) works with Buffer. */
const restoreBuffers = (rows: ReadonlyArray<unknown>): void => {
  for (const row of rows as ReadonlyArray<Record<string, unknown>>) {
    for (const key in row) {
      const value = row[key]
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) {
        row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      }
    }
  }
}

export const make = (options: Options): Effect.Effect<ReaderPool, never, Scope.Scope> =>
  Effect.gen(function*() {
    const readers: Array<Reader> = []
    let nextId = 0
    let started = 0
    let closed = false

    const remove = (reader: Reader, error: SqlError) => {
      const index = readers.indexOf(reader)
      if (index >= 0) readers.splice(index, 1)
      const waiting = [...reader.waiting.values()]
      reader.waiting.clear()
      for (const resume of waiting) {
        resume([-1, undefined, false, { message: error.message, code: undefined, phase: "execute" }])
      }
    }

    const spawn = (): Reader => {
      const worker = new Worker(workerSource, {
        eval: true,
        workerData: {
          driver: options.driver,
          filename: options.filename,
          cacheSize: options.prepareCacheSize ?? 200,
          busyTimeout: options.busyTimeoutMillis ?? 5000
        },
        // Nothing of the main process's flags (e.g. a TypeScript loader) is needed to run plain CommonJS.
        execArgv: [],
        stdout: false,
        stderr: false
      })
      worker.unref()
      const reader: Reader = { worker, inFlight: 0, waiting: new Map() }
      worker.on("message", (reply: Reply) => {
        reader.inFlight--
        const resume = reader.waiting.get(reply[0])
        if (resume !== undefined) {
          reader.waiting.delete(reply[0])
          resume(reply)
        }
        if (reader.waiting.size === 0) {
          worker.unref()
        }
      })
      worker.on("error", (cause) => remove(reader, new SqlError({ cause, message: "The database reader stopped" })))
      worker.on(
        "exit",
        (code) =>
          remove(
            reader,
            new SqlError({ cause: new Error(`exit code ${code}`), message: "The database reader stopped" })
          )
      )
      readers.push(reader)
      started++
      return reader
    }

    /** The worker with the fewest answers owed, starting another while the pool is below its size. */
    const pick = (): Reader => {
      let best: Reader | undefined
      for (const reader of readers) {
        if (best === undefined || reader.inFlight < best.inFlight) best = reader
      }
      if (best === undefined || (best.inFlight > 0 && readers.length < options.size)) return spawn()
      return best
    }

    const run: ReaderPool["run"] = (sql, params, values, safeIntegers) =>
      Effect.async<ReadonlyArray<object>, SqlError>((resume) => {
        if (closed) {
          resume(Effect.fail(new SqlError({ cause: new Error("closed"), message: "The database is closed" })))
          return
        }
        const reader = pick()
        const id = nextId++
        reader.waiting.set(id, ([, rows, hasBlob, error]) => {
          if (error !== undefined || rows === undefined) {
            const cause = error?.code !== undefined
              ? new options.SqliteError(error.message, error.code)
              : new Error(error?.message ?? "no answer")
            resume(Effect.fail(new SqlError({ cause, message: messages[error?.phase ?? "execute"] })))
            return
          }
          if (hasBlob) restoreBuffers(rows)
          resume(Effect.succeed(rows))
        })
        if (reader.waiting.size === 1) reader.worker.ref()
        reader.inFlight++
        reader.worker.postMessage([id, sql, params, values, safeIntegers])
        // Interrupted: the worker still finishes the statement (it cannot be stopped halfway); its
        // answer is dropped.
        return Effect.sync(() => {
          reader.waiting.delete(id)
          if (reader.waiting.size === 0) reader.worker.unref()
        })
      })

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        const stopping = readers.splice(0).map((reader) => reader.worker.terminate())
        return Effect.promise(() => Promise.allSettled(stopping))
      }).pipe(Effect.timeoutOption("1 second"), Effect.asVoid)
    )

    return { run, started: () => started }
  })
