/**
 * The port through which the publishing engine reads a post's media: defined by media (which
 * implements it over the library, `MediaLibrary.layerDispatchMedia`) and used by publishing.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PersistenceError } from "../kernel/Errors.js"
import { type MediaId, type OrganizationId } from "../kernel/Ids.js"
import { type MediaRef, PublishError } from "../platforms/Platforms.js"
import type { Platform } from "../domain/Platform.js"

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
