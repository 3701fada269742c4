import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "./Errors.js"

/**
 * Runs a program in one storage transaction: every store call inside it commits or rolls back
 * together. This is how a state change and its events are written as one (the outbox).
 */
export class Transactor extends Context.Tag("@herald/core/kernel/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | PersistenceError, R>
  /**
   * Runs a program whose only storage access is ONE store write that is atomic by itself (a port
   * method that says so, e.g. `PostStore.insert`), with the same durability as `withTransaction`.
   * The caller vouches for the shape; the store decides what it costs: where such a write is its
   * own transaction (Postgres: one statement, committed on its own), no BEGIN and COMMIT are sent
   * around it; where commits are grouped (SQLite) it is `withTransaction`.
   */
  readonly withAtomicWrite: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | PersistenceError, R>
}>() {}
