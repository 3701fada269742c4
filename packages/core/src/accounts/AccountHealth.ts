/**
 * Account health from the account's own data (spec: Account health report). Every applicable reason
 * is reported, broken ones first, in a fixed order.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import type { SocialAccount } from "../domain/Account.js"

export type HealthStatus = "healthy" | "warning" | "broken"

export type BrokenReason = "account_inactive" | "needs_reconnection" | "token_expired"
export type WarningReason = "token_expiring_soon" | "recent_permanent_failures"
export type HealthReason = BrokenReason | WarningReason

export interface Assessment {
  readonly status: HealthStatus
  readonly canPost: boolean
  readonly needsReconnection: boolean
  readonly reasons: ReadonlyArray<HealthReason>
}

/** A token expiring within this window warns. */
export const expiringSoonWindow = Duration.days(7)
/** This many permanent failures since the last success warn. */
export const recentFailureThreshold = 3

export type HealthInput = Pick<SocialAccount, "isActive" | "needsReconnection" | "tokenExpiresAt" | "recentFailures">

export const assess = (account: HealthInput, now: DateTime.Utc): Assessment => {
  const reasons: Array<HealthReason> = []
  if (!account.isActive) reasons.push("account_inactive")
  if (account.needsReconnection) reasons.push("needs_reconnection")
  const expiry = Option.getOrUndefined(account.tokenExpiresAt)
  const expired = expiry !== undefined && !DateTime.lessThan(now, expiry)
  if (expired) reasons.push("token_expired")
  if (
    expiry !== undefined && !expired &&
    DateTime.lessThanOrEqualTo(expiry, DateTime.addDuration(now, expiringSoonWindow))
  ) {
    reasons.push("token_expiring_soon")
  }
  if (account.recentFailures >= recentFailureThreshold) reasons.push("recent_permanent_failures")
  const broken = account.needsReconnection || expired || !account.isActive
  return {
    status: broken ? "broken" : reasons.length > 0 ? "warning" : "healthy",
    canPost: !broken,
    needsReconnection: account.needsReconnection || expired,
    reasons
  }
}
