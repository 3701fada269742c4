/**
 * The change rows a store appends beside its analytics aggregates (writers that append signed
 * changes instead of updating shared aggregate rows, so concurrent writers never wait on one row),
 * as housekeeping sees them: `fold` moves up to `limit` of them into the aggregates without changing
 * any answer, and says how many it moved (0 for a store that keeps its aggregates current in place).
 * Housekeeping calls it in small batches, so the changes do not pile up between reads.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "../kernel/Errors.js"

export class RollupChanges extends Context.Tag("@herald/core/publishing/RollupChanges")<RollupChanges, {
  readonly fold: (limit: number) => Effect.Effect<number, PersistenceError>
}>() {}
