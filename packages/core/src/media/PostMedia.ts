/**
 * The port through which the posts use cases check a post's media: defined by media (which
 * implements it over the library, `MediaLibrary.layerPostMedia`) and used by posts.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { DomainError, PersistenceError } from "../kernel/Errors.js"
import type { MediaId, OrganizationId } from "../kernel/Ids.js"
import type { Platform } from "../domain/Platform.js"
import type { PlatformContent } from "../domain/Post.js"

/**
 * Checks that a post's media exist in the organization and suit its platforms (and finalizes
 * pending uploads). Optional: without it `media_ids` are only checked to be UUIDs.
 */
export class PostMedia extends Context.Tag("@herald/core/Posts/PostMedia")<PostMedia, {
  readonly check: (input: {
    readonly organizationId: OrganizationId
    readonly mediaIds: ReadonlyArray<MediaId>
    readonly threadMediaIds: ReadonlyArray<MediaId>
    readonly platforms: ReadonlyArray<Platform>
    readonly platformContent: PlatformContent
    /** `publish` also requires the media a platform cannot post without; `draft` checks what is attached. */
    readonly mode?: "draft" | "publish"
  }) => Effect.Effect<void, DomainError | PersistenceError>
}>() {}
