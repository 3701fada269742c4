/**
 * The media library's use cases: presign an upload, receive its bytes (streamed to the `BlobStore`
 * under a size cap), complete it (the bytes decide the type), import from a URL, list, get and delete;
 * plus the two services other use cases read media through: `PostMedia` (existence in the
 * organization, auto-finalize, per-platform rules at create time) and `Dispatcher.DispatchMedia`
 * (bytes for the platform clients).
 *
 * Budgets (spec, Limits): 60 uploads per hour and 300 per day per organization, counted when an upload
 * is finalized (complete, or a post auto-finalizing it) and on an import, never at presign. A
 * refused or rolled-back finalize does not use up the budget.
 *
 * This module is the library's one entry point: each concept lives in a module of its own
 * (`MediaUpload`, `MediaImport`, `MediaCatalogue`, `AbandonedUploads`, `PostMediaChecks`,
 * `MediaForDispatch`, `UploadBudget`, `UploadTokens`, `MediaPorts`) and is re-exported here, beside
 * the two layers other use cases read media through.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { BlobStore } from "./BlobStore.js"
import { Crypto } from "../kernel/Crypto.js"
import { DispatchMedia } from "./DispatchMedia.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import * as MediaFitting from "./MediaFitting.js"
import * as MediaLinks from "./MediaLinks.js"
import { MediaStore } from "./MediaStore.js"
import { PostMedia } from "./PostMedia.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"
import { MediaBudget, MediaProbe, PublicUrlsRequired } from "./MediaPorts.js"
import { carriesMedia, checkPostMedia, checkWithoutMedia } from "./PostMediaChecks.js"
import { resolveForDispatch } from "./MediaForDispatch.js"

export {
  defaultBudget,
  defaultUploadTtlSeconds,
  MediaBudget,
  MediaProbe,
  MediaSettings,
  PublicUrlsRequired,
  UrlFetcher,
  UrlFetchError,
  UrlFetchFailure
} from "./MediaPorts.js"
export type { Budget, FetchedUrl, Probe } from "./MediaPorts.js"
export {
  eventData,
  sanitizeFilename,
  storageKey,
  storedBytes,
  storedBytesEnd,
  storedBytesKey
} from "./internal/MediaRecords.js"
export { budgetExceeded, budgetKey, checkBudget, consumeBudget } from "./UploadBudget.js"
export { signUpload, verifyUpload } from "./UploadTokens.js"
export {
  checkAltText,
  complete,
  finalize,
  maxAltTextLength,
  notUploadedMessage,
  presign,
  receiveUpload,
  UpdateBody,
  UploadBody
} from "./MediaUpload.js"
export type { IncomingUpload, Presigned } from "./MediaUpload.js"
export { ImportBody, importFromUrl } from "./MediaImport.js"
export { defaultPageSize, get, list, maxPageSize, remove, update } from "./MediaCatalogue.js"
export type { Listed, ListParams } from "./MediaCatalogue.js"
export { defaultPendingGrace, sweepAbandoned } from "./AbandonedUploads.js"
export type { SweepOptions, SweepSummary } from "./AbandonedUploads.js"
export { carriesMedia, checkPostMedia, checkWithoutMedia } from "./PostMediaChecks.js"
export type { PostMediaInput } from "./PostMediaChecks.js"
export { renditionKey, renditionKeys, renditionOf, resolveForDispatch } from "./MediaForDispatch.js"

// ---------------------------------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------------------------------

/** What finalizing needs. */
export type FinalizeServices =
  | MediaStore
  | BlobStore
  | MediaProbe
  | Transactor
  | EventStore
  | IdGenerator
  | UsageCounters

/** `PostMedia` over the library (services captured when the layer is built). */
export const layerPostMedia: Layer.Layer<PostMedia, never, FinalizeServices> = Layer.effect(
  PostMedia,
  Effect.gen(function*() {
    const finalize = yield* Effect.context<FinalizeServices>()
    const budget = yield* Effect.serviceOption(MediaBudget)
    const context = Option.isSome(budget) ? Context.add(finalize, MediaBudget, budget.value) : finalize
    const publicUrlsRequired = Option.getOrElse(yield* Effect.serviceOption(PublicUrlsRequired), () => true)
    return PostMedia.of({
      // Most posts name no medium: their check provides nothing (each provide copies the request's
      // whole context, ~70 services, which showed in the create path's profile).
      check: (input) =>
        carriesMedia(input)
          ? Effect.provide(checkPostMedia(input, publicUrlsRequired), context)
          : checkWithoutMedia(input)
    })
  })
)

/**
 * `Dispatcher.DispatchMedia` over the library; with `ImageRenditions` in the context, images go out
 * as their renditions for the destination's platform.
 */
export const layerDispatchMedia: Layer.Layer<DispatchMedia, never, MediaStore | BlobStore> = Layer.effect(
  DispatchMedia,
  Effect.gen(function*() {
    const context = yield* Effect.context<MediaStore | BlobStore>()
    const renditions = yield* Effect.serviceOption(MediaFitting.ImageRenditions)
    const signer = yield* Effect.serviceOption(MediaLinks.MediaLinkSigner)
    const crypto = yield* Effect.serviceOption(Crypto)
    const counters = yield* Effect.serviceOption(UsageCounters)
    return DispatchMedia.of({
      resolve: (organizationId, ids, target) => {
        let resolved = resolveForDispatch(organizationId, ids, target).pipe(Effect.provide(context))
        if (Option.isSome(counters)) resolved = Effect.provideService(resolved, UsageCounters, counters.value)
        if (Option.isSome(signer) && Option.isSome(crypto)) {
          resolved = resolved.pipe(
            Effect.provideService(MediaLinks.MediaLinkSigner, signer.value),
            Effect.provideService(Crypto, crypto.value)
          )
        }
        return Option.isSome(renditions)
          ? Effect.provideService(resolved, MediaFitting.ImageRenditions, renditions.value)
          : resolved
      }
    })
  })
)
