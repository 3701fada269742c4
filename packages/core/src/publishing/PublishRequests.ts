/**
 * Building the request a platform client receives from a claimed destination: the post's content and
 * the platform's override, the thread parts, the media with their references, the account's
 * credentials.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { SocialAccount } from "../domain/Account.js"
import type { Destination } from "../domain/Destination.js"
import { type MediaId, type OrganizationId } from "../kernel/Ids.js"
import {
  type Credentials,
  type MediaRef,
  PublishError,
  type PublishErrorKind,
  type PublishPart,
  type PublishRequest
} from "../platforms/Platforms.js"
import type { Post } from "../domain/Post.js"
import { threadPlatforms } from "../platforms/PlatformRules.js"
import { DispatchMedia, type MediaTarget } from "../media/DispatchMedia.js"
import { Outcome } from "./DispatchOutcome.js"

export const failure = (kind: PublishErrorKind, message: string): Outcome => ({ _tag: "Failed", kind, message })

export const localFailure = (kind: PublishErrorKind, message: string): Outcome => ({
  _tag: "Failed",
  kind,
  message,
  local: true
})

export const parseCredentials = (account: SocialAccount): Credentials => {
  const raw = Option.map(account.credentials, Redacted.value)
  const record: Record<string, string> = {}
  if (Option.isSome(raw)) {
    try {
      const parsed: unknown = JSON.parse(raw.value)
      if (typeof parsed === "object" && parsed !== null) {
        for (const [key, value] of Object.entries(parsed)) {
          if (typeof value === "string") record[key] = value
        }
      }
    } catch {
      // Not JSON: a single opaque token.
      record.token = raw.value
    }
  }
  return Redacted.make(record)
}

/**
 * An account's credentials parsed once per account read: a round reads each account once and sends
 * many destinations with it (a JSON parse per destination showed in the dispatch profile).
 */
const parsedCredentials = new WeakMap<SocialAccount, Credentials>()

const credentialsOf = (account: SocialAccount): Credentials => {
  const known = parsedCredentials.get(account)
  if (known !== undefined) return known
  const credentials = parseCredentials(account)
  parsedCredentials.set(account, credentials)
  return credentials
}

const resolveMedia = (organizationId: OrganizationId, ids: ReadonlyArray<MediaId>, target: MediaTarget) =>
  Effect.gen(function*() {
    if (ids.length === 0) return [] as ReadonlyArray<MediaRef>
    const media = yield* Effect.serviceOption(DispatchMedia)
    if (Option.isNone(media)) {
      return yield* new PublishError({ kind: "media", message: "Media storage is not configured on this server" })
    }
    return yield* media.value.resolve(organizationId, ids, target)
  })

/** The request for one destination, with the platform's override applied and thread parts in order. */
export const buildRequest = (
  post: Post,
  destination: Destination,
  account: SocialAccount,
  attempt: number
) =>
  Effect.gen(function*() {
    const override = post.platformContent[destination.platform]
    const target: MediaTarget = {
      platform: destination.platform,
      contentType: override?.contentType,
      settings: override?.settings
    }
    const main: PublishPart = {
      content: override?.content ?? post.content,
      media: yield* resolveMedia(post.organizationId, post.mediaIds, target)
    }
    const thread: Array<PublishPart> = []
    if (threadPlatforms.includes(destination.platform)) {
      for (const part of post.threadPosts) {
        thread.push({
          content: part.content,
          media: yield* resolveMedia(post.organizationId, part.media_ids ?? [], { platform: destination.platform })
        })
      }
    }
    return assemble(post, destination, account, attempt, main, thread)
  })

const noMedia: ReadonlyArray<MediaRef> = []

/**
 * `buildRequest` without an effect, for the common post that carries no media (nothing to resolve);
 * undefined when some part of the request has media.
 */
export const requestWithoutMedia = (
  post: Post,
  destination: Destination,
  account: SocialAccount,
  attempt: number
): PublishRequest | undefined => {
  if (post.mediaIds.length > 0) return undefined
  const thread: Array<PublishPart> = []
  if (threadPlatforms.includes(destination.platform)) {
    for (const part of post.threadPosts) {
      if (part.media_ids !== undefined && part.media_ids.length > 0) return undefined
      thread.push({ content: part.content, media: noMedia })
    }
  }
  const override = post.platformContent[destination.platform]
  const main: PublishPart = { content: override?.content ?? post.content, media: noMedia }
  return assemble(post, destination, account, attempt, main, thread)
}

const assemble = (
  post: Post,
  destination: Destination,
  account: SocialAccount,
  attempt: number,
  main: PublishPart,
  thread: Array<PublishPart>
): PublishRequest => {
  const override = post.platformContent[destination.platform]
  return {
    account,
    credentials: credentialsOf(account),
    main,
    contentType: Option.fromNullable(override?.contentType),
    settings: override?.settings ?? {},
    thread,
    destinationId: destination.id,
    attempt
  }
}
