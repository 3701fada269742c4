/**
 * `RequestCounters` over the SQL client's dialect. SQLite is the single-process embedded store: the
 * counters live in the server's memory (no write at all per request). On Postgres every process
 * shares the UNLOGGED `request_counters` table: no WAL, so no flush per request; the increments that
 * arrive while one statement is in flight are sent together as the next one (one round trip for a
 * burst), and each caller still gets the exact running total its own increment produced, so several
 * processes share a limit without slack.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Counter, makeMemory, RequestCounters, type WithinTotals } from "@herald/core/access/RequestCounters"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"

interface Waiter {
  readonly amount: number
  readonly done: Deferred.Deferred<number, PersistenceError>
}

interface Pending {
  readonly key: string
  readonly windowEnd: number
  amount: number
  readonly waiters: Array<Waiter>
}

interface WithinCall {
  readonly first: Counter
  readonly within: number
  readonly then: Counter
  readonly amount: number
  readonly done: Deferred.Deferred<WithinTotals, PersistenceError>
}

const slot = (key: string, windowEnd: number) => `${windowEnd}\u0000${key}`

export const makePg = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const runtime = yield* Effect.runtime<never>()
  const decode = Schema.decodeUnknown(Schema.Array(Schema.Struct({
    key: Schema.String,
    window_end: Schema.Union(Schema.Number, Schema.NumberFromString),
    count: Schema.Union(Schema.Number, Schema.NumberFromString)
  })))
  let queued = new Map<string, Pending>()
  let flushing = false

  /** Sends one batch: one upsert of every queued window, then answers each caller its own total. */
  const flushOnce = (batch: Map<string, Pending>) => {
    const rows = [...batch.values()].map((p) => ({ key: p.key, window_end: p.windowEnd, count: p.amount }))
    return sql`INSERT INTO request_counters (key, window_end, count)
      SELECT r.key, r.window_end, r.count
      FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(key TEXT, window_end BIGINT, count BIGINT)
      ORDER BY r.window_end, r.key
      ON CONFLICT (key, window_end) DO UPDATE SET count = request_counters.count + excluded.count
      RETURNING key, window_end, count`.pipe(
      Effect.flatMap(decode),
      Effect.flatMap((totals) =>
        Effect.forEach(totals, (row) => {
          const pending = batch.get(slot(row.key, Number(row.window_end)))
          if (pending === undefined) return Effect.void
          // The batch's total includes every waiter's amount: hand them out in arrival order.
          let total = Number(row.count) - pending.amount
          return Effect.forEach(pending.waiters, (w) => {
            total += w.amount
            return Deferred.succeed(w.done, total)
          }, { discard: true })
        }, { discard: true })
      ),
      Effect.catchAllCause((cause) => {
        const error = new PersistenceError({ message: "RequestCounters.increment failed", cause })
        return Effect.forEach(
          batch.values(),
          (p) => Effect.forEach(p.waiters, (w) => Deferred.fail(w.done, error), { discard: true }),
          { discard: true }
        )
      })
    )
  }

  const drain: Effect.Effect<void> = Effect.suspend(() => {
    if (queued.size === 0) {
      flushing = false
      return Effect.void
    }
    const batch = queued
    queued = new Map()
    return Effect.zipRight(flushOnce(batch), drain)
  })

  const increment = (key: string, windowEnd: DateTime.Utc, amount: number) =>
    Effect.flatMap(Deferred.make<number, PersistenceError>(), (done) => {
      const end = DateTime.toEpochMillis(windowEnd)
      const id = slot(key, end)
      const pending = queued.get(id) ?? { key, windowEnd: end, amount: 0, waiters: [] }
      pending.amount += amount
      pending.waiters.push({ amount, done })
      queued.set(id, pending)
      if (!flushing) {
        flushing = true
        Runtime.runFork(runtime)(drain)
      }
      return Deferred.await(done)
    })

  // `incrementWithin` calls queue apart: each batch is one statement that upserts every `first`
  // counter, then every `then` counter with the part that stayed within its limit (rows locked in
  // that order by every such batch), and returns each call's two totals by its position in the batch.
  const decodeWithin = Schema.decodeUnknown(Schema.Array(Schema.Struct({
    i: Schema.Number,
    first_total: Schema.Union(Schema.Number, Schema.NumberFromString),
    then_total: Schema.NullOr(Schema.Union(Schema.Number, Schema.NumberFromString))
  })))
  let queuedWithin: Array<WithinCall> = []
  let flushingWithin = false

  const flushWithin = (batch: Array<WithinCall>) => {
    const rows = batch.map((c, i) => ({
      i,
      key: c.first.key,
      window_end: DateTime.toEpochMillis(c.first.windowEnd),
      amount: c.amount,
      within: c.within,
      then_key: c.then.key,
      then_window_end: DateTime.toEpochMillis(c.then.windowEnd)
    }))
    return sql`WITH r AS MATERIALIZED (
        SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(i INT, key TEXT, window_end BIGINT,
          amount BIGINT, within BIGINT, then_key TEXT, then_window_end BIGINT)
      ), f AS (
        INSERT INTO request_counters (key, window_end, count)
        SELECT key, window_end, SUM(amount) FROM r GROUP BY key, window_end ORDER BY window_end, key
        ON CONFLICT (key, window_end) DO UPDATE SET count = request_counters.count + excluded.count
        RETURNING key, window_end, count
      ), w AS MATERIALIZED (
        SELECT r.i, r.amount, r.within, r.then_key, r.then_window_end,
          f.count - SUM(r.amount) OVER (PARTITION BY r.key, r.window_end)
            + SUM(r.amount) OVER (PARTITION BY r.key, r.window_end ORDER BY r.i) AS first_total
        FROM r JOIN f ON f.key = r.key AND f.window_end = r.window_end
      ), c AS MATERIALIZED (
        SELECT w.*, LEAST(w.amount, GREATEST(0, w.within - (w.first_total - w.amount))) AS counted FROM w
      ), t AS (
        INSERT INTO request_counters (key, window_end, count)
        SELECT then_key, then_window_end, SUM(counted) FROM c WHERE counted > 0
        GROUP BY then_key, then_window_end ORDER BY then_window_end, then_key
        ON CONFLICT (key, window_end) DO UPDATE SET count = request_counters.count + excluded.count
        RETURNING key, window_end, count
      )
      SELECT c.i, c.first_total, CASE WHEN c.counted > 0 THEN
          t.count - SUM(c.counted) OVER (PARTITION BY c.then_key, c.then_window_end)
            + SUM(c.counted) OVER (PARTITION BY c.then_key, c.then_window_end ORDER BY c.i)
        END AS then_total
      FROM c LEFT JOIN t ON t.key = c.then_key AND t.window_end = c.then_window_end`.pipe(
      Effect.flatMap(decodeWithin),
      Effect.flatMap((totals) =>
        Effect.forEach(totals, (row) => {
          const call = batch[row.i]
          return call === undefined
            ? Effect.void
            : Deferred.succeed(call.done, {
              firstTotal: Number(row.first_total),
              thenTotal: row.then_total === null ? undefined : Number(row.then_total)
            })
        }, { discard: true })
      ),
      Effect.catchAllCause((cause) => {
        const error = new PersistenceError({ message: "RequestCounters.incrementWithin failed", cause })
        return Effect.forEach(batch, (c) => Deferred.fail(c.done, error), { discard: true })
      })
    )
  }

  const drainWithin: Effect.Effect<void> = Effect.suspend(() => {
    if (queuedWithin.length === 0) {
      flushingWithin = false
      return Effect.void
    }
    const batch = queuedWithin
    queuedWithin = []
    return Effect.zipRight(flushWithin(batch), drainWithin)
  })

  const incrementWithin: RequestCounters["Type"]["incrementWithin"] = (first, within, then, amount) =>
    Effect.flatMap(Deferred.make<WithinTotals, PersistenceError>(), (done) => {
      queuedWithin.push({ first, within, then, amount, done })
      if (!flushingWithin) {
        flushingWithin = true
        Runtime.runFork(runtime)(drainWithin)
      }
      return Deferred.await(done)
    })

  return RequestCounters.of({
    increment,
    incrementWithin,
    purge: (before) =>
      sql`DELETE FROM request_counters WHERE window_end < ${DateTime.toEpochMillis(before)}`.pipe(
        Effect.asVoid,
        Effect.mapError((cause) => new PersistenceError({ message: "RequestCounters.purge failed", cause }))
      )
  })
})

export const make = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    pg: () => makePg,
    orElse: () => Effect.sync(makeMemory)
  }))

export const layer: Layer.Layer<RequestCounters, never, SqlClient.SqlClient> = Layer.effect(RequestCounters, make)
