/**
 * The AI credit ledger over SQL. A reservation is one transaction: the month's counter row in
 * `usage_counters` is bumped with an upsert (which locks that row, so concurrent reservations of one
 * organization serialize on it, on Postgres as on SQLite) and rolled back when the new total passes
 * the allowance; otherwise the charge row is written beside it. Settling gives back the unused part
 * to the same counter, fenced on the charge not being settled yet.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { AiCreditLedger, type Reservation } from "@herald/core/ai/AiCredits"
import * as AiCredits from "@herald/core/ai/AiCredits"
import * as DateTime from "effect/DateTime"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { CountRow, DbNumber, orPersistence } from "./internal/Rows.js"

class OverLimit extends Data.TaggedError("OverLimit")<{ readonly used: number }> {}

const decodeCount = Schema.decodeUnknown(Schema.Array(CountRow))
const decodeSettled = Schema.decodeUnknown(Schema.Array(Schema.Struct({ reserved: DbNumber, window_end: DbNumber })))
const decodeSum = Schema.decodeUnknown(Schema.Array(Schema.Struct({ total: Schema.NullOr(DbNumber) })))

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()

  const bump = (key: string, windowEnd: number, amount: number) =>
    sql`INSERT INTO usage_counters (key, window_end, count)
      VALUES (${key}, ${windowEnd}, ${amount})
      ON CONFLICT (key, window_end) DO UPDATE SET count = usage_counters.count + excluded.count
      RETURNING count`.pipe(
      Effect.flatMap(decodeCount),
      Effect.map((rows) => rows[0]?.count ?? 0)
    )

  return AiCreditLedger.of({
    reserve: (charge) => {
      const key = AiCredits.counterKey(charge.organizationId)
      const windowEnd = DateTime.toEpochMillis(charge.windowEnd)
      return sql.withTransaction(Effect.gen(function*() {
        const used = yield* bump(key, windowEnd, charge.credits)
        if (used > charge.limit) return yield* Effect.fail(new OverLimit({ used: used - charge.credits }))
        yield* sql`INSERT INTO ai_credit_charges
          (id, organization_id, operation, model, reserved, credits, settled, window_end, created_at)
          VALUES (${charge.id}, ${charge.organizationId}, ${charge.operation}, ${charge.model}, ${charge.credits},
            ${charge.credits}, 0, ${windowEnd}, ${DateTime.toEpochMillis(charge.createdAt)})`
        return { _tag: "Reserved", used } satisfies Reservation
      })).pipe(
        Effect.catchTag("OverLimit", (e) => Effect.succeed<Reservation>({ _tag: "Insufficient", used: e.used })),
        orPersistence("AiCreditLedger.reserve")
      )
    },
    settle: (organizationId, chargeId, credits) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`UPDATE ai_credit_charges
          SET credits = CASE WHEN ${credits} < reserved THEN ${credits} ELSE reserved END, settled = 1
          WHERE id = ${chargeId} AND organization_id = ${organizationId} AND settled = 0
          RETURNING reserved, window_end`.pipe(Effect.flatMap(decodeSettled))
        const row = rows[0]
        if (row === undefined) return false
        const giveBack = row.reserved - Math.min(credits, row.reserved)
        if (giveBack > 0) yield* bump(AiCredits.counterKey(organizationId), row.window_end, -giveBack)
        return true
      })).pipe(orPersistence("AiCreditLedger.settle")),
    usedBetween: (organizationId, from, to) =>
      sql`SELECT SUM(credits) AS total FROM ai_credit_charges
        WHERE organization_id = ${organizationId}
          AND created_at >= ${DateTime.toEpochMillis(from)} AND created_at < ${DateTime.toEpochMillis(to)}`.pipe(
        Effect.flatMap(decodeSum),
        Effect.map((rows) => rows[0]?.total ?? 0),
        orPersistence("AiCreditLedger.usedBetween")
      )
  })
})

export const layer: Layer.Layer<AiCreditLedger, never, SqlClient.SqlClient> = Layer.effect(AiCreditLedger, make)
