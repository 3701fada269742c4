/**
 * A post's media at create time: each medium exists in the organization (auto-finalized when its
 * bytes are there), and the set fits each destination platform's media rules.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BlobStore } from "./BlobStore.js"
import { DomainError } from "../kernel/Errors.js"
import { MediaId, OrganizationId } from "../kernel/Ids.js"
import { Media } from "../domain/Media.js"
import * as MediaRules from "./MediaRules.js"
import * as PostMediaRules from "./PostMediaRules.js"
import { MediaStore } from "./MediaStore.js"
import type { Platform } from "../domain/Platform.js"
import type { PlatformContent } from "../domain/Post.js"
import * as Spans from "../kernel/Spans.js"
import { finalize } from "./MediaUpload.js"

export interface PostMediaInput {
  readonly organizationId: OrganizationId
  readonly mediaIds: ReadonlyArray<MediaId>
  readonly threadMediaIds: ReadonlyArray<MediaId>
  readonly platforms: ReadonlyArray<Platform>
  readonly platformContent: PlatformContent
  /** `publish` also requires the media a platform cannot post without; `draft` by default. */
  readonly mode?: MediaRules.CheckMode
  /** The media of each thread post, for the per-platform rules; the thread ids above when absent. */
  readonly threadParts?: ReadonlyArray<ReadonlyArray<MediaId>>
}

/** Whether a post names any medium, in its own media or a thread post's. */
export const carriesMedia = (input: PostMediaInput): boolean =>
  input.mediaIds.length > 0 || input.threadMediaIds.length > 0 ||
  (input.threadParts !== undefined && input.threadParts.some((part) => part.length > 0))

/**
 * `checkPostMedia` of a post that names no medium: only the platforms' rules (a platform that cannot
 * post without media refuses it), with nothing to look up, so it needs no service.
 */
export const checkWithoutMedia = (input: PostMediaInput): Effect.Effect<void, DomainError> =>
  input.platforms.length === 0 ? Effect.void : PostMediaRules.check({
    platforms: input.platforms,
    platformContent: input.platformContent,
    media: [],
    ...(input.threadParts === undefined ? {} : { threadMedia: input.threadParts.map(() => []) }),
    mode: input.mode ?? "draft"
  })

export const toMedium = (media: Media): MediaRules.PostMedium => ({
  kind: media.kind,
  mimeType: media.mimeType,
  size: media.size,
  ...(Option.isSome(media.durationMs) ? { durationMs: media.durationMs.value } : {})
})

/**
 * A post's media at create (or edit, or schedule) time: every id must be a medium of the organization
 * (`file_not_uploaded` names the unknown ones); pending uploads are finalized (their bytes must be
 * there, `file_not_uploaded` otherwise; counted like a complete); then each targeted platform's rules
 * (`validation_error` with `validation_errors[]{path, message, platform}`).
 */
export const checkPostMedia = (input: PostMediaInput, publicUrlsRequired = true) =>
  Effect.gen(function*() {
    const all = [...new Set([...input.mediaIds, ...input.threadMediaIds])]
    if (all.length === 0 && input.platforms.length === 0) return
    const found = all.length === 0 ? [] : yield* (yield* MediaStore).findByIds(input.organizationId, all)
    const byId = new Map(found.map((m) => [m.id as string, m]))
    const missing = all.filter((id) => !byId.has(id))
    if (missing.length > 0) {
      return yield* DomainError.fail(
        "file_not_uploaded",
        `Media not found in this organization: ${missing.join(", ")}. Upload files with POST /media/upload ` +
          "(or POST /media/upload-from-url) and send the media_id they return",
        { media_ids: missing }
      )
    }
    for (const id of all) {
      const media = byId.get(id)!
      if (media.status === "pending_upload") byId.set(id, yield* finalize(media))
      else if (media.status !== "ready") {
        return yield* DomainError.fail(
          "media_not_ready",
          `Media ${id} is ${media.status} and cannot be posted; upload the file again`,
          { media_ids: [id] }
        )
      }
    }
    const blobs = yield* BlobStore
    // Whether a platform that fetches media itself could be given a URL for each (HERALD_MEDIA_PUBLIC_URL).
    const mediaOf = (ids: ReadonlyArray<MediaId>) =>
      ids.map((id): MediaRules.PostMedium => {
        const media = byId.get(id)!
        return publicUrlsRequired
          ? { ...toMedium(media), hasPublicUrl: Option.isSome(blobs.publicUrl(media.storageKey)) }
          : toMedium(media)
      })
    yield* PostMediaRules.check({
      platforms: input.platforms,
      platformContent: input.platformContent,
      media: mediaOf(input.mediaIds),
      ...(input.threadParts === undefined ? {} : { threadMedia: input.threadParts.map(mediaOf) }),
      mode: input.mode ?? "draft"
    })
  }).pipe(Spans.withSpan("MediaLibrary.checkPostMedia"))
