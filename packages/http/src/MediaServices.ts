/**
 * The media library as `herald serve` and `herald worker` run it: the blob store (under
 * `<data-dir>/media` or in an S3 bucket), the inspector, the URL importer, the signing keys, the
 * upload budget, and the posts and dispatch hooks, configured from the environment.
 */
import * as MediaInspector from "@herald/adapters/media/MediaInspector"
import * as SharpRenditions from "@herald/adapters/media/SharpRenditions"
import * as UrlImporter from "@herald/adapters/media/UrlImporter"
import { CredentialCipher } from "@herald/adapters/security/CredentialCipher"
import type { BlobStore } from "@herald/core/media/BlobStore"
import type { DispatchMedia } from "@herald/core/media/DispatchMedia"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import * as MediaLinks from "@herald/core/media/MediaLinks"
import type { MediaStore } from "@herald/core/media/MediaStore"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as BlobStorage from "./BlobStorage.js"
import { PublicBaseUrl } from "./groups/Media.js"

export interface MediaOptions {
  /** The data dir; blobs go to `<dataDir>/media` unless `HERALD_S3_BUCKET` names a bucket. */
  readonly dataDir: string
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Platforms publish through the sandbox: no medium needs a public URL at create time. */
  readonly sandbox?: boolean
}

const positive = (raw: string | undefined): number | undefined => {
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined
  const n = Number(raw.trim())
  return n > 0 ? n : undefined
}

/**
 * The upload budget from `HERALD_MEDIA_UPLOADS_PER_HOUR` / `HERALD_MEDIA_UPLOADS_PER_DAY` (positive
 * integers; the spec's 60 and 300 otherwise).
 */
export const budgetFromEnv = (env: Readonly<Record<string, string | undefined>>): MediaLibrary.Budget => ({
  hour: positive(env.HERALD_MEDIA_UPLOADS_PER_HOUR) ?? MediaLibrary.defaultBudget.hour,
  day: positive(env.HERALD_MEDIA_UPLOADS_PER_DAY) ?? MediaLibrary.defaultBudget.day
})

/**
 * The blob store: the bucket of `HERALD_S3_BUCKET` when set, else `<dataDir>/media`; public URLs under
 * `HERALD_MEDIA_PUBLIC_URL` when set (BlobStorage.ts).
 */
export const layerBlobStore = (options: MediaOptions): Layer.Layer<BlobStore> =>
  BlobStorage.layer(BlobStorage.fromEnv(options.env ?? process.env, options.dataDir))

/**
 * The signer of media links when `HERALD_MEDIA_PUBLIC_URL` is set, or the bucket presigns them
 * (`HERALD_S3_LINKS=presigned`): its key is derived once from the credentials root key (`HERALD_SECRET`
 * or the data dir's `secret.key`, purpose `media-public/v1`), so every process sharing the store signs
 * and accepts the same links; they live `HERALD_MEDIA_LINK_TTL_SECONDS` (one hour by default; a week
 * at most for presigned links).
 */
export const layerLinkSigner = (
  env: Readonly<Record<string, string | undefined>>
): Layer.Layer<never, never, CredentialCipher> => {
  // Optional by design: readers ask with `Effect.serviceOption`, so the type promises nothing.
  const base = env.HERALD_MEDIA_PUBLIC_URL?.trim()
  if ((base === undefined || base === "") && !BlobStorage.presignsLinks(env)) return Layer.empty
  const seconds = positive(env.HERALD_MEDIA_LINK_TTL_SECONDS)
  return Layer.effect(
    MediaLinks.MediaLinkSigner,
    Effect.gen(function*() {
      const signingKey = yield* (yield* CredentialCipher).deriveSecret("media-public/v1").pipe(Effect.orDie)
      return MediaLinks.MediaLinkSigner.of({
        signingKey,
        lifetime: seconds === undefined ? MediaLinks.defaultLifetime : Duration.seconds(seconds)
      })
    })
  )
}

/**
 * What the dispatcher needs to hand media to platform clients (`herald worker`), and the blob store
 * itself (the housekeeping sweep removes the bytes of uploads never completed).
 */
export const layerDispatch = (
  options: MediaOptions
): Layer.Layer<DispatchMedia | BlobStore, never, MediaStore | CredentialCipher> =>
  MediaLibrary.layerDispatchMedia.pipe(
    Layer.provideMerge(
      Layer.mergeAll(layerBlobStore(options), SharpRenditions.layer, layerLinkSigner(options.env ?? process.env))
    )
  )

/**
 * Everything the media endpoints, the posts hook and the dispatcher read media through: the blob
 * store, the inspector, the URL importer (`HERALD_MEDIA_ALLOW_PRIVATE`), the upload signing key
 * (derived from the credentials root key), the budget, `HERALD_PUBLIC_URL` for upload URLs.
 */
export const layerServices = (options: MediaOptions) => {
  const env = options.env ?? process.env
  const publicUrl = env.HERALD_PUBLIC_URL?.trim()
  const settings = Layer.effect(
    MediaLibrary.MediaSettings,
    Effect.gen(function*() {
      const cipher = yield* CredentialCipher
      const signingKey = yield* cipher.deriveSecret("media-upload/v1").pipe(Effect.orDie)
      return MediaLibrary.MediaSettings.of({ signingKey })
    })
  )
  const base = Layer.mergeAll(
    layerBlobStore(options),
    layerLinkSigner(env),
    MediaInspector.layer,
    SharpRenditions.layer,
    UrlImporter.layer(UrlImporter.fromEnv(env)),
    Layer.succeed(MediaLibrary.MediaBudget, budgetFromEnv(env)),
    publicUrl === undefined || publicUrl === "" ? Layer.empty : Layer.succeed(PublicBaseUrl, publicUrl),
    options.sandbox === true ? Layer.succeed(MediaLibrary.PublicUrlsRequired, false) : Layer.empty
  )
  const hooks = Layer.merge(MediaLibrary.layerPostMedia, MediaLibrary.layerDispatchMedia)
  return Layer.mergeAll(hooks, settings).pipe(Layer.provideMerge(base))
}
