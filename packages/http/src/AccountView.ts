/**
 * How a social account and its health report look on the wire, and which rows the account list shows.
 */
import type { SocialAccount } from "@herald/core/domain/Account"
import { Platform } from "@herald/core/domain/Platform"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Health from "@herald/core/accounts/AccountHealth"

export const HealthStatus = Schema.Literal("healthy", "warning", "broken")

export const AccountHealthSummary = Schema.Struct({
  status: HealthStatus,
  can_post: Schema.Boolean,
  needs_reconnection: Schema.Boolean
}).annotations({ identifier: "AccountHealthSummary" })

export const Account = Schema.Struct({
  id: Schema.Int,
  platform: Platform,
  account_name: Schema.String,
  avatar_url: Schema.String,
  is_active: Schema.Boolean,
  created_at: Schema.String,
  health: AccountHealthSummary
}).annotations({ identifier: "SocialAccount" })
export type Account = typeof Account.Type

export const HealthReport = Schema.Struct({
  account_id: Schema.Int,
  status: HealthStatus,
  can_post: Schema.Boolean,
  needs_reconnection: Schema.Boolean,
  reasons: Schema.Array(Schema.String).annotations({
    description: "account_inactive, needs_reconnection, token_expired, token_expiring_soon, recent_permanent_failures"
  }),
  token_expires_at: Schema.NullOr(Schema.String),
  last_success_at: Schema.NullOr(Schema.String),
  recent_failures: Schema.Int
}).annotations({ identifier: "AccountHealthReport" })
export type HealthReport = typeof HealthReport.Type

const iso = (value: Option.Option<DateTime.Utc>): string | null =>
  Option.match(value, { onNone: () => null, onSome: DateTime.formatIso })

/**
 * `created_at` as sent, formatted once per account value: the account list is served from a cache
 * (the same immutable values request after request), and formatting was ~4% of a `GET /accounts`.
 */
const createdAtIso = new WeakMap<SocialAccount, string>()

const createdAtOf = (account: SocialAccount): string => {
  let iso = createdAtIso.get(account)
  if (iso === undefined) {
    iso = DateTime.formatIso(account.createdAt)
    createdAtIso.set(account, iso)
  }
  return iso
}

export const toAccount = (account: SocialAccount, now: DateTime.Utc): Account => {
  const health = Health.assess(account, now)
  return {
    id: account.id,
    platform: account.platform,
    account_name: account.accountName,
    avatar_url: account.avatarUrl,
    is_active: account.isActive,
    created_at: createdAtOf(account),
    health: { status: health.status, can_post: health.canPost, needs_reconnection: health.needsReconnection }
  }
}

/**
 * An account's JSON text as `toAccount` at `now` would give it, memoised per account value with the
 * health it was made for: the health is assessed on every call (it moves with `now`), and the text is
 * made again whenever it differs; every other field is the value's own (a changed account is a new
 * value). `JSON.stringify` of the list was ~5% of a `GET /accounts`.
 */
const accountText = new WeakMap<SocialAccount, { readonly health: Health.Assessment; readonly text: string }>()

export const toAccountJson = (account: SocialAccount, now: DateTime.Utc): string => {
  const health = Health.assess(account, now)
  const known = accountText.get(account)
  if (
    known !== undefined && known.health.status === health.status && known.health.canPost === health.canPost &&
    known.health.needsReconnection === health.needsReconnection
  ) return known.text
  const text = JSON.stringify(toAccount(account, now))
  accountText.set(account, { health, text })
  return text
}

export const toHealthReport = (account: SocialAccount, now: DateTime.Utc): HealthReport => {
  const health = Health.assess(account, now)
  return {
    account_id: account.id,
    status: health.status,
    can_post: health.canPost,
    needs_reconnection: health.needsReconnection,
    reasons: health.reasons,
    token_expires_at: iso(account.tokenExpiresAt),
    last_success_at: iso(account.lastSuccessAt),
    recent_failures: account.recentFailures
  }
}

const normalName = (name: string): string => name.trim().replace(/^@/, "").toLowerCase()

/**
 * Hides Instagram rows connected through Facebook Login that have an Instagram-Login (`direct`)
 * sibling among `accounts`: the same account name (case and a leading `@` ignored). The two logins
 * report different ids for one professional account, so the name is what they share; an equal
 * platform account id also counts, for stores that allow it.
 */
export const withoutFacebookFlowDuplicates = (accounts: ReadonlyArray<SocialAccount>): Array<SocialAccount> => {
  const direct = accounts.filter((a) => a.platform === "instagram" && a.connectionFlow === "direct")
  const ids = new Set(direct.map((a) => a.platformAccountId))
  const names = new Set(direct.map((a) => normalName(a.accountName)))
  return accounts.filter((a) =>
    !(a.platform === "instagram" && a.connectionFlow === "facebook" &&
      (ids.has(a.platformAccountId) || names.has(normalName(a.accountName))))
  )
}
