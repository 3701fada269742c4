import * as SqlClient from "@effect/sql/SqlClient"
import { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore, successPrecisionMillis } from "@herald/core/accounts/AccountStore"
import { AccountId, type OrganizationId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Option from "effect/Option"
import { CredentialCipher } from "../security/CredentialCipher.js"
import * as FastRows from "./internal/FastRows.js"
import * as PgPrepared from "./internal/PgPrepared.js"
import * as ReadCache from "./internal/ReadCache.js"
import { AccountRow, DbNumber, NewAccountRow, orPersistence } from "./internal/Rows.js"

const InsertedId = Schema.Array(Schema.Struct({ id: Schema.compose(DbNumber, AccountId) }))

/**
 * The columns an account row is decoded from, named rather than `*`, so that the lookups every create
 * and every publish make can be prepared on Postgres (`PgPrepared`).
 */
const columns = "id, organization_id, platform, platform_account_id, account_name, avatar_url, is_active, " +
  "connection_flow, needs_reconnection, token_expires_at, last_success_at, recent_failures, credentials, created_at, " +
  "updated_at"

export const make = Effect.gen(function*() {
  const client = yield* SqlClient.SqlClient
  const sql = client.withoutTransforms()
  // With a cipher (optional service), the credentials column is sealed on write and opened on read.
  const cipher = yield* Effect.serviceOption(CredentialCipher)
  const seal = <R extends { readonly credentials: string | null }>(row: R) =>
    Option.isNone(cipher) || row.credentials === null
      ? Effect.succeed(row)
      : Effect.map(cipher.value.seal(row.credentials), (credentials) => ({ ...row, credentials }))
  const open = (rows: ReadonlyArray<Record<string, unknown>>) =>
    Option.isNone(cipher) ? Effect.succeed(rows) : Effect.forEach(rows, (row) =>
      typeof row.credentials === "string"
        ? Effect.map(cipher.value.open(row.credentials), (credentials) => ({ ...row, credentials }))
        : Effect.succeed(row))
  const decodeRows = FastRows.decodeRows(FastRows.account, Schema.decodeUnknown(Schema.Array(AccountRow)))
  const decode = (rows: ReadonlyArray<Record<string, unknown>>) => Effect.flatMap(open(rows), decodeRows)
  // An organization's account list (GET /accounts, /me) is served from memory for up to 250 ms and
  // emptied by this store's own writes: reading it cost a query, a credentials decryption per row and a
  // Schema decode per row on every request (see ReadCache.ts for the bounds).
  // Only on SQLite, where data_version shows any other process's commit at once: on Postgres another
  // process's new account must be usable at once (a post created right after the connect), so no cache.
  const version = ReadCache.versionFor(client)
  const lists = version === undefined
    ? undefined
    : ReadCache.make<OrganizationId, ReadonlyArray<SocialAccount>>({ version })
  // `listForWrite` on Postgres: the same list kept in memory for the writes that re-validate what they
  // used (`PostStore.insertChecked`), so a stale entry costs a re-run, never a wrong answer.
  const forWrite = version === undefined
    ? ReadCache.make<OrganizationId, ReadonlyArray<SocialAccount>>()
    : undefined
  const forgetForWrite = forWrite === undefined ? Effect.void : forWrite.invalidate
  const invalidate = lists === undefined ? forgetForWrite : lists.invalidate
  const written = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.ensuring(self, invalidate)
  const load = (organizationId: OrganizationId) =>
    sql`${sql.literal(PgPrepared.marker)} SELECT ${sql.literal(columns)} FROM social_accounts
      WHERE organization_id = ${organizationId} ORDER BY id`.pipe(
      Effect.flatMap(decode),
      orPersistence("AccountStore.list")
    )
  const list = (organizationId: OrganizationId) =>
    lists === undefined
      ? Effect.suspend(() => load(organizationId))
      : lists.get(organizationId, () => load(organizationId))

  return AccountStore.of({
    insert: (account) =>
      Effect.gen(function*() {
        const row = yield* Schema.encode(NewAccountRow)(account).pipe(Effect.flatMap(seal))
        const inserted = yield* sql`INSERT INTO social_accounts ${sql.insert(row)} RETURNING id`.pipe(
          Effect.flatMap(Schema.decodeUnknown(InsertedId))
        )
        return new SocialAccount({ ...account, id: inserted[0]!.id })
      }).pipe(written, orPersistence("AccountStore.insert")),
    update: (account) =>
      Schema.encode(AccountRow)(account).pipe(
        Effect.flatMap(seal),
        Effect.flatMap((row) =>
          sql`UPDATE social_accounts SET ${sql.update(row, ["id", "organization_id"])}
            WHERE id = ${account.id} AND organization_id = ${account.organizationId}`
        ),
        Effect.asVoid,
        written,
        orPersistence("AccountStore.update")
      ),
    recordSuccess: (organizationId, id, now) => {
      const at = DateTime.toEpochMillis(now)
      // The freshness rule of the dispatcher (`isFresh`), on the row as it is now.
      const stale = sql`(last_success_at IS NULL OR last_success_at <= ${at - successPrecisionMillis}
        OR recent_failures <> 0 OR needs_reconnection <> 0)`
      return sql.onDialectOrElse({
        // SKIP LOCKED: a row another transaction holds is left to it rather than waited for.
        pg: () =>
          sql`UPDATE social_accounts SET last_success_at = ${at}, recent_failures = 0, updated_at = ${at}
            WHERE id = (SELECT id FROM social_accounts WHERE organization_id = ${organizationId} AND id = ${id}
              AND ${stale} FOR UPDATE SKIP LOCKED)
            RETURNING ${sql.literal(columns)}`,
        // One writer at a time: nothing to skip.
        orElse: () =>
          sql`UPDATE social_accounts SET last_success_at = ${at}, recent_failures = 0, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id} AND ${stale}
            RETURNING ${sql.literal(columns)}`
      }).pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        Effect.tap((account) => Option.isSome(account) ? invalidate : Effect.void),
        orPersistence("AccountStore.recordSuccess")
      )
    },
    findById: (organizationId, id) =>
      sql`${sql.literal(PgPrepared.marker)} SELECT ${sql.literal(columns)} FROM social_accounts
        WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("AccountStore.findById")
      ),
    findByPlatformAccountId: (organizationId, platform, platformAccountId) =>
      sql`SELECT * FROM social_accounts WHERE organization_id = ${organizationId}
        AND platform = ${platform} AND platform_account_id = ${platformAccountId}`.pipe(
        Effect.flatMap(decode),
        Effect.map(Arr.head),
        orPersistence("AccountStore.findByPlatformAccountId")
      ),
    list,
    // SQLite: `list` itself (its cache checks data_version: as fresh as a read). Postgres: from memory
    // when there (not fresh); a load this call made itself is fresh, a load it shared is not (it may
    // have begun before another process's change that this caller must see).
    listForWrite: (organizationId) => {
      if (forWrite === undefined) return Effect.map(list(organizationId), (accounts) => ({ accounts, fresh: true }))
      return Effect.suspend(() => {
        let fresh = false
        return Effect.map(
          forWrite.get(organizationId, () => Effect.suspend(() => ((fresh = true), load(organizationId)))),
          (accounts) => ({ accounts, fresh })
        )
      })
    },
    forgetListsForWrite: forgetForWrite,
    delete: (organizationId, id) =>
      sql`DELETE FROM social_accounts WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        written,
        orPersistence("AccountStore.delete")
      )
  })
})

export const layer: Layer.Layer<AccountStore, never, SqlClient.SqlClient> = Layer.effect(AccountStore, make)
