/**
 * How many AI credits an organization was charged in a time range: the read side of AI credit
 * accounting, which GET /analytics/summary reports. Whatever charges credits (the AI use cases)
 * provides this port; without it no credits have been charged and analytics report 0.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "./Errors.js"
import type { OrganizationId } from "./Ids.js"

/** A half-open range `[from, to)`; an absent bound is open. */
export interface CreditRange {
  readonly from?: DateTime.Utc
  readonly to?: DateTime.Utc
}

export class AiCreditLedger extends Context.Tag("@herald/core/AiCreditLedger")<AiCreditLedger, {
  /** Credits charged to the organization within the range (refunds already deducted). */
  readonly usedBetween: (organizationId: OrganizationId, range: CreditRange) => Effect.Effect<number, PersistenceError>
}>() {}
