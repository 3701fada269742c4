import { SocialAccount } from "@herald/core/domain/Account"
import { AccountId, MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import type { MediaKind } from "@herald/core/domain/Media"
import type { Platform } from "@herald/core/domain/Platform"
import type { MediaRef, PlatformClient, PublishPart, PublishRequest } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as PlatformTransport from "../../src/platforms/PlatformTransport.js"

/** The transport the server and the workers use for platform calls. */
export const HttpLive = PlatformTransport.layer

export const account = (platform: Platform): SocialAccount =>
  new SocialAccount({
    id: AccountId.make(1),
    organizationId: OrganizationId.make("5b0b7b7e-0c4a-4f5e-9f0d-2d7f1b3c4a5e"),
    platform,
    platformAccountId: "acct",
    accountName: "acct",
    avatarUrl: "",
    isActive: true,
    connectionFlow: "credential",
    needsReconnection: false,
    tokenExpiresAt: Option.none(),
    lastSuccessAt: Option.none(),
    recentFailures: 0,
    credentials: Option.none(),
    createdAt: DateTime.unsafeMake(0),
    updatedAt: DateTime.unsafeMake(0)
  })

let mediaCounter = 0

/** Deterministic bytes with a recognisable header, delivered in two chunks to exercise collection. */
export const bytesOf = (size: number, seed: number): Uint8Array => {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 7) % 251
  return out
}

export const media = (options: {
  readonly kind: MediaKind
  readonly mimeType: string
  readonly bytes: Uint8Array
  readonly filename?: string
  readonly publicUrl?: string
}): MediaRef => {
  mediaCounter++
  const half = Math.floor(options.bytes.length / 2)
  return {
    id: MediaId.make(`00000000-0000-4000-8000-${String(mediaCounter).padStart(12, "0")}`),
    mimeType: options.mimeType,
    kind: options.kind,
    size: options.bytes.length,
    filename: options.filename ?? `file${mediaCounter}`,
    bytes: Stream.make(options.bytes.slice(0, half), options.bytes.slice(half)),
    publicUrl: Option.fromNullable(options.publicUrl)
  }
}

export const part = (content: string, mediaRefs: ReadonlyArray<MediaRef> = []): PublishPart => ({
  content,
  media: mediaRefs
})

export const request = (options: {
  readonly platform: Platform
  readonly credentials: Readonly<Record<string, string>>
  readonly main: PublishPart
  readonly thread?: ReadonlyArray<PublishPart>
  readonly settings?: Readonly<Record<string, unknown>>
}): PublishRequest => ({
  account: account(options.platform),
  credentials: Redacted.make(options.credentials),
  main: options.main,
  contentType: Option.none(),
  settings: options.settings ?? {},
  thread: options.thread ?? []
})

/**
 * The client with its follow-ups (thread parts, first comment) run inside `publish`, as the engine runs
 * them right after recording the post: for tests of what a whole publish sends.
 */
export const withFollowUps = (client: PlatformClient): PlatformClient => ({
  ...client,
  publish: (request) => Effect.tap(client.publish(request), (result) => result.followUps ?? Effect.void)
})
