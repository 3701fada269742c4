/**
 * How many due destinations a dispatcher round claims: small when the queue is quiet (a claim holds
 * leases and, on Postgres, row locks other workers skip), doubling while every claim comes back full
 * (a backlog: bigger batches share each transaction's and statement's fixed cost), back to the
 * smallest as soon as a claim comes back short (the backlog is gone).
 */

export interface Bounds {
  /** The first claim, and the claim after a short one. */
  readonly min: number
  /** No claim is larger. */
  readonly max: number
}

/** The claim after one of `limit` that returned `claimed` destinations. */
export const next = (limit: number, claimed: number, bounds: Bounds): number =>
  claimed >= limit ? Math.min(bounds.max, Math.max(bounds.min, limit * 2)) : bounds.min

/** Whether a round that claimed `claimed` of `limit` left due work behind (run the next at once). */
export const full = (limit: number, claimed: number): boolean => claimed >= limit
