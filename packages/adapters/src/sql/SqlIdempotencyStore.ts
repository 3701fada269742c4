/**
 * `IdempotencyStore` over SQL (SQLite and Postgres), in `idempotency_keys` (migration 0040). Taking a
 * key is one upsert: the row is inserted, or an expired row is replaced, and `RETURNING` says which
 * happened; a live row is left alone and read. Answers are sealed with the `CredentialCipher` when
 * one is provided (a webhook's create answer holds its signing secret).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type BeginResult,
  type IdempotencyClaim,
  type IdempotencyRecord,
  IdempotencyStore
} from "@herald/core/access/IdempotencyStore"
import { PersistenceError } from "@herald/core/kernel/Errors"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CredentialCipher } from "../security/CredentialCipher.js"
import { DbNumber, Instant, orPersistence } from "./internal/Rows.js"

const RecordRow = Schema.Struct({
  fingerprint: Schema.String,
  state: Schema.Literal("in_flight", "completed"),
  status_code: Schema.NullOr(DbNumber),
  response_body: Schema.NullOr(Schema.String),
  started_at: Instant
})

const millis = DateTime.toEpochMillis

/** How often `begin` looks again when the live row it saw was gone before it could read it. */
const beginTries = 3

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const cipher = yield* Effect.serviceOption(CredentialCipher)
  const seal = (body: string) => Option.isNone(cipher) ? Effect.succeed(body) : cipher.value.seal(body)
  const open = (body: string) => Option.isNone(cipher) ? Effect.succeed(body) : cipher.value.open(body)

  const take = (claim: IdempotencyClaim) =>
    sql`INSERT INTO idempotency_keys
        (organization_id, idempotency_key, fingerprint, state, holder, status_code, response_body, started_at, expires_at)
      VALUES (${claim.organizationId}, ${claim.key}, ${claim.fingerprint}, 'in_flight', ${claim.holder}, NULL, NULL,
        ${millis(claim.startedAt)}, ${millis(claim.expiresAt)})
      ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
        fingerprint = excluded.fingerprint, state = 'in_flight', holder = excluded.holder, status_code = NULL,
        response_body = NULL, started_at = excluded.started_at, expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= ${millis(claim.startedAt)}
      RETURNING holder`

  const live = (claim: IdempotencyClaim) =>
    sql`SELECT fingerprint, state, status_code, response_body, started_at FROM idempotency_keys
      WHERE organization_id = ${claim.organizationId} AND idempotency_key = ${claim.key}
        AND expires_at > ${millis(claim.startedAt)}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(RecordRow))),
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(Option.none<IdempotencyRecord>())
        if (row.state === "in_flight" || row.status_code === null || row.response_body === null) {
          return Effect.succeed(Option.some<IdempotencyRecord>({
            _tag: "InFlight",
            fingerprint: row.fingerprint,
            startedAt: row.started_at
          }))
        }
        const status = row.status_code
        return Effect.map(open(row.response_body), (body) =>
          Option.some<IdempotencyRecord>({
            _tag: "Completed",
            fingerprint: row.fingerprint,
            startedAt: row.started_at,
            answer: { status, body }
          }))
      })
    )

  const begin = (claim: IdempotencyClaim): Effect.Effect<BeginResult, unknown> =>
    Effect.gen(function*() {
      for (let i = 0; i < beginTries; i++) {
        if ((yield* take(claim)).length > 0) return { _tag: "Started" } as const
        const found = yield* live(claim)
        if (Option.isSome(found)) return { _tag: "Existing", record: found.value } as const
        // Released (or expired) between the two statements: try to take it again.
      }
      return yield* Effect.fail(new PersistenceError({ message: "the key changed hands repeatedly", cause: null }))
    })

  return IdempotencyStore.of({
    begin: (claim) => begin(claim).pipe(orPersistence("IdempotencyStore.begin")),

    complete: (claim, answer) =>
      Effect.flatMap(
        seal(answer.body),
        (body) =>
          sql`UPDATE idempotency_keys SET state = 'completed', status_code = ${answer.status}, response_body = ${body}
          WHERE organization_id = ${claim.organizationId} AND idempotency_key = ${claim.key}
            AND holder = ${claim.holder} AND state = 'in_flight'
          RETURNING holder`
      ).pipe(
        Effect.map((rows) => rows.length > 0),
        orPersistence("IdempotencyStore.complete")
      ),

    release: (claim) =>
      sql`DELETE FROM idempotency_keys
        WHERE organization_id = ${claim.organizationId} AND idempotency_key = ${claim.key}
          AND holder = ${claim.holder} AND state = 'in_flight'`.pipe(
        Effect.asVoid,
        orPersistence("IdempotencyStore.release")
      ),

    prune: (before, limit) =>
      limit <= 0 ? Effect.succeed(0) : sql`DELETE FROM idempotency_keys
        WHERE (organization_id, idempotency_key) IN (
          SELECT organization_id, idempotency_key FROM idempotency_keys
          WHERE expires_at <= ${millis(before)}
          ORDER BY expires_at
          LIMIT ${limit}
        ) AND expires_at <= ${millis(before)}
        RETURNING holder`.pipe(
        Effect.map((rows) => rows.length),
        orPersistence("IdempotencyStore.prune")
      )
  })
})

/** Seals recorded answers when a `CredentialCipher` is provided. */
export const layer: Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(IdempotencyStore, make)
