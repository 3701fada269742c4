/**
 * Short-lived signed links to media on Herald's own public origin (`HERALD_MEDIA_PUBLIC_URL`), for
 * the platforms that fetch a medium by URL (Instagram images, Threads media, Facebook and Pinterest by
 * URL). A link is the blob's public URL plus `?expires=<unix seconds>&signature=<HMAC-SHA256 hex>`
 * over the blob key (organization, medium, and rendition when there is one) and the expiry, under a
 * key derived once from the server secret; Herald's `/media-public/...` route serves only links whose
 * signature and expiry hold. A store that signs links itself (S3 presigned GET URLs) makes them instead,
 * and platforms fetch the bytes straight from it.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Crypto } from "../kernel/Crypto.js"
import { BlobStore } from "./BlobStore.js"

/** How long a link stays valid: one publish attempt's fetches, with room for a slow platform. */
export const defaultLifetime = Duration.hours(1)

/** The signing of media links; absent, media keep their plain public URL (or none). */
export class MediaLinkSigner extends Context.Tag("@herald/core/media/MediaLinks/MediaLinkSigner")<MediaLinkSigner, {
  readonly signingKey: Redacted.Redacted<string>
  readonly lifetime: Duration.Duration
}>() {}

/** Why a link is refused: altered or unsigned (`invalid`), or past its expiry (`expired`). */
export type Refusal = "invalid" | "expired"

const payload = (key: string, expires: number) => `herald-media-public:v1\n${key}\n${expires}`

/**
 * The signed link to the blob at `key`: the store's own presigned link where it signs links itself,
 * else Herald's, when the store has a public URL for it. `contentType` is what a presigned link
 * answers with (the store keeps no type of its own).
 */
export const signedUrl = (key: string, contentType?: string) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const signer = yield* MediaLinkSigner
    const presigned = yield* Effect.either(blobs.presignedUrl(key, { lifetime: signer.lifetime, contentType }))
    if (Either.isLeft(presigned)) {
      // No link rather than Herald's: the store serves these blobs, Herald's route would not be asked.
      yield* Effect.logWarning(`Media link: the blob store could not sign a link: ${presigned.left.message}`)
      return Option.none<string>()
    }
    if (Option.isSome(presigned.right)) return presigned.right
    const base = blobs.publicUrl(key)
    if (Option.isNone(base)) return Option.none<string>()
    const now = yield* DateTime.now
    const expires = Math.ceil((DateTime.toEpochMillis(now) + Duration.toMillis(signer.lifetime)) / 1000)
    const signature = yield* (yield* Crypto).hmacSha256Hex(Redacted.value(signer.signingKey), payload(key, expires))
    return Option.some(`${base.value}?expires=${expires}&signature=${signature}`)
  })

/** Whether `expires` and `signature` make a genuine, unexpired link to `key`. */
export const verify = (key: string, expires: string | undefined, signature: string | undefined) =>
  Effect.gen(function*() {
    if (expires === undefined || signature === undefined || !/^\d{1,12}$/.test(expires)) {
      return Option.some<Refusal>("invalid")
    }
    const signer = yield* MediaLinkSigner
    const crypto = yield* Crypto
    const expected = yield* crypto.hmacSha256Hex(Redacted.value(signer.signingKey), payload(key, Number(expires)))
    if (!crypto.timingSafeEqual(expected, signature)) return Option.some<Refusal>("invalid")
    const now = yield* DateTime.now
    return DateTime.toEpochMillis(now) >= Number(expires) * 1000 ? Option.some<Refusal>("expired") : Option.none()
  })
