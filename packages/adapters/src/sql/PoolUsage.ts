/**
 * How this process uses its Postgres connections: every pool `SqlDatabase.layerPg` opens is tracked
 * while it is open, and `current` adds them up (a process normally has one). SQLite has no pool (one
 * connection behind a semaphore), so there is nothing to report there: `current` is none.
 */
import * as Effect from "effect/Effect"
import { globalValue } from "effect/GlobalValue"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type Pg from "pg"

export interface Usage {
  /** Connections open, busy or idle. */
  readonly total: number
  readonly idle: number
  /** Queries waiting for a connection. */
  readonly waiting: number
  /** The most connections the pools may open. */
  readonly max: number
}

const pools = globalValue(Symbol.for("@herald/adapters/sql/PoolUsage/pools"), () => new Set<Pg.Pool>())

/** Tracks `pool` for the life of the scope. */
export const track = (pool: Pg.Pool): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.sync(() => void pools.add(pool)), () => Effect.sync(() => void pools.delete(pool)))

/** The open pools' usage, summed; none when this process has no Postgres pool. */
export const current = (): Option.Option<Usage> => {
  if (pools.size === 0) return Option.none()
  let total = 0, idle = 0, waiting = 0, max = 0
  for (const pool of pools) {
    total += pool.totalCount
    idle += pool.idleCount
    waiting += pool.waitingCount
    max += pool.options.max ?? 10
  }
  return Option.some({ total, idle, waiting, max })
}
