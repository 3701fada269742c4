/**
 * A small read-through cache for the rows every authenticated request reads (the API key by its hash,
 * its organization). An entry is served for at most `ttlMillis` (Clock time), so a change made by
 * another process is seen within that bound; the store that owns the cache empties it on each of its
 * own writes, so a change made through this process is seen at once. Reads inside a transaction
 * bypass it (they may see the transaction's own uncommitted writes), and a load that overlaps a write
 * is not kept (a generation count), so nothing older than the write can be stored after it. A write
 * made inside a transaction empties the cache before its commit; on Postgres another connection may
 * still read the old row until then, so for `ttlMillis` after a write nothing loaded is kept.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** How long another process's revocation or subscription change may go unseen by a server. */
export const defaultTtlMillis = 250

export interface ReadCache<K, V> {
  readonly get: <E, R>(key: K, load: Effect.Effect<V, E, R>) => Effect.Effect<V, E, R>
  /** Forgets every entry (and any load in flight). */
  readonly invalidate: Effect.Effect<void>
}

export const make = <K, V>(options?: {
  readonly ttlMillis?: number
  readonly maxEntries?: number
  /** Which loaded values are kept (e.g. only rows found: a key created a moment ago is never "absent"). */
  readonly keep?: (value: V) => boolean
}): ReadCache<K, V> => {
  const ttl = options?.ttlMillis ?? defaultTtlMillis
  const maxEntries = options?.maxEntries ?? 10_000
  const entries = new Map<K, { readonly value: V; readonly at: number }>()
  let generation = 0
  let invalidatedAt = Number.NEGATIVE_INFINITY
  const invalidate = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync(() => {
      generation++
      invalidatedAt = now
      entries.clear()
    }))
  const get = <E, R>(key: K, load: Effect.Effect<V, E, R>): Effect.Effect<V, E, R> =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
      transaction._tag === "Some" ? load : Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const hit = entries.get(key)
        if (hit !== undefined && now >= hit.at && now - hit.at < ttl) return Effect.succeed(hit.value)
        const started = generation
        return Effect.tap(load, (value) =>
          Effect.sync(() => {
            if (generation !== started || now - invalidatedAt < ttl || options?.keep?.(value) === false) return
            if (entries.size >= maxEntries) entries.clear()
            entries.set(key, { value, at: now })
          }))
      }))
  return { get, invalidate }
}
