/**
 * Per-key request counts in fixed windows (the API-key rate limits). Unlike `UsageCounters` they are
 * not durable: authenticating a request must not cost a synchronous durable commit, and a window
 * forgotten in a crash only gives a key one window's budget again. The single-process embedded
 * default keeps them in memory (`layerMemory`); processes sharing Postgres share an UNLOGGED table.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { PersistenceError } from "../kernel/Errors.js"

/** A counter: a key in the window ending at `windowEnd`. */
export interface Counter {
  readonly key: string
  readonly windowEnd: DateTime.Utc
}

export interface WithinTotals {
  readonly firstTotal: number
  /** Undefined when nothing was added to the `then` counter. */
  readonly thenTotal: number | undefined
}

/** How much of `amount`, added to a counter now at `total` (amount included), stays within `within`. */
export const partWithin = (total: number, amount: number, within: number): number =>
  Math.min(amount, Math.max(0, within - (total - amount)))

/** `incrementWithin` made of two `increment`s, for counters in memory. */
export const incrementWithinOf = (
  increment: RequestCounters["Type"]["increment"]
): RequestCounters["Type"]["incrementWithin"] =>
(first, within, then, amount) =>
  Effect.flatMap(
    increment(first.key, first.windowEnd, amount),
    (total): Effect.Effect<WithinTotals, PersistenceError> => {
      const counted = partWithin(total, amount, within)
      return counted === 0
        ? Effect.succeed({ firstTotal: total, thenTotal: undefined })
        : Effect.map(increment(then.key, then.windowEnd, counted), (thenTotal) => ({ firstTotal: total, thenTotal }))
    }
  )

export class RequestCounters extends Context.Tag("@herald/core/access/RequestCounters")<RequestCounters, {
  /** Adds `amount` to the counter `key` of the window ending at `windowEnd`; returns the new total. */
  readonly increment: (key: string, windowEnd: DateTime.Utc, amount: number) => Effect.Effect<number, PersistenceError>
  /**
   * Adds `amount` to `first`, and to `then` only the part of it that keeps `first`'s new total within
   * `within` (so a request refused by `first`'s limit is not counted in `then`); returns both new
   * totals. One step where each increment is a round
   * trip. `then` must not be the `first` counter of any other call.
   */
  readonly incrementWithin: (
    first: Counter,
    within: number,
    then: Counter,
    amount: number
  ) => Effect.Effect<WithinTotals, PersistenceError>
  /** Forgets windows that ended before `before`. */
  readonly purge: (before: DateTime.Utc) => Effect.Effect<void, PersistenceError>
}>() {}

/** Counters in this process's memory: exact within the process, forgotten when it stops. */
export const makeMemory = (): RequestCounters["Type"] => {
  // key -> window end (epoch ms) -> count; a key rarely has more than two live windows.
  const counts = new Map<string, Map<number, number>>()
  const forget = (before: number) => {
    for (const [key, windows] of counts) {
      for (const end of windows.keys()) if (end < before) windows.delete(end)
      if (windows.size === 0) counts.delete(key)
    }
  }
  const increment: RequestCounters["Type"]["increment"] = (key, windowEnd, amount) =>
    Effect.sync(() => {
      const end = DateTime.toEpochMillis(windowEnd)
      let windows = counts.get(key)
      if (windows === undefined) {
        windows = new Map()
        counts.set(key, windows)
      }
      const total = (windows.get(end) ?? 0) + amount
      windows.set(end, total)
      return total
    })
  return RequestCounters.of({
    increment,
    incrementWithin: incrementWithinOf(increment),
    purge: (before) => Effect.sync(() => forget(DateTime.toEpochMillis(before)))
  })
}

export const layerMemory: Layer.Layer<RequestCounters> = Layer.sync(RequestCounters, makeMemory)
