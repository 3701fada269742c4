/**
 * Media as the platform clients receive them at publish time: the stored bytes, or an image's
 * rendition for the platform (made once and kept beside the original), and public links where a
 * platform fetches by URL.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { BlobStore } from "./BlobStore.js"
import { Crypto } from "../kernel/Crypto.js"
import { type MediaTarget } from "./DispatchMedia.js"
import { MediaId, OrganizationId } from "../kernel/Ids.js"
import * as MediaFitting from "./MediaFitting.js"
import * as MediaLinks from "./MediaLinks.js"
import { Media } from "../domain/Media.js"
import * as MediaRules from "./MediaRules.js"
import { MediaStore } from "./MediaStore.js"
import type { Platform } from "../domain/Platform.js"
import { type MediaRef, PublishError } from "../platforms/Platforms.js"
import { UsageCounters } from "../access/UsageCounters.js"
import { storedBytesEnd, storedBytesKey } from "./internal/MediaRecords.js"
import { toMedium } from "./PostMediaChecks.js"

/**
 * Where the rendition of a medium to a profile lives: beside the original, named by the profile, with
 * the format's extension (a web server publishing the media directory then sends the right type).
 */
export const renditionKey = (media: Media, profile: MediaFitting.Profile): string =>
  `${media.storageKey}.renditions/${profile.key}.${extensions[profile.format]}`

/** What is known of a stored rendition, kept next to it; written last, so its presence means done. */
const RenditionRecord = Schema.parseJson(Schema.Struct({
  size: Schema.NonNegativeInt,
  width: Schema.Int,
  height: Schema.Int
}))
type RenditionRecord = typeof RenditionRecord.Type

export const recordKey = (key: string) => `${key}.json`

/** The record of a rendition already written, if any. */
export const storedRendition = (key: string) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    if (!(yield* blobs.exists(recordKey(key)))) return Option.none<RenditionRecord>()
    const text = new TextDecoder().decode(yield* collectBytes(blobs.get(recordKey(key))))
    return Schema.decodeUnknownOption(RenditionRecord)(text)
  })

const extensions: Readonly<Record<MediaFitting.RenditionFormat, string>> = { jpeg: "jpg", png: "png", webp: "webp" }

const collectBytes = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  Stream.runFold(stream, [] as Array<Uint8Array>, (chunks, chunk) => {
    chunks.push(chunk)
    return chunks
  }).pipe(Effect.map((chunks) => {
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
    let offset = 0
    for (const chunk of chunks) {
      out.set(chunk, offset)
      offset += chunk.length
    }
    return out
  }))

const renditionFailed = (media: Media, platform: Platform, message: string) =>
  new PublishError({ kind: "media", message: `Media ${media.id} cannot be fitted for ${platform}: ${message}` })

/**
 * The rendition of `media` to `profile`: the stored one when it was made before (by any process),
 * else made from the original now and stored beside it (the original is only read). Two processes
 * making the same rendition at once both write the same bytes; each write replaces the file whole.
 */
export const renditionOf = (media: Media, profile: MediaFitting.Profile, platform: Platform) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const key = renditionKey(media, profile)
    const stored = yield* storedRendition(key)
    if (Option.isSome(stored)) return { key, ...stored.value }
    const renditions = yield* MediaFitting.ImageRenditions
    const source = yield* collectBytes(blobs.get(media.storageKey))
    const rendered = yield* renditions.render(source, profile).pipe(
      Effect.mapError((e) => renditionFailed(media, platform, e.message))
    )
    yield* blobs.put(key, Stream.make(rendered.bytes), profile.maxBytes).pipe(
      Effect.catchTag("BlobTooLarge", () => Effect.fail(renditionFailed(media, platform, "the rendition is too large")))
    )
    const record: RenditionRecord = { size: rendered.bytes.length, width: rendered.width, height: rendered.height }
    yield* blobs.put(
      recordKey(key),
      Stream.make(new TextEncoder().encode(Schema.encodeSync(RenditionRecord)(record))),
      64 * 1024
    ).pipe(Effect.catchTag("BlobTooLarge", () => Effect.fail(renditionFailed(media, platform, "record too large"))))
    // Counted once per rendition, however many processes wrote it at once (where counters are kept).
    const counters = yield* Effect.serviceOption(UsageCounters)
    if (Option.isSome(counters)) {
      const first = (yield* counters.value.increment(`storage:rendition:${key}`, storedBytesEnd, 1)) === 1
      if (first) yield* counters.value.increment(storedBytesKey(media.organizationId), storedBytesEnd, record.size)
    }
    return { key, ...record }
  }).pipe(Effect.withSpan("MediaLibrary.renditionOf"))

