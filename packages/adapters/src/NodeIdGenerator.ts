import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"

/** Random v4 UUIDs from Node's `crypto.randomUUID`. */
export const make: IdGenerator["Type"] = IdGenerator.of({
  uuid: Effect.sync(() => NodeCrypto.randomUUID())
})

export const layer: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, make)
