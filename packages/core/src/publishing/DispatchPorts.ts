/**
 * The services the dispatcher uses besides the stores: the media a publish sends, the credentials of
 * an account, and the signal that wakes the loop when a post becomes due.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type { PersistenceError } from "../kernel/Errors.js"
import { type MediaId, type OrganizationId } from "../kernel/Ids.js"
import { type MediaRef, PublishError } from "../platforms/Platforms.js"
import type { Platform } from "../platforms/Platform.js"

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

/**
 * Turns a post's media ids into what a platform client reads. Optional: without it, a destination
 * whose post carries media fails permanently with a message saying media storage is not configured.
 */
export class DispatchMedia extends Context.Tag("@herald/core/DispatchMedia")<DispatchMedia, {
  readonly resolve: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<MediaId>,
    /** The destination's platform (and Instagram content type, settings): the media fitted to it. */
    target?: MediaTarget
  ) => Effect.Effect<ReadonlyArray<MediaRef>, PublishError | PersistenceError>
}>() {}

/** Where media are going, so each can be handed over as its rendition for that platform. */
export interface MediaTarget {
  readonly platform: Platform
  readonly contentType?: string | undefined
  readonly settings?: { readonly [key: string]: unknown } | undefined
}
