/**
 * The signal that wakes the publishing engine's loop when a post becomes due: a shared port, so the
 * use cases that create due work (posts, approvals) poke the engine without depending on it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"

/**
 * Wakes a sleeping dispatcher at once: the posts use cases poke it when they create work that is due
 * now (or earlier than the dispatcher planned to wake). Pokes coalesce; none is lost.
 */
export class DispatchSignal extends Context.Tag("@herald/core/DispatchSignal")<DispatchSignal, {
  readonly poke: Effect.Effect<void>
  /** Completes at the next poke, or at once if a poke came since the last `clear`. */
  readonly take: Effect.Effect<void>
  /** Forgets pokes that came before now (the dispatcher is about to look for work anyway). */
  readonly clear: Effect.Effect<void>
}>() {}

export const makeSignal: Effect.Effect<DispatchSignal["Type"]> = Effect.map(
  Queue.sliding<void>(1),
  (queue) =>
    DispatchSignal.of({
      poke: Effect.asVoid(Queue.offer(queue, undefined)),
      take: Queue.take(queue),
      clear: Effect.asVoid(Queue.takeAll(queue))
    })
)

export const layerSignal: Layer.Layer<DispatchSignal> = Layer.effect(DispatchSignal, makeSignal)

/** Pokes the dispatcher if one runs in this process; does nothing otherwise. */
export const poke: Effect.Effect<void> = Effect.flatMap(
  Effect.serviceOption(DispatchSignal),
  Option.match({ onNone: () => Effect.void, onSome: (signal) => signal.poke })
)
