import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { MediaId, OrganizationId } from "../kernel/Ids.js"

export const MediaKind = Schema.Literal("image", "video", "document")
export type MediaKind = typeof MediaKind.Type

/**
 * `pending_upload`: presigned, bytes not yet received or not yet finalized.
 * `ready`: checked and usable. `action_required`: stored but needs the user (e.g. unusable on a platform).
 * `failed`: the bytes were refused.
 */
export const MediaStatus = Schema.Literal("pending_upload", "ready", "action_required", "failed")
export type MediaStatus = typeof MediaStatus.Type

export class Media extends Schema.Class<Media>("Media")({
  id: MediaId,
  organizationId: OrganizationId,
  filename: Schema.String,
  mimeType: Schema.String,
  size: Schema.NonNegativeInt,
  kind: MediaKind,
  width: Schema.OptionFromNullOr(Schema.Int),
  height: Schema.OptionFromNullOr(Schema.Int),
  durationMs: Schema.OptionFromNullOr(Schema.Int),
  status: MediaStatus,
  error: Schema.OptionFromNullOr(Schema.String),
  /** Where the bytes are, in the BlobStore's terms. */
  storageKey: Schema.String,
  sourceUrl: Schema.OptionFromNullOr(Schema.String),
  /** Alternative text for every platform that takes it (a platform's `settings.altText` overrides it). */
  altText: Schema.OptionFromNullOr(Schema.String).pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => Option.none<string>())
  ),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}
