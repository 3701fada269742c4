/**
 * The `Transactor` over the SQL client. On Postgres each program is one SQL transaction (nested
 * calls become savepoints), and concurrent commits on separate connections already share WAL
 * flushes. On SQLite, with one writer and `synchronous = FULL`, each commit is an fsync on the event
 * loop, so concurrent programs are grouped: the programs waiting when a group's transaction opens,
 * and those that arrive while it runs, run one after the other inside that one transaction, each in
 * its own savepoint (a failing program is rolled back alone), and each caller is answered only after the one COMMIT that holds its write has returned,
 * that is, once it is durable.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { PersistenceError } from "@herald/core/kernel/Errors"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"

const failed = (cause: unknown) => new PersistenceError({ message: "transaction failed", cause })

/**
 * One transaction per program: what Postgres uses, and what nested calls use everywhere. A program
 * of one atomic write runs as it is: a single statement outside a transaction is committed on its
 * own (durably, at the server's `synchronous_commit`), so BEGIN and COMMIT would only add two round
 * trips; inside an open transaction it is part of that one.
 */
export const makeSingle = (sql: SqlClient.SqlClient): Transactor["Type"] => {
  const withTransaction: Transactor["Type"]["withTransaction"] = (self) =>
    sql.withTransaction(self).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(failed(cause))))
  return Transactor.of({ withTransaction, withAtomicWrite: (self) => self })
}

type Connection = Context.Tag.Service<typeof SqlClient.TransactionConnection>

/** A caller waiting to join a group. */
interface Ticket {
  /** Completed by the group when it is this caller's turn: the group's open transaction. */
  readonly turn: Deferred.Deferred<Connection>
  /** Completed by the caller when its savepoint is done (or it was interrupted before its turn). */
  readonly done: Deferred.Deferred<void>
  /** Completed by the group with the outcome of the COMMIT that holds the caller's write. */
  readonly committed: Deferred.Deferred<void, PersistenceError>
}

export interface GroupCommit {
  readonly transactor: Transactor["Type"]
  /** How many COMMITs the groups have issued (for tests of the grouping). */
  readonly commits: () => number
}

/** Resumes on the next turn of the event loop, after pending I/O has been handled. */
const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * Group commit over a client with one connection (SQLite). At most `maxGroup` programs share a
 * commit, so a long queue still commits in steps and answers the first callers early.
 */
export const makeGroupCommit = (
  sql: SqlClient.SqlClient,
  options: { readonly maxGroup?: number; readonly gatherTurns?: number } = {}
) =>
  Effect.gen(function*() {
    const maxGroup = options.maxGroup ?? 256
    // Turns of the event loop a group waits, in all, for more members before its COMMIT. Without
    // them a COMMIT (an fsync, blocking the loop) kept the next requests out: groups of one.
    const gatherTurns = options.gatherTurns ?? 2
    const runtime = yield* Effect.runtime<never>()
    const queue: Array<Ticket> = []
    let running = false
    let commits = 0

    /**
     * One group: BEGIN; then, in order, every program queued by then or while the group runs (up to
     * `maxGroup`) gets its turn; COMMIT; then every member hears the outcome. Members are taken once
     * the transaction is open, so the callers that queued while it waited for the connection join.
     */
    const runGroup = Effect.suspend(() => {
      const group: Array<Ticket> = []
      return Effect.gen(function*() {
        const outcome = yield* sql.withTransaction(
          Effect.gen(function*() {
            // withTransaction provides the open transaction's connection to its program.
            const connection = Option.getOrThrow(yield* Effect.serviceOption(SqlClient.TransactionConnection))
            let turns = 0
            while (group.length < maxGroup) {
              if (queue.length === 0) {
                // Before the COMMIT, let the event loop run a turn (or two): requests that arrived
                // while the previous COMMIT blocked it reach the queue and share this one.
                if (turns >= gatherTurns) break
                turns++
                yield* nextTurn
                continue
              }
              const ticket = queue.shift()!
              group.push(ticket)
              yield* Deferred.succeed(ticket.turn, connection)
              yield* Deferred.await(ticket.done)
            }
          })
        ).pipe(Effect.exit)
        commits++
        for (const ticket of group) {
          yield* Deferred.done(ticket.committed, Exit.mapError(outcome, failed))
        }
      }).pipe(
        // A COMMIT that fails is a defect in @effect/sql: the members still hear of it.
        Effect.catchAllCause((cause) =>
          Effect.forEach(group, (t) => Deferred.fail(t.committed, failed(cause)), { discard: true })
        )
      )
    })

    const drain: Effect.Effect<void> = Effect.suspend(() => {
      if (queue.length === 0) {
        running = false
        return Effect.void
      }
      return Effect.zipRight(runGroup, drain)
    })

    const join = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | PersistenceError, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const ticket: Ticket = {
            turn: yield* Deferred.make<Connection>(),
            done: yield* Deferred.make<void>(),
            committed: yield* Deferred.make<void, PersistenceError>()
          }
          queue.push(ticket)
          if (!running) {
            running = true
            Runtime.runFork(runtime)(drain)
          }
          // Interrupted before its turn, the caller still lets the group pass it.
          const connection = yield* restore(Deferred.await(ticket.turn)).pipe(
            Effect.onInterrupt(() => Deferred.succeed(ticket.done, undefined))
          )
          // Its own savepoint inside the group's transaction; rolled back alone when it fails.
          const result = yield* restore(sql.withTransaction(self)).pipe(
            Effect.provideService(SqlClient.TransactionConnection, connection),
            Effect.exit
          )
          yield* Deferred.succeed(ticket.done, undefined)
          // Answered only once the COMMIT holding the write is durable (or the group failed).
          yield* Deferred.await(ticket.committed)
          if (Exit.isFailure(result)) {
            return yield* Effect.failCause(result.cause).pipe(
              Effect.mapError((error) => (error instanceof SqlError ? failed(error) : error))
            )
          }
          return result.value
        })
      ) as Effect.Effect<A, E | PersistenceError, R>

    const withTransaction: Transactor["Type"]["withTransaction"] = (self) =>
      // Already inside a transaction: a savepoint of it, as before.
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
        Option.isSome(open)
          ? sql.withTransaction(self).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(failed(cause))))
          : join(self))
    // A lone write still joins a group: here the COMMIT (an fsync) is the cost, and groups share it.
    const transactor = Transactor.of({ withTransaction, withAtomicWrite: withTransaction })
    return { transactor, commits: () => commits } satisfies GroupCommit
  })

export const make = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    sqlite: () => Effect.map(makeGroupCommit(sql), (group) => group.transactor),
    orElse: () => Effect.succeed(makeSingle(sql))
  }))

export const layer: Layer.Layer<Transactor, never, SqlClient.SqlClient> = Layer.effect(Transactor, make)
