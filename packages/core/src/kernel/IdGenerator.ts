import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Every id the engine makes comes from here, so tests can make them predictable. */
export class IdGenerator extends Context.Tag("@herald/core/kernel/IdGenerator")<IdGenerator, {
  /** A random (v4) UUID. */
  readonly uuid: Effect.Effect<string>
}>() {}

/** A deterministic generator for tests: UUIDs counting up from 1. */
export const layerSequential: Layer.Layer<IdGenerator> = Layer.sync(IdGenerator, () => {
  let n = 0
  return IdGenerator.of({
    uuid: Effect.sync(() => {
      n += 1
      const hex = n.toString(16).padStart(12, "0")
      return `00000000-0000-4000-8000-${hex}`
    })
  })
})
