/**
 * The events a publish writes in its outcome's transaction: `post.publishing`, `post.published`,
 * `post.failed`, `post.partially_failed` and their data.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Destination } from "../domain/Destination.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { unchecked } from "../kernel/Unchecked.js"
import { type EventId, type OrganizationId } from "../kernel/Ids.js"

// The engine's own events are made of values it already holds typed: the class constructor (a schema
// validation per event, then copies) showed in the dispatch profiles, so it is skipped here.
export const makeEvent = (organizationId: OrganizationId, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    const id = yield* ids.uuid
    const createdAt = yield* DateTime.now
    return unchecked(Event, { id: id as EventId, organizationId, type, data, createdAt, traceParent: Option.none() })
  })

/**
 * `makeEvent` for a batch, without an effect per event: the batch's `count` ids are made in one step,
 * every event is stamped with the batch's `now`, and each call takes the next id.
 */
export const eventsAt = (count: number, createdAt: DateTime.Utc) =>
  Effect.map(
    Effect.flatMap(IdGenerator, (ids) => Effect.replicateEffect(ids.uuid, count)),
    (ids) => {
      let next = 0
      return (
        organizationId: OrganizationId,
        type: EventType,
        data: EventData,
        traceParent: Option.Option<string> = Option.none()
      ): Event => {
        if (next >= ids.length) throw new Error(`Dispatcher: a batch made more than its ${count} events`)
        return unchecked(Event, { id: ids[next++] as EventId, organizationId, type, data, createdAt, traceParent })
      }
    }
  )

export const destinationData = (d: Destination) => ({
  post_id: d.postId,
  destination_id: d.id,
  platform: d.platform,
  account_id: d.accountId,
  account_name: d.accountName
})
