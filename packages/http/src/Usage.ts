/**
 * Quota usage an organization's `/me` reports. AI credits are a `UsageCounters` counter per
 * organization and calendar month (UTC); whoever spends credits increments the same counter.
 */
import * as AiCredits from "@herald/core/ai/AiCredits"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"

export const aiCreditsKey = (organizationId: OrganizationId): string => AiCredits.counterKey(organizationId)

/** The end of the calendar month (UTC) that contains `now`: the AI-credit window. */
export const monthWindowEnd = (now: DateTime.Utc): DateTime.Utc => {
  const date = DateTime.toDateUtc(now)
  return DateTime.unsafeMake(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1))
}

/**
 * Bytes of media an organization stores, and its quota (null: none). Optional: without it `/me`
 * reports 0 bytes used and no limit.
 */
export class StorageUsage extends Context.Tag("@herald/http/StorageUsage")<StorageUsage, {
  readonly usedBytes: (organizationId: OrganizationId) => Effect.Effect<number>
  readonly limitBytes: number | null
}>() {}
