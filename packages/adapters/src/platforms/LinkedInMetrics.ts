/**
 * A LinkedIn post's counts. A page's post (the account's author is an organization,
 * `urn:li:organization:{id}`): its share statistics; a member's post: the likes and comments of
 * `socialActions`, the only counts LinkedIn gives for member posts outside its partner programs.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Metrics } from "@herald/core/domain/Destination"
import type { Credentials, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { field, numberField, publishError, stringField } from "./internal/PlatformHttp.js"
import { isAccessDenied, type RestApi } from "./LinkedInApi.js"

/** Whether an author URN is a LinkedIn Page (an organization) rather than a member. */
export const isOrganization = (author: string): boolean => author.startsWith("urn:li:organization:")

/**
 * `GET /rest/socialActions/{urn}`: `likesSummary.totalLikes` and
 * `commentsSummary.totalFirstLevelComments`. LinkedIn serves a member's post only to apps granted
 * `r_member_social` (restricted), a page's to `r_organization_social`; without it the answer is
 * 403, an `auth` failure the sweep just records.
 */
const socialActionCounts = (api: RestApi, token: string, platformPostId: string, permission: string) =>
  Effect.gen(function*() {
    const response = yield* api.rest(
      token,
      "metrics",
      HttpClientRequest.get(`${api.url}/rest/socialActions/${encodeURIComponent(platformPostId)}`)
    ).pipe(
      Effect.mapError((error) =>
        isAccessDenied(error)
          ? publishError("auth", `${error.message} (reading a post's counts needs LinkedIn's ${permission} permission)`)
          : error
      )
    )
    const count = (summary: string, key: string) =>
      Math.max(0, Math.floor(numberField(field(response.body, summary), key) ?? 0))
    return new Metrics({
      views: 0,
      likes: count("likesSummary", "totalLikes"),
      comments: count("commentsSummary", "totalFirstLevelComments"),
      shares: 0,
      impressions: 0,
      saves: 0,
      clicks: 0
    })
  })

/**
 * A page post's lifetime counts: `GET /rest/organizationalEntityShareStatistics` for the page, the
 * post named in `shares=List(…)` (a share) or `ugcPosts=List(…)` (a ugcPost, as video posts are),
 * Rest.li list syntax with the URN URL-encoded inside
 * (learn.microsoft.com/linkedin/marketing/community-management/organizations/share-statistics).
 * LinkedIn serves it to page administrators of apps granted `rw_organization_admin`, for posts of
 * the last 12 months.
 */
const pageStatistics = (api: RestApi, token: string, organization: string, platformPostId: string) =>
  Effect.gen(function*() {
    const list = platformPostId.startsWith("urn:li:ugcPost:") ? "ugcPosts" : "shares"
    const response = yield* api.rest(
      token,
      "metrics",
      HttpClientRequest.get(
        `${api.url}/rest/organizationalEntityShareStatistics?q=organizationalEntity` +
          `&organizationalEntity=${encodeURIComponent(organization)}` +
          `&${list}=List(${encodeURIComponent(platformPostId)})`
      )
    )
    const elements = field(response.body, "elements")
    const element = (Array.isArray(elements) ? elements : []).find((e) =>
      stringField(e, list === "shares" ? "share" : "ugcPost") === platformPostId
    )
    if (element === undefined) {
      return yield* publishError(
        "permanent",
        "LinkedIn: no statistics for this post (LinkedIn keeps them for 12 months)"
      )
    }
    const stats = field(element, "totalShareStatistics")
    const count = (key: string) => Math.max(0, Math.floor(numberField(stats, key) ?? 0))
    return new Metrics({
      views: 0,
      likes: count("likeCount"),
      comments: count("commentCount"),
      shares: count("shareCount"),
      impressions: count("impressionCount"),
      saves: 0,
      clicks: count("clickCount")
    })
  })

/**
 * A post's counts. A page's post (the account's author is an organization): its share statistics
 * (impressions, clicks, likes, comments, shares); where LinkedIn refuses them (a role other than
 * administrator), the likes and comments of `socialActions`. A member's post: `socialActions` only;
 * member posts have no views, impressions, shares or clicks without LinkedIn's partner programs.
 */
export const metrics = (
  api: RestApi,
  credentials: Credentials,
  platformPostId: string
): Effect.Effect<Metrics, PublishError> =>
  Effect.gen(function*() {
    const stored = Redacted.value(credentials)
    const token = stored["access_token"] ?? ""
    if (token === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack an access token")
    const author = stored["author_urn"] ?? ""
    if (!isOrganization(author)) return yield* socialActionCounts(api, token, platformPostId, "r_member_social")
    return yield* pageStatistics(api, token, author, platformPostId).pipe(
      Effect.catchIf(isAccessDenied, (error) =>
        Effect.zipRight(
          Effect.logInfo(
            `LinkedIn: the page's share statistics were refused (${error.message}); reading likes and comments`
          ),
          socialActionCounts(api, token, platformPostId, "r_organization_social")
        ))
    )
  })
