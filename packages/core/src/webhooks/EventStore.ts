import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { Event } from "./Event.js"
import type { OrganizationId, PostId } from "../kernel/Ids.js"

/**
 * The outbox. Append inside the transaction of the state change that causes the events; the webhook
 * deliverer reads from here.
 */
export class EventStore extends Context.Tag("@herald/core/webhooks/EventStore")<EventStore, {
  readonly append: (events: ReadonlyArray<Event>) => Effect.Effect<void, PersistenceError>
  /** The organization's events, oldest first; optionally only those whose data names the post. */
  readonly list: (
    organizationId: OrganizationId,
    options?: { readonly postId?: PostId; readonly limit?: number }
  ) => Effect.Effect<ReadonlyArray<Event>, PersistenceError>
  readonly findById: (id: string) => Effect.Effect<Option.Option<Event>, PersistenceError>
  /**
   * Removes at most `limit` events created before `before` (in no particular order), except those a webhook
   * delivery still pending has to send (the deliverer reads its event when it sends); returns how many
   * it removed. One short statement per call: housekeeping calls it in batches.
   */
  readonly prune: (before: DateTime.Utc, limit: number) => Effect.Effect<number, PersistenceError>
}>() {}
