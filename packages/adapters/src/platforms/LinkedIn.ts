/**
 * LinkedIn through the versioned REST Posts API (platform reference §9), for members connected with
 * OAuth 2.0 (`oauth/LinkedIn.ts`): the client the registry holds. Calls and their errors are
 * `LinkedInApi`; a post, its media, its article card and its first comment `LinkedInPublish` and
 * `LinkedInMedia`; an unknown outcome is looked up among the author's posts (`LinkedInLookup`); counts
 * are `LinkedInMetrics`.
 *
 * A LinkedIn Page connected through the member who administers it (`oauth/LinkedIn.ts`) stores
 * `author_urn` `urn:li:organization:{id}`: its posts, uploads (owner) and first comments (actor) are the
 * organization's, as the Posts API documents for `w_organization_social`. Its metrics are the page's
 * share statistics.
 *
 * Stored credentials used: `access_token`, `author_urn` (else `urn:li:person:{user_id}`).
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import type { PlatformClient } from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { trimSlash } from "./internal/PlatformHttp.js"
import * as ApiVersions from "./ApiVersions.js"
import * as LinkedInApi from "./LinkedInApi.js"
import * as LinkedInLookup from "./LinkedInLookup.js"
import * as LinkedInMetrics from "./LinkedInMetrics.js"
import * as LinkedInPublish from "./LinkedInPublish.js"

export interface Options {
  /** `https://api.linkedin.com` unless a fake is used. */
  readonly apiUrl?: string
  /** The `LinkedIn-Version` header (YYYYMM); `defaultVersion` unless set. Versions sunset after ~12 months. */
  readonly version?: string
  /** Pause after an image or document upload when its status cannot be read; 2 seconds. */
  readonly mediaGrace?: Duration.DurationInput
  /** Pause between image or document status polls; 1 second. */
  readonly mediaPollInterval?: Duration.DurationInput
  /** Polls before an image or document still processing counts as stuck (transient); 60. */
  readonly mediaMaxPolls?: number
  /** Pause between video status polls; 3 seconds. */
  readonly videoPollInterval?: Duration.DurationInput
  /** Polls before a video still processing counts as stuck (transient); 200. */
  readonly videoMaxPolls?: number
  /** Fetches link preview pages and images (the media importer's, behind its address guard); no article cards without. */
  readonly linkCards?: UrlFetcher["Type"]
}

export const defaultApiUrl = "https://api.linkedin.com"
export const defaultVersion = ApiVersions.defaultLinkedInVersion

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const api = yield* LinkedInApi.make({
      url: trimSlash(options.apiUrl ?? defaultApiUrl),
      version: options.version ?? defaultVersion
    })
    const publishOptions: LinkedInPublish.PublishOptions = {
      mediaGrace: options.mediaGrace ?? "2 seconds",
      mediaPollInterval: options.mediaPollInterval ?? "1 second",
      mediaMaxPolls: options.mediaMaxPolls ?? 60,
      videoPollInterval: options.videoPollInterval ?? "3 seconds",
      videoMaxPolls: options.videoMaxPolls ?? 200,
      linkCards: options.linkCards
    }
    return {
      platform: "linkedin",
      publish: (request) => LinkedInPublish.publish(api, publishOptions, request),
      metrics: (credentials, platformPostId) => LinkedInMetrics.metrics(api, credentials, platformPostId),
      findPublished: (lookup) => LinkedInLookup.findPublished(api, lookup),
      timeout: "20 minutes"
    } satisfies PlatformClient
  })
