import * as SqlClient from "@effect/sql/SqlClient"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import type { Claim, Completion } from "@herald/core/publishing/DispatchStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FastRows from "./internal/FastRows.js"
import { DestinationRow, Instant, LeaseColumns, orPersistence } from "./internal/Rows.js"

const ClaimedAt = Schema.Struct({ claimed_at: Schema.optional(Schema.NullOr(Instant)) })

const ClaimRows = Schema.Array(
  Schema.Struct({ destination: DestinationRow, lease: LeaseColumns, claimed: ClaimedAt })
)

/** A claimed row is a destination plus its lease columns (exported for the test of `fastClaim`). */
export const decodeClaimsBySchema = (rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(ClaimRows)(rows.map((row) => ({ destination: row, lease: row, claimed: row }))).pipe(
    Effect.map((decoded): ReadonlyArray<Claim> =>
      decoded.map(({ claimed, destination, lease }) => ({
        destination,
        leaseToken: lease.lease_token,
        leaseExpiresAt: lease.lease_expires_at,
        ...(claimed.claimed_at === undefined || claimed.claimed_at === null ? {} : { claimedAt: claimed.claimed_at })
      }))
    )
  )

/**
 * Epoch milliseconds as a driver hands them over: a number (SQLite) or an integer as text (node-postgres
 * returns BIGINT as text); anything else is for the schema.
 */
const epochMillis = (value: unknown): number | undefined =>
  typeof value === "number"
    ? (Number.isSafeInteger(value) ? value : undefined)
    : typeof value === "string" && /^-?\d{1,15}$/.test(value)
    ? Number(value)
    : undefined

/** The claim of one row without the schema (`FastRows`), or undefined: the schema decides. */
export const fastClaim = (row: unknown): Claim | undefined => {
  const destination = FastRows.destination(row)
  if (destination === undefined) return undefined
  const r = row as {
    readonly lease_token?: unknown
    readonly lease_expires_at?: unknown
    readonly claimed_at?: unknown
  }
  const expires = epochMillis(r.lease_expires_at)
  const claimedAt = r.claimed_at === undefined || r.claimed_at === null ? null : epochMillis(r.claimed_at)
  if (typeof r.lease_token !== "string" || expires === undefined || claimedAt === undefined) return undefined
  return {
    destination,
    leaseToken: r.lease_token,
    leaseExpiresAt: DateTime.unsafeMake(expires),
    ...(claimedAt === null ? {} : { claimedAt: DateTime.unsafeMake(claimedAt) })
  }
}

const decodeClaims = FastRows.decodeRows(fastClaim, decodeClaimsBySchema)

const byDue = (a: Claim, b: Claim): number =>
  DateTime.toEpochMillis(a.destination.dueAt) - DateTime.toEpochMillis(b.destination.dueAt) ||
  (a.destination.id < b.destination.id ? -1 : a.destination.id > b.destination.id ? 1 : 0)

const NextDue = Schema.Array(Schema.Struct({ next: Schema.NullOr(Instant) }))

type Member = readonly [
  string,
  string,
  number,
  string,
  number | null,
  string | null,
  string | null,
  string | null,
  number | null,
  number | null
]

/**
 * A member's values as one object of the JSON parameter. Text is made well-formed first, as the pg
 * driver's UTF-8 encoding of a bind parameter makes it (a lone surrogate becomes U+FFFD): Postgres
 * refuses the `\ud800` escape that JSON.stringify would write for one.
 */
const memberJson = (m: Member) => ({
  id: m[0],
  lease_token: m[1],
  attempts: m[2],
  status: m[3],
  due_at: m[4],
  error: wellFormed(m[5]),
  platform_post_id: wellFormed(m[6]),
  platform_post_url: wellFormed(m[7]),
  published_at: m[8],
  failed_at: m[9]
})

const wellFormed = (text: string | null): string | null =>
  text === null ? null : (text as unknown as { toWellFormed(): string }).toWellFormed()

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const ids = yield* IdGenerator
  /** `destinations.status` as a term SQLite does not look up in an index (see completeAll). */
  const publishing = sql.onDialectOrElse({
    pg: () => sql.literal("destinations.status"),
    orElse: () => sql.literal("+destinations.status")
  })

  /**
   * Every member's new column values travel in one list joined on the destination id (a VALUES list
   * on SQLite, one JSON parameter on Postgres); the
   * fence (still `publishing` under the same lease token and attempt) is checked per row, so a lost
   * claim is refused alone. NULL in a value column means "keep the stored one" (COALESCE), except
   * `error`, which a publish clears.
   */
  const completeAll = (items: ReadonlyArray<{ readonly claim: Claim; readonly completion: Completion }>) =>
    Effect.gen(function*() {
      if (items.length === 0) return []
      const now = yield* Clock.currentTimeMillis
      const rows = items.map(({ claim, completion }) => {
        const d = claim.destination
        const values = (() => {
          switch (completion._tag) {
            case "Published":
              return [
                "published",
                null,
                null,
                completion.platformPostId,
                completion.platformPostUrl,
                DateTime.toEpochMillis(completion.publishedAt),
                null
              ] as const
            case "Requeued":
              return [
                "queued",
                DateTime.toEpochMillis(completion.dueAt),
                completion.error,
                null,
                null,
                null,
                null
              ] as const
            case "Failed":
              return [
                "failed",
                null,
                completion.error,
                null,
                null,
                null,
                DateTime.toEpochMillis(completion.failedAt)
              ] as const
          }
        })()
        const member: Member = [d.id, claim.leaseToken, d.attempts, ...values]
        return member
      })
      const members = sql.onDialectOrElse({
        // One JSON parameter for the whole batch (Postgres): 10 bind parameters per member made the
        // statement's building and binding most of its cost in Node (@effect/sql's compile, pg's
        // per-parameter serializer), and Postgres parsed and bound 5,000 parameters per 500 members.
        pg: () =>
          sql`SELECT * FROM json_to_recordset(CAST(${JSON.stringify(rows.map(memberJson))} AS JSON)) AS members(
            id TEXT, lease_token TEXT, attempts INTEGER, status TEXT, due_at BIGINT, error TEXT,
            platform_post_id TEXT, platform_post_url TEXT, published_at BIGINT, failed_at BIGINT)`,
        // VALUES columns are column1…column10; the casts give the columns their names.
        orElse: () =>
          sql`SELECT CAST(column1 AS TEXT) AS id, CAST(column2 AS TEXT) AS lease_token,
            CAST(column3 AS INTEGER) AS attempts, CAST(column4 AS TEXT) AS status,
            CAST(column5 AS BIGINT) AS due_at, CAST(column6 AS TEXT) AS error,
            CAST(column7 AS TEXT) AS platform_post_id, CAST(column8 AS TEXT) AS platform_post_url,
            CAST(column9 AS BIGINT) AS published_at, CAST(column10 AS BIGINT) AS failed_at
          FROM (VALUES ${
            sql.csv(
              rows.map((m) =>
                sql`(${m[0]}, ${m[1]}, ${m[2]}, ${m[3]}, ${m[4]}, ${m[5]}, ${m[6]}, ${m[7]}, ${m[8]}, ${m[9]})`
              )
            )
          }) AS members`
      })
      // SQLite: the unary `+` (`publishing`) keeps the planner off `destinations_leases` (status = 'publishing'), so it
      // reads the members and looks each destination up by id. With that index it scanned every
      // destination in flight once per member: with 5,000 publishing (a due burst) a batch of 500
      // took 316 ms instead of 22 ms (EXPLAIN QUERY PLAN: SCAN destinations USING INDEX
      // destinations_leases, then the VALUES; now SCAN VALUES, SEARCH destinations by its primary key).
      const written = yield* sql<{ id: string }>`UPDATE destinations SET
          status = v.status,
          due_at = COALESCE(v.due_at, destinations.due_at),
          error = v.error,
          platform_post_id = COALESCE(v.platform_post_id, destinations.platform_post_id),
          platform_post_url = COALESCE(v.platform_post_url, destinations.platform_post_url),
          published_at = COALESCE(v.published_at, destinations.published_at),
          failed_at = COALESCE(v.failed_at, destinations.failed_at),
          lease_token = NULL, lease_expires_at = NULL, leased_by = NULL,
          updated_at = ${now}
        FROM (${members}) AS v
        WHERE destinations.id = v.id AND ${publishing} = 'publishing'
          AND destinations.lease_token = v.lease_token AND destinations.attempts = v.attempts
        RETURNING destinations.id`
      const ids = new Set(written.map((row) => row.id))
      return items.map(({ claim }) => ids.has(claim.destination.id))
    }).pipe(orPersistence("DispatchStore.completeAll"))

  return DispatchStore.of({
    claimsOverlap: sql.onDialectOrElse({ pg: () => true, orElse: () => false }),

    claimDue: ({ leaseFor, limit, now, workerId }) =>
      Effect.gen(function*() {
        if (limit <= 0) return []
        const batch = yield* ids.uuid
        const at = DateTime.toEpochMillis(now)
        const expires = at + Duration.toMillis(Duration.decode(leaseFor))
        // One statement per batch. On Postgres, rows another claimer has locked are skipped, so
        // concurrent claimers never take the same destination; SQLite has one writer at a time.
        const lock = sql.onDialectOrElse({
          pg: () => sql.literal("FOR UPDATE SKIP LOCKED"),
          orElse: () => sql.literal("")
        })
        // The pick is a materialized CTE so that it runs exactly once: as an `IN (subquery)` Postgres
        // may rescan it under some plans, and with SKIP LOCKED each scan can pick other rows. On
        // Postgres the picked ids are handed over as one array (`= ANY`), which the primary key index
        // answers row by row; `IN (SELECT …)` was planned as a hash join over a sequential scan of
        // every destination (the planner does not know the CTE holds at most `limit` rows).
        // Ties of due_at: by id on Postgres (its index is `(due_at, id)`); on SQLite in insertion order,
        // which `destinations_due (due_at)` holds after due_at (its entries end with the rowid), so the
        // claim reads `limit` index entries instead of sorting every due row (10,000 due in the same
        // second: ~2 ms per claim).
        const order = sql.onDialectOrElse({
          pg: () => sql.literal("due_at, id"),
          orElse: () => sql.literal("due_at, rowid")
        })
        const picked = sql.onDialectOrElse({
          pg: () => sql`id = ANY(ARRAY(SELECT id FROM picked))`,
          orElse: () => sql`id IN (SELECT id FROM picked)`
        })
        const rows = yield* sql`WITH picked AS MATERIALIZED (
            SELECT id FROM destinations
            WHERE status = 'queued' AND due_at <= ${at}
            ORDER BY ${order}
            LIMIT ${limit}
            ${lock}
          )
          UPDATE destinations SET
            status = 'publishing',
            attempts = attempts + 1,
            lease_token = CAST(${batch} AS TEXT) || ':' || id,
            lease_expires_at = ${expires},
            leased_by = ${workerId},
            claimed_at = ${at},
            updated_at = ${at}
          WHERE ${picked}
          RETURNING *`
        // RETURNING does not keep the subquery's order.
        return [...(yield* decodeClaims(rows))].sort(byDue)
      }).pipe(orPersistence("DispatchStore.claimDue")),

    complete: (claim, completion) => Effect.map(completeAll([{ claim, completion }]), (written) => written[0] === true),

    completeAll,

    nextDueAt: sql`SELECT MIN(due_at) AS next FROM destinations WHERE status = 'queued'`.pipe(
      Effect.flatMap(Schema.decodeUnknown(NextDue)),
      Effect.map((rows) => Option.fromNullable(rows[0]?.next)),
      orPersistence("DispatchStore.nextDueAt")
    ),

    expiredClaims: (now, limit) =>
      sql`SELECT * FROM destinations
        WHERE status = 'publishing' AND lease_expires_at < ${DateTime.toEpochMillis(now)}
        ORDER BY lease_expires_at, id
        LIMIT ${limit}`.pipe(
        Effect.flatMap(decodeClaims),
        orPersistence("DispatchStore.expiredClaims")
      ),

    renew: (claims, until) =>
      Effect.gen(function*() {
        if (claims.length === 0) return new Set<string>()
        // By id (the primary key), then the lease: not by scanning every destination in flight.
        const rows = yield* sql<{ lease_token: string }>`UPDATE destinations
          SET lease_expires_at = ${DateTime.toEpochMillis(until)}
          WHERE id IN ${sql.in(claims.map((c) => c.destination.id))} AND ${publishing} = 'publishing'
            AND lease_token IN ${sql.in(claims.map((c) => c.leaseToken))}
          RETURNING lease_token`
        return new Set(rows.map((row) => row.lease_token))
      }).pipe(orPersistence("DispatchStore.renew")),

    takeOverAbandoned: ({ deadBefore, leaseFor, limit, now, workerId }) =>
      Effect.gen(function*() {
        if (limit <= 0) return []
        const batch = yield* ids.uuid
        const at = DateTime.toEpochMillis(now)
        const expires = at + Duration.toMillis(Duration.decode(leaseFor))
        const lock = sql.onDialectOrElse({
          pg: () => sql.literal("FOR UPDATE OF destinations SKIP LOCKED"),
          orElse: () => sql.literal("")
        })
        // Exclusive like claimDue: rows another sweeper has locked are skipped (Postgres); SQLite has
        // one writer. The status is checked again in the UPDATE in case a completion won the race.
        // On Postgres the picked ids go over as one array, as in claimDue: `IN (SELECT …)` was planned
        // as a hash join over a sequential scan of every destination (EXPLAIN, 5,000 destinations).
        const picked = sql.onDialectOrElse({
          pg: () => sql`id = ANY(ARRAY(SELECT id FROM picked))`,
          orElse: () => sql`id IN (SELECT id FROM picked)`
        })
        const rows = yield* sql`WITH picked AS MATERIALIZED (
            SELECT id FROM destinations
            WHERE status = 'publishing' AND (
              lease_expires_at < ${at}
              OR leased_by IN (SELECT id FROM processes WHERE last_heartbeat_at < ${DateTime.toEpochMillis(deadBefore)})
            )
            ORDER BY lease_expires_at, id
            LIMIT ${limit}
            ${lock}
          )
          UPDATE destinations SET
            lease_token = CAST(${batch} AS TEXT) || ':' || id,
            lease_expires_at = ${expires},
            leased_by = ${workerId},
            updated_at = ${at}
          WHERE ${picked} AND status = 'publishing'
          RETURNING *`
        return [...(yield* decodeClaims(rows))].sort((a, b) =>
          DateTime.toEpochMillis(a.leaseExpiresAt) - DateTime.toEpochMillis(b.leaseExpiresAt) || byDue(a, b)
        )
      }).pipe(orPersistence("DispatchStore.takeOverAbandoned"))
  })
})

/** Needs an `IdGenerator` for lease tokens. */
export const layer: Layer.Layer<DispatchStore, never, SqlClient.SqlClient | IdGenerator> = Layer.effect(
  DispatchStore,
  make
)
