import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as ApiKey from "@herald/core/access/ApiKey"
import { DomainError } from "@herald/core/kernel/Errors"
import { AccountId } from "@herald/core/kernel/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as AccountView from "../AccountView.js"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"

const IdPath = Schema.Struct({
  id: Schema.String.annotations({ description: "The account's integer id; non-numeric values give 400 invalid_id" })
})

export const AccountList = Schema.Struct({ accounts: Schema.Array(AccountView.Account) })

export const AccountsGroup = HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.get("list", "/accounts")
      .addSuccess(Envelope.ok(AccountList))
      .annotate(OpenApi.Summary, "The organization's social accounts (scope read; not paginated)")
  )
  .add(
    HttpApiEndpoint.get("get", "/accounts/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(AccountView.Account))
      .annotate(OpenApi.Summary, "One social account (scope read)")
  )
  .add(
    HttpApiEndpoint.get("health", "/accounts/:id/health")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(AccountView.HealthReport))
      .annotate(OpenApi.Summary, "The account's health report (scope read)")
  )
  .addError(ApiGroup.errors.notFound)
  .pipe(ApiGroup.authenticated)

/** The path's account id: digits only (else 400 `invalid_id`); a number no account can have is 404. */
export const parseAccountId = (raw: string): Effect.Effect<AccountId, DomainError> => {
  if (!/^[0-9]+$/.test(raw)) return DomainError.fail("invalid_id", "Account id must be an integer")
  const n = Number(raw)
  return Schema.is(AccountId)(n) ? Effect.succeed(n) : DomainError.notFound("Account")
}

const findVisible = (raw: string) =>
  Effect.gen(function*() {
    yield* Auth.requireScope("read")
    const id = yield* parseAccountId(raw)
    return yield* Auth.visibleAccount(id)
  })

/**
 * `GET /accounts` for an authenticated caller, given as an argument: the fast path (`FastPath.ts`)
 * answers it without providing `CurrentKey` (a provide per request was ~5 us of the route).
 */
export const listFor = (principal: Auth.Principal) =>
  Effect.gen(function*() {
    const { key, organization } = yield* Auth.checkScope(principal, "read")
    const all = yield* (yield* AccountStore).list(organization.id).pipe(Effect.orDie)
    const now = yield* DateTime.now
    const visible = all.filter((account) => ApiKey.canUseAccount(key, account.id))
    // Built in its wire shape (`AccountList`), each account's JSON text memoised per account value.
    const texts = AccountView.withoutFacebookFlowDuplicates(visible).map((a) => AccountView.toAccountJson(a, now))
    return yield* Envelope.respondJson(`{"accounts":[${texts.join(",")}]}`)
  })

/** `GET /accounts` for the caller in `CurrentKey`. */
export const list = Effect.flatMap(Auth.CurrentKey, listFor)

export const AccountsLive = HttpApiBuilder.group(ApiGroup.apiOf(AccountsGroup), "accounts", (handlers) =>
  handlers
    .handle("list", () => list)
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        const account = yield* findVisible(path.id)
        return AccountView.toAccount(account, yield* DateTime.now)
      }))
    .handle("health", ({ path }) =>
      Effect.gen(function*() {
        const account = yield* findVisible(path.id)
        return AccountView.toHealthReport(account, yield* DateTime.now)
      })))
