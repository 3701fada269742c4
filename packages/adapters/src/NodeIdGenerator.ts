import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { v7 } from "uuid"

/**
 * Time-ordered UUIDs (version 7, RFC 9562: the creation millisecond, then 74 random bits), from the
 * `uuid` package. Every id is a primary key, and a random (v4) key lands on a random page of its
 * index: each insert touched another page of the id indexes (posts, targets, destinations, events),
 * so a group commit wrote and synced about one page per row and index. In creation order, a batch's
 * rows share the indexes' last pages. An id's millisecond is no secret: the rows carry `created_at`.
 */
export const make: IdGenerator["Type"] = IdGenerator.of({
  uuid: Effect.sync(() => v7())
})

export const layer: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, make)
