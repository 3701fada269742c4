/**
 * The account health the HTTP views report. Delegates to the core's account-health rules.
 */
import type { SocialAccount } from "@herald/core/Account"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"

export interface Assessment {
  readonly status: "healthy" | "warning" | "broken"
  readonly canPost: boolean
  readonly needsReconnection: boolean
  readonly reasons: ReadonlyArray<string>
}

const soonMillis = 7 * 24 * 3_600_000
const failureThreshold = 3

export const assess = (account: SocialAccount, now: DateTime.Utc): Assessment => {
  const broken: Array<string> = []
  const warning: Array<string> = []
  if (!account.isActive) broken.push("account_inactive")
  if (account.needsReconnection) broken.push("needs_reconnection")
  if (Option.isSome(account.tokenExpiresAt)) {
    const left = DateTime.toEpochMillis(account.tokenExpiresAt.value) - DateTime.toEpochMillis(now)
    if (left <= 0) broken.push("token_expired")
    else if (left <= soonMillis) warning.push("token_expiring_soon")
  }
  if (account.recentFailures >= failureThreshold) warning.push("recent_permanent_failures")
  const status = broken.length > 0 ? "broken" : warning.length > 0 ? "warning" : "healthy"
  return {
    status,
    canPost: broken.length === 0,
    needsReconnection: account.needsReconnection || broken.includes("token_expired"),
    reasons: [...broken, ...warning]
  }
}
