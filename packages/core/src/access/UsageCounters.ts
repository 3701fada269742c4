import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "../kernel/Errors.js"

/**
 * Counters in fixed windows, kept in the store so that every process on one database shares them
 * (API-key rate limits, posting allowances, upload budgets, the circuit breaker).
 */
export class UsageCounters extends Context.Tag("@herald/core/access/UsageCounters")<UsageCounters, {
  /**
   * Adds `amount` to the counter `key` of the window that ends at `windowEnd`, and returns the new
   * total. Windows are identified by key and end; expired windows may be purged by the store.
   */
  readonly increment: (key: string, windowEnd: DateTime.Utc, amount: number) => Effect.Effect<number, PersistenceError>
  /** The current total of the window, 0 when it has none. */
  readonly get: (key: string, windowEnd: DateTime.Utc) => Effect.Effect<number, PersistenceError>
  /**
   * Forgets at most `limit` windows that ended before `before` (one short statement, so a store with
   * millions of ended windows is cleared in small batches); returns how many it forgot.
   */
  readonly purge: (before: DateTime.Utc, limit: number) => Effect.Effect<number, PersistenceError>
}>() {}
