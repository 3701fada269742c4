import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "./Errors.js"

/**
 * Runs a program in one storage transaction: every store call inside it commits or rolls back
 * together. This is how a state change and its events are written as one (the outbox).
 */
export class Transactor extends Context.Tag("@herald/core/kernel/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | PersistenceError, R>
}>() {}
