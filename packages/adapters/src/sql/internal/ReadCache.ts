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
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

/** How long another process's revocation or subscription change may go unseen by a server (Postgres; SQLite checks data_version and sees it at once). */
export const defaultTtlMillis = 250

export interface ReadCache<K, V> {
  /** The entry for `key`, or `load()` (made only on a miss: building a statement costs more than a hit). */
  readonly get: <E, R>(key: K, load: () => Effect.Effect<V, E, R>) => Effect.Effect<V, E, R>
  /** Forgets every entry (and any load in flight). */
  readonly invalidate: Effect.Effect<void>
}

export const make = <K, V>(options?: {
  readonly ttlMillis?: number
  readonly maxEntries?: number
  /** Which loaded values are kept (e.g. only rows found: a key created a moment ago is never "absent"). */
  readonly keep?: (value: V) => boolean
  /**
   * The database's change count as this connection sees it (`sqliteDataVersion`): an entry is
   * served only while it is unchanged, so another process's commit is seen at once.
   */
  readonly version?: Effect.Effect<unknown>
}): ReadCache<K, V> => {
  const ttl = options?.ttlMillis ?? defaultTtlMillis
  const maxEntries = options?.maxEntries ?? 10_000
  const entries = new Map<K, { readonly value: V; readonly at: number; readonly version: unknown }>()
  // Loads in flight by key: a miss that finds one of the same generation and version waits for it
  // instead of sending the same query again (every request in flight misses at once when an entry
  // expires). `invalidate` forgets them, so a read after a write never waits for a load begun before it.
  const loading = new Map<
    K,
    { readonly generation: number; readonly version: unknown; readonly done: Deferred.Deferred<V> }
  >()
  let generation = 0
  let invalidatedAt = Number.NEGATIVE_INFINITY
  const invalidate = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync(() => {
      generation++
      invalidatedAt = now
      entries.clear()
      loading.clear()
    }))
  const lookup = <E, R>(
    key: K,
    load: () => Effect.Effect<V, E, R>,
    now: number,
    seen: unknown
  ): Effect.Effect<V, E, R> => {
    const hit = entries.get(key)
    if (hit !== undefined && now >= hit.at && now - hit.at < ttl && hit.version === seen) {
      return Effect.succeed(hit.value)
    }
    const started = generation
    const inFlight = loading.get(key)
    if (inFlight !== undefined && inFlight.generation === started && inFlight.version === seen) {
      // A failed or interrupted load is not shared: the caller then runs its own.
      return Effect.catchAllCause(Deferred.await(inFlight.done), () => load())
    }
    const done = Deferred.unsafeMake<V>(FiberId.none)
    const mine = { generation: started, version: seen, done }
    loading.set(key, mine)
    return load().pipe(
      Effect.tap((value) =>
        Effect.sync(() => {
          if (generation !== started || now - invalidatedAt < ttl || options?.keep?.(value) === false) return
          if (entries.size >= maxEntries) entries.clear()
          entries.set(key, { value, at: now, version: seen })
        })
      ),
      Effect.onExit((exit) =>
        Effect.suspend(() => {
          if (loading.get(key) === mine) loading.delete(key)
          return Exit.isSuccess(exit) ? Deferred.succeed(done, exit.value) : Deferred.interrupt(done)
        })
      )
    )
  }
  // One context read and one clock read per lookup (the transaction check, the time and, on SQLite,
  // the data version), not a chain of service lookups and zips: every authenticated request runs
  // two or three of these.
  const get = <E, R>(key: K, load: () => Effect.Effect<V, E, R>): Effect.Effect<V, E, R> =>
    Effect.contextWithEffect((context: Context.Context<never>) =>
      Context.getOption(context, SqlClient.TransactionConnection)._tag === "Some"
        ? load()
        : Effect.clockWith((clock) => {
          const now = clock.unsafeCurrentTimeMillis()
          return options?.version === undefined
            ? lookup(key, load, now, undefined)
            : Effect.flatMap(options.version, (seen) => lookup(key, load, now, seen))
        })
    )
  return { get, invalidate }
}

/**
 * SQLite's `PRAGMA data_version` on the client's connection: it changes whenever another connection
 * (another process) commits to the file, so a cache checked against it serves nothing stale. The
 * value read is reused until the end of the current turn of the event loop (one query per turn for
 * every cache on the client, not one per lookup), so another process's commit is seen from the next
 * turn on. A failed read yields a fresh object, which matches no entry.
 */
export const sqliteDataVersion = (sql: SqlClient.SqlClient): Effect.Effect<unknown> => {
  const known = dataVersions.get(sql)
  if (known !== undefined) return known
  let current: { readonly value: unknown } | undefined
  const read = sql<{ readonly data_version: number }>`PRAGMA data_version`.pipe(
    Effect.map((rows): unknown => rows[0]?.data_version),
    Effect.orElseSucceed((): unknown => ({}))
  )
  const version = Effect.suspend(() =>
    current !== undefined ? Effect.succeed(current.value) : Effect.map(read, (value) => {
      current = { value }
      setImmediate(() => (current = undefined))
      return value
    })
  )
  dataVersions.set(sql, version)
  return version
}

const dataVersions = new WeakMap<SqlClient.SqlClient, Effect.Effect<unknown>>()

/** The version check for the client's dialect: SQLite's data_version; none elsewhere (TTL only). */
export const versionFor = (sql: SqlClient.SqlClient): Effect.Effect<unknown> | undefined =>
  sql.onDialectOrElse({ sqlite: () => sqliteDataVersion(sql), orElse: () => undefined })

/** `{ version }` for `make`'s options when the dialect has one, else nothing. */
export const withVersion = (sql: SqlClient.SqlClient): { readonly version?: Effect.Effect<unknown> } => {
  const version = versionFor(sql)
  return version === undefined ? {} : { version }
}
