import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { OrganizationId, UserId } from "../kernel/Ids.js"

/** Paid plans of the spec's allowance table, plus `trial`. */
export const Plan = Schema.Literal("trial", "lite", "starter", "growth", "scale")
export type Plan = typeof Plan.Type

export const SubscriptionStatus = Schema.Literal("trialing", "active", "past_due", "canceled", "unpaid", "none")
export type SubscriptionStatus = typeof SubscriptionStatus.Type

export class Organization extends Schema.Class<Organization>("Organization")({
  id: OrganizationId,
  name: Schema.String,
  plan: Plan,
  subscriptionStatus: SubscriptionStatus,
  trialEndsAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * Whether the organization may use the API: an active subscription, or a trial that has not ended.
 * Anything else is answered with 402 `subscription_required`.
 */
export const hasAccess = (org: Organization, now: DateTime.Utc): boolean => {
  switch (org.subscriptionStatus) {
    case "active":
      return true
    case "trialing":
      return org.trialEndsAt._tag === "None" || DateTime.lessThan(now, org.trialEndsAt.value)
    default:
      return false
  }
}

/** The allowances of the spec's plan table. A trial gets the Starter allowances. */
export interface PlanAllowance {
  readonly socialAccounts: number
  readonly aiCreditsPerMonth: number
  readonly teamSeats: number
}

export const planAllowances: Record<Plan, PlanAllowance> = {
  trial: { socialAccounts: 5, aiCreditsPerMonth: 25, teamSeats: 2 },
  lite: { socialAccounts: 2, aiCreditsPerMonth: 10, teamSeats: 1 },
  starter: { socialAccounts: 5, aiCreditsPerMonth: 25, teamSeats: 2 },
  growth: { socialAccounts: 10, aiCreditsPerMonth: 100, teamSeats: 3 },
  scale: { socialAccounts: 20, aiCreditsPerMonth: 500, teamSeats: 5 }
}

export const Role = Schema.Literal("owner", "admin", "member")
export type Role = typeof Role.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  organizationId: OrganizationId,
  email: Schema.String,
  name: Schema.String,
  role: Role,
  createdAt: Schema.DateTimeUtc
}) {}
