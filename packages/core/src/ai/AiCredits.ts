/**
 * AI credits: what each generation costs, each plan's monthly allowance, and the ledger that charges
 * them. A charge is reserved before the provider is called (refused when it would take the month's
 * total past the allowance, so concurrent calls can never overspend) and settled afterwards at what
 * was really delivered (0 on failure: nothing charged).
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId } from "../kernel/Ids.js"
import type { ImageModel } from "./ImageGenerator.js"
import { type Plan, planAllowances } from "../access/Organization.js"

/** One credit per returned caption (spec, Limits). */
export const creditsPerCaption = 1

/** Credits per generated image, by model. */
export const imageCredits: Record<ImageModel, number> = { standard: 2, hd: 4 }

/** The plan's credits per calendar month (UTC): Lite 10, Starter 25, Growth 100, Scale 500; a trial gets Starter's. */
export const monthlyAllowance = (plan: Plan): number => planAllowances[plan].aiCreditsPerMonth

/** The `UsageCounters` counter of an organization's credits (what `GET /me` reads), per month window. */
export const counterKey = (organizationId: OrganizationId): string => `ai_credits:${organizationId}`

/** The end of the calendar month (UTC) that contains `now`: the credit window. */
export const monthWindowEnd = (now: DateTime.Utc): DateTime.Utc => {
  const date = DateTime.toDateUtc(now)
  return DateTime.unsafeMake(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1))
}

export const Operation = ["caption", "image"] as const
export type Operation = typeof Operation[number]

export interface Charge {
  readonly id: string
  readonly organizationId: OrganizationId
  readonly operation: Operation
  /** The provider's model name, for the record. */
  readonly model: string
  readonly credits: number
  /** The month's allowance; the reservation is refused past it. */
  readonly limit: number
  readonly windowEnd: DateTime.Utc
  readonly createdAt: DateTime.Utc
}

/** `used`: the month's total after the reservation (`Reserved`) or as it stands (`Insufficient`). */
export type Reservation =
  | { readonly _tag: "Reserved"; readonly used: number }
  | { readonly _tag: "Insufficient"; readonly used: number }

export class AiCreditLedger extends Context.Tag("@herald/core/AiCreditLedger")<AiCreditLedger, {
  /**
   * Atomically adds `credits` to the organization's month and records the charge, unless that would
   * pass `limit`; then nothing changes. Concurrent reservations serialize on the month's counter.
   */
  readonly reserve: (charge: Charge) => Effect.Effect<Reservation, PersistenceError>
  /**
   * Settles a reserved charge at `credits` (at most what was reserved), giving the rest back. A charge
   * already settled is left as it is (returns false).
   */
  readonly settle: (
    organizationId: OrganizationId,
    chargeId: string,
    credits: number
  ) => Effect.Effect<boolean, PersistenceError>
  /** Credits charged to the organization from `from` (inclusive) to `to` (exclusive), by charge time. */
  readonly usedBetween: (
    organizationId: OrganizationId,
    from: DateTime.Utc,
    to: DateTime.Utc
  ) => Effect.Effect<number, PersistenceError>
}>() {}