const renamed = (filename: string, format: MediaFitting.RenditionFormat): string => {
  const dot = filename.lastIndexOf(".")
  return `${dot > 0 ? filename.slice(0, dot) : filename}.${extensions[format]}`
}

/**
 * Every rendition key a medium can have (each platform, content type and fit), so that deleting the
 * medium removes them too.
 */
export const renditionKeys = (media: Media): ReadonlyArray<string> => {
  const keys = new Set<string>()
  for (const platform of Object.keys(MediaRules.acceptedTypes) as ReadonlyArray<Platform>) {
    for (const contentType of [undefined, "Story"]) {
      for (const fit of ["pad", "crop"] as const) {
        const planned = MediaFitting.plan(toMedium(media), { platform, contentType, fit })
        if (planned._tag === "Rendition") keys.add(renditionKey(media, planned.profile))
      }
    }
  }
  return [...keys]
}

/**
 * The media of a post as platform clients read them: bytes through the blob store, or its public URL.
 * With a `target` and an `ImageRenditions` service, each image goes out as its rendition for the
 * target's platform (made on first use, then reused), never as the original.
 */
export const resolveForDispatch = (
  organizationId: OrganizationId,
  ids: ReadonlyArray<MediaId>,
  target?: MediaTarget
) =>
  Effect.gen(function*() {
    const store = yield* MediaStore
    const blobs = yield* BlobStore
    const renditions = yield* Effect.serviceOption(MediaFitting.ImageRenditions)
    const signer = yield* Effect.serviceOption(MediaLinks.MediaLinkSigner)
    const crypto = yield* Effect.serviceOption(Crypto)
    // A signed short-lived link where Herald serves media itself, else the store's plain public URL.
    const linkTo = (key: string, contentType: string): Effect.Effect<Option.Option<string>> =>
      Option.isSome(signer) && Option.isSome(crypto)
        ? MediaLinks.signedUrl(key, contentType).pipe(
          Effect.provideService(MediaLinks.MediaLinkSigner, signer.value),
          Effect.provideService(Crypto, crypto.value),
          Effect.provideService(BlobStore, blobs)
        )
        : Effect.succeed(blobs.publicUrl(key))
    const found = yield* store.findByIds(organizationId, ids)
    const byId = new Map(found.map((m) => [m.id as string, m]))
    const refs: Array<MediaRef> = []
    for (const id of ids) {
      const media = byId.get(id)
      if (media === undefined) {
        return yield* new PublishError({ kind: "media", message: `Media ${id} was deleted from the library` })
      }
      if (media.status !== "ready") {
        return yield* new PublishError({ kind: "media", message: `Media ${id} is ${media.status}, not ready` })
      }
      const override = target?.settings?.["altText"]
      const altText = typeof override === "string" && override.trim() !== ""
        ? { altText: override.trim() }
        : Option.isSome(media.altText)
        ? { altText: media.altText.value }
        : {}
      const planned = target === undefined
        ? undefined
        : MediaFitting.plan(toMedium(media), {
          platform: target.platform,
          contentType: target.contentType,
          ...(MediaFitting.fitSetting(target.settings) === undefined
            ? {}
            : { fit: MediaFitting.fitSetting(target.settings)! })
        })
      if (target !== undefined && planned?._tag === "Unfit") {
        return yield* renditionFailed(media, target.platform, planned.message)
      }
      if (target !== undefined && planned?._tag === "Rendition" && Option.isSome(renditions)) {
        const made = yield* renditionOf(media, planned.profile, target.platform).pipe(
          Effect.provideService(MediaFitting.ImageRenditions, renditions.value)
        )
        refs.push({
          id: media.id,
          mimeType: MediaFitting.renditionMimeType(planned.profile.format),
          kind: media.kind,
          size: made.size,
          filename: renamed(media.filename, planned.profile.format),
          bytes: blobs.get(made.key),
          range: (start, end) => blobs.range(made.key, start, end),
          publicUrl: yield* linkTo(made.key, MediaFitting.renditionMimeType(planned.profile.format)),
          width: made.width,
          height: made.height,
          ...altText
        })
        continue
      }
      refs.push({
        id: media.id,
        mimeType: media.mimeType,
        kind: media.kind,
        size: media.size,
        filename: media.filename,
        bytes: blobs.get(media.storageKey),
        range: (start, end) => blobs.range(media.storageKey, start, end),
        publicUrl: yield* linkTo(media.storageKey, media.mimeType),
        ...(Option.isSome(media.width) ? { width: media.width.value } : {}),
        ...(Option.isSome(media.height) ? { height: media.height.value } : {}),
        ...(Option.isSome(media.durationMs) ? { durationMs: media.durationMs.value } : {}),
        ...altText
      })
    }
    return refs as ReadonlyArray<MediaRef>
  })
