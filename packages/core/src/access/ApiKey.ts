import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AccountId, ApiKeyId, OrganizationId, UserId } from "../kernel/Ids.js"

export const Scope = Schema.Literal("read", "write", "ai")
export type Scope = typeof Scope.Type

/** The fixed live prefix that clients of the API already expect. */
export const keyPrefix = "pe_live_"

/** `pe_live_` followed by 32 lowercase or uppercase hex characters. */
export const keyPattern = /^pe_live_[0-9a-fA-F]{32}$/

export const isWellFormedKey = (token: string): boolean => keyPattern.test(token)

/**
 * An API key as stored: only the SHA-256 of the key is kept, plus a short display hint
 * (`pe_live_` and the first four hex characters) so a user can tell keys apart.
 */
export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: ApiKeyId,
  organizationId: OrganizationId,
  createdBy: Schema.OptionFromNullOr(UserId),
  name: Schema.String,
  hint: Schema.String,
  hash: Schema.String,
  scopes: Schema.Array(Scope),
  /** None: every account of the organization. Some: only these accounts. */
  accountIds: Schema.OptionFromNullOr(Schema.Array(AccountId)),
  expiresAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  revokedAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc
}) {}

export type KeyState = "valid" | "revoked" | "expired"

/** Revocation wins over expiry: a revoked key is reported as revoked whatever its expiry. */
export const keyState = (key: ApiKey, now: DateTime.Utc): KeyState => {
  if (Option.isSome(key.revokedAt)) return "revoked"
  if (Option.isSome(key.expiresAt) && !DateTime.lessThan(now, key.expiresAt.value)) return "expired"
  return "valid"
}

export const hasScope = (key: ApiKey, scope: Scope): boolean => key.scopes.includes(scope)

/** Whether the key may see and target the account. */
export const canUseAccount = (key: ApiKey, accountId: AccountId): boolean =>
  Option.match(key.accountIds, { onNone: () => true, onSome: (ids) => ids.includes(accountId) })
