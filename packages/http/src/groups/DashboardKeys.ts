/**
 * The developer page's API keys (/dashboard/api/keys, outside the spec): list with last use, create
 * (the secret is in the answer once), revoke. Every signed-in user sees the keys; only owners and
 * admins create or revoke them (spec Authentication rule 2). Creation is the same use case as
 * `herald keys create` (`Admin.createKey`), with the signed-in user as the key's creator.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as ApiKey from "@herald/core/access/ApiKey"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { DomainError } from "@herald/core/kernel/Errors"
import { AccountId, ApiKeyId } from "@herald/core/kernel/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Admin from "../Admin.js"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as RequestMiddleware from "../RequestMiddleware.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath } from "./DashboardSession.js"

export const KeyView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "pe_live_ and the first four hex characters" }),
  scopes: Schema.Array(ApiKey.Scope),
  account_ids: Schema.NullOr(Schema.Array(Schema.Int)),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DashboardKey" })

const maxNameLength = 100

export const CreateKeyBody = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(maxNameLength)),
  scopes: Schema.NonEmptyArray(ApiKey.Scope),
  account_ids: Schema.optional(Schema.NullOr(Schema.Array(AccountId)))
})

const KeyIdPath = Schema.Struct({ id: Schema.String })

export const DashboardKeysGroup = HttpApiGroup.make("dashboardKeys")
  .add(HttpApiEndpoint.get("list", "/keys").addSuccess(Schema.Struct({ data: Schema.Array(KeyView) })))
  .add(
    HttpApiEndpoint.post("create", "/keys")
      .setPayload(ApiGroup.payload(CreateKeyBody))
      .addSuccess(Schema.Struct({ key: KeyView, secret: Schema.String }), { status: 201 })
  )
  .add(HttpApiEndpoint.del("revoke", "/keys/:id").setPath(KeyIdPath).addSuccess(HttpApiSchema.NoContent))
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

const iso = (value: Option.Option<DateTime.Utc>): string | null =>
  Option.match(value, { onNone: () => null, onSome: DateTime.formatIso })

export const keyView = (key: ApiKey.ApiKey, lastUsed: Option.Option<DateTime.Utc>): typeof KeyView.Type => ({
  id: key.id,
  name: key.name,
  prefix: key.hint,
  scopes: key.scopes,
  account_ids: Option.getOrNull(key.accountIds),
  created_at: DateTime.formatIso(key.createdAt),
  last_used_at: iso(lastUsed),
  revoked_at: iso(key.revokedAt),
  expires_at: iso(key.expiresAt)
})

/** Every requested account must be the organization's (400 `invalid_accounts` names the others). */
const checkAccounts = (caller: SessionAuth.Caller, ids: ReadonlyArray<AccountId>) =>
  Effect.gen(function*() {
    const accounts = yield* (yield* AccountStore).list(caller.organization.id)
    const known = new Set<number>(accounts.map((a) => a.id))
    const unknown = ids.filter((id) => !known.has(id))
    if (unknown.length > 0) {
      return yield* DomainError.fail(
        "invalid_accounts",
        `Invalid account_ids: not found in this organization: ${unknown.join(", ")}`,
        { invalid_account_ids: unknown }
      )
    }
  })

/** The key, when it is the caller's organization's; otherwise 404 (another organization's looks absent). */
const ownKey = (caller: SessionAuth.Caller, rawId: string) =>
  Effect.gen(function*() {
    const notFound = DomainError.of("not_found", "API key not found")
    const id = yield* Schema.decodeUnknown(ApiKeyId)(rawId).pipe(Effect.mapError(() => notFound))
    const key = yield* (yield* ApiKeyStore).findById(id)
    if (Option.isNone(key) || key.value.organizationId !== caller.organization.id) return yield* Effect.fail(notFound)
    return key.value
  })

export const DashboardKeysLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardKeysGroup),
  "dashboardKeys",
  (handlers) =>
    handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          const keys = yield* ApiKeyStore
          const all = yield* keys.list(Option.some(caller.organization.id))
          const lastUsed = yield* keys.lastUsed(caller.organization.id)
          // Newest first, as a developer page lists them.
          const data = [...all].reverse().map((key) => keyView(key, Option.fromNullable(lastUsed.get(key.id))))
          return { data }
        }).pipe(Effect.orDie))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* SessionAuth.requireOwnerOrAdmin(caller)
          const accountIds = payload.account_ids ?? undefined
          if (accountIds !== undefined) {
            yield* checkAccounts(caller, accountIds).pipe(Effect.catchTag("PersistenceError", Effect.die))
          }
          const { key, token } = yield* Admin.createKey({
            organizationId: caller.organization.id,
            name: payload.name,
            scopes: [...new Set(payload.scopes)],
            accountIds,
            createdBy: caller.user.id
          }).pipe(Effect.orDie)
          yield* RequestMiddleware.annotateRequestLog("api_key_id", key.id)
          return HttpServerResponse.unsafeJson({ key: keyView(key, Option.none()), secret: token }, { status: 201 })
        }))
      .handle("revoke", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* SessionAuth.requireOwnerOrAdmin(caller)
          const key = yield* ownKey(caller, path.id).pipe(Effect.catchTag("PersistenceError", Effect.die))
          // Revoking a revoked key changes nothing and answers the same.
          yield* (yield* ApiKeyStore).revoke(key.id, yield* DateTime.now).pipe(Effect.orDie)
          yield* RequestMiddleware.annotateRequestLog("api_key_id", key.id)
          return HttpServerResponse.empty({ status: 204 })
        }))
)
