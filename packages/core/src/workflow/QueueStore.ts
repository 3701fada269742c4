import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId, PostId } from "../kernel/Ids.js"
import type { Queue } from "./Queue.js"

/**
 * The posting queue of each organization (at most one) and which of its openings are taken.
 *
 * An opening is taken by a claim (organization, instant, post). A claim whose post no longer exists,
 * or was rescheduled away from the instant, no longer takes the opening. `claim` is atomic against
 * concurrent claims of the same instant, in one process or many (one wins; the others get false).
 */
export class QueueStore extends Context.Tag("@herald/core/workflow/QueueStore")<QueueStore, {
  readonly find: (organizationId: OrganizationId) => Effect.Effect<Option.Option<Queue>, PersistenceError>
  /** Creates or replaces the organization's queue (timezone and openings); claims are kept. */
  readonly save: (queue: Queue) => Effect.Effect<void, PersistenceError>
  /** The instants taken by live claims in `(after, until]`, as epoch milliseconds. */
  readonly taken: (
    organizationId: OrganizationId,
    after: DateTime.Utc,
    until: DateTime.Utc
  ) => Effect.Effect<ReadonlyArray<number>, PersistenceError>
  /** Takes the opening at `at` for `postId`; false when a live claim already holds it. */
  readonly claim: (
    organizationId: OrganizationId,
    at: DateTime.Utc,
    postId: PostId
  ) => Effect.Effect<boolean, PersistenceError>
  /**
   * Removes at most `limit` claims of instants before `before` (past openings are never allocated
   * again, so their claims only grow the table); returns how many were removed.
   */
  readonly pruneClaims: (before: DateTime.Utc, limit: number) => Effect.Effect<number, PersistenceError>
}>() {}
