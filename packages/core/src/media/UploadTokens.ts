/**
 * The upload URL's own credential: an HMAC over the organization, the medium and the expiry, so the
 * PUT needs no API key.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import { MediaId, OrganizationId } from "../kernel/Ids.js"
import { MediaSettings } from "./MediaPorts.js"
import { parseId } from "./internal/MediaRecords.js"

const tokenPayload = (organizationId: string, id: string, expires: number) =>
  `herald-media-upload:v1:${organizationId}:${id}:${expires}`

/** `v1.<organization id>.<expiry, unix seconds>.<HMAC-SHA256 hex>`: the upload URL's own credential. */
export const signUpload = (organizationId: OrganizationId, id: MediaId, expiresAt: DateTime.Utc) =>
  Effect.gen(function*() {
    const settings = yield* MediaSettings
    const expires = Math.floor(DateTime.toEpochMillis(expiresAt) / 1000)
    const signature = yield* (yield* Crypto).hmacSha256Hex(
      Redacted.value(settings.signingKey),
      tokenPayload(organizationId, id, expires)
    )
    return `v1.${organizationId}.${expires}.${signature}`
  })

const badUploadUrl = () =>
  DomainError.of(
    "auth_failed",
    "The upload URL is invalid or has expired; request a new one with POST /media/upload"
  )

/** The organization the token was issued for, when the token is genuine, for `id`, and unexpired. */
export const verifyUpload = (rawId: string, token: string) =>
  Effect.gen(function*() {
    const parts = token.split(".")
    const id = parseId(rawId)
    if (parts.length !== 4 || parts[0] !== "v1" || Option.isNone(id)) return yield* Effect.fail(badUploadUrl())
    const [, org, expiresRaw, signature] = parts as [string, string, string, string]
    const organizationId = Schema.decodeUnknownOption(OrganizationId)(org)
    if (Option.isNone(organizationId) || !/^\d{1,12}$/.test(expiresRaw)) return yield* Effect.fail(badUploadUrl())
    const settings = yield* MediaSettings
    const crypto = yield* Crypto
    const expected = yield* crypto.hmacSha256Hex(
      Redacted.value(settings.signingKey),
      tokenPayload(organizationId.value, id.value, Number(expiresRaw))
    )
    if (!crypto.timingSafeEqual(expected, signature)) return yield* Effect.fail(badUploadUrl())
    const now = yield* DateTime.now
    if (DateTime.toEpochMillis(now) >= Number(expiresRaw) * 1000) return yield* Effect.fail(badUploadUrl())
    return { organizationId: organizationId.value, id: id.value }
  })
