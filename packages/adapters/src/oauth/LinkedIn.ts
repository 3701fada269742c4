/**
 * LinkedIn 3-legged OAuth 2.0 (platform reference §9): scopes `openid profile w_member_social`,
 * identity from `/v2/userinfo` (author URN `urn:li:person:{sub}`). Tokens last 60 days; refresh
 * tokens are issued to approved partners only, and used when present.
 *
 * With `organizations` (`HERALD_LINKEDIN_ORGANIZATIONS=true`, for apps granted LinkedIn's Community
 * Management API), the member's LinkedIn Pages are connected too, each as its own account posting as
 * `urn:li:organization:{id}`, the way every Facebook Page a login grants becomes an account. The
 * scopes add `w_organization_social` (post as the page), `r_organization_social` (read its posts) and
 * `rw_organization_admin`, which LinkedIn requires both for listing the pages a member administers
 * (`GET /rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED`,
 * learn.microsoft.com/linkedin/marketing/community-management/organizations/organization-access-control-by-role)
 * and for their names (`GET /rest/organizations?ids=List(…)`, .../organization-lookup-api) and post
 * statistics. Every page account holds the member's tokens; its `platformAccountId` is the
 * organization URN, so a reconnect finds it again.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import type { ConnectedIdentity } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as ApiVersions from "../platforms/ApiVersions.js"
import { field, numberField, publishError, stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"
import * as Standard from "./Standard.js"

export interface Options extends OAuth2.Client {
  /** `https://www.linkedin.com/oauth/v2`: authorization and token endpoints. */
  readonly oauthUrl?: string
  /** `https://api.linkedin.com`. */
  readonly apiUrl?: string
  /** Also connect the LinkedIn Pages the member administers (Community Management API); off by default. */
  readonly organizations?: boolean
  /** The `LinkedIn-Version` header of the `/rest/*` calls that list the pages; the publishing client's default. */
  readonly version?: string
}

export const scopes = ["openid", "profile", "w_member_social"] as const

/** Added when pages are connected. */
export const organizationScopes = ["w_organization_social", "r_organization_social", "rw_organization_admin"] as const

/** The pages a member administers are read 100 at a time, at most this many times. */
export const maxAclPages = 10
const aclPageSize = 100
/** Organizations named per batch lookup. */
const lookupBatch = 50

const label = "LinkedIn"

export const organizationUrn = (id: string): string => `urn:li:organization:${id}`

interface Page {
  readonly id: string
  readonly name: string
}

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const oauth = trimSlash(options.oauthUrl ?? "https://www.linkedin.com/oauth/v2")
    const api = trimSlash(options.apiUrl ?? "https://api.linkedin.com")
    const restHeaders = {
      "LinkedIn-Version": options.version ?? ApiVersions.defaultLinkedInVersion,
      "X-Restli-Protocol-Version": "2.0.0"
    }
    const pagesOn = options.organizations === true
    const standard = yield* Standard.make({
      platform: "linkedin",
      label,
      authorizeUrl: `${oauth}/authorization`,
      tokenUrl: `${oauth}/accessToken`,
      scopes: pagesOn ? [...scopes, ...organizationScopes] : scopes,
      scopeSeparator: " ",
      pkce: false,
      clientAuth: "body",
      refreshable: true,
      identity: (http, tokens) =>
        OAuth2.getJson(http, label, `${api}/v2/userinfo`, tokens.accessToken).pipe(
          Effect.flatMap((body) => {
            const sub = stringField(body, "sub")
            if (sub === undefined) return Effect.fail(OAuth2.unexpected(label, "userinfo"))
            return Effect.succeed({
              id: sub,
              name: stringField(body, "name") ?? sub,
              avatar: stringField(body, "picture") ?? "",
              extra: { author_urn: `urn:li:person:${sub}` }
            })
          })
        )
    }, options)
    if (!pagesOn) return standard
    // Tokens travel in headers: no spans carrying them.
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)

    /** Why a page listing was refused, with what the operator can do about it. */
    const listingRefused = (error: { readonly kind: string; readonly message: string }) =>
      error.kind === "transient" || error.kind === "rate_limit"
        ? publishError(error.kind, error.message)
        : publishError(
          "auth",
          `${error.message}. LinkedIn refused to list the pages this member administers: connecting LinkedIn ` +
            "Pages (HERALD_LINKEDIN_ORGANIZATIONS=true) needs the Community Management API product on the " +
            "LinkedIn app, and the member to approve its scopes"
        )

    /** The ids of the organizations the member administers (role ADMINISTRATOR, state APPROVED). */
    const administered = (token: string) =>
      Effect.gen(function*() {
        const ids: Array<string> = []
        for (let page = 0; page < maxAclPages; page++) {
          const body = yield* OAuth2.getJson(
            http,
            label,
            `${api}/rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED` +
              `&start=${page * aclPageSize}&count=${aclPageSize}`,
            token,
            restHeaders
          ).pipe(Effect.mapError(listingRefused))
          const elements = field(body, "elements")
          const items = Array.isArray(elements) ? elements : []
          for (const item of items) {
            // The finder filters by role and state; checked again so another answer can never add a page.
            if (stringField(item, "role") !== "ADMINISTRATOR" || stringField(item, "state") !== "APPROVED") continue
            const id = /^urn:li:organization:(\d+)$/.exec(stringField(item, "organization") ?? "")?.[1]
            if (id !== undefined && !ids.includes(id)) ids.push(id)
          }
          const total = numberField(field(body, "paging"), "total")
          if (items.length < aclPageSize || (total !== undefined && (page + 1) * aclPageSize >= total)) break
        }
        return ids
      })

    /**
     * The pages' names (`localizedName`, else the vanity name), by batch lookup. A page LinkedIn does not
     * describe keeps a name made of its id: a name is no reason to refuse the connection.
     */
    const named = (token: string, ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const pages: Array<Page> = []
        for (let start = 0; start < ids.length; start += lookupBatch) {
          const batch = ids.slice(start, start + lookupBatch)
          // Rest.li 2.0 list syntax: the parentheses and commas stay as they are.
          const body = yield* OAuth2.getJson(
            http,
            label,
            `${api}/rest/organizations?ids=List(${batch.join(",")})`,
            token,
            restHeaders
          ).pipe(
            Effect.catchAll((error) =>
              Effect.as(Effect.logWarning(`LinkedIn: the pages' names could not be read (${error.message})`), undefined)
            )
          )
          const results = field(body, "results")
          for (const id of batch) {
            const organization = field(results, id)
            pages.push({
              id,
              name: stringField(organization, "localizedName") ?? stringField(organization, "vanityName") ??
                `LinkedIn Page ${id}`
            })
          }
        }
        return pages
      })

    const pageIdentity = (member: ConnectedIdentity, page: Page): ConnectedIdentity => ({
      platformAccountId: organizationUrn(page.id),
      accountName: page.name,
      avatarUrl: "",
      credentials: { ...member.credentials, author_urn: organizationUrn(page.id), organization_id: page.id },
      tokenExpiresAt: member.tokenExpiresAt
    })

    return {
      ...standard,
      exchangeCode: (request) =>
        Effect.gen(function*() {
          const [member] = yield* standard.exchangeCode(request)
          const token = member.credentials["access_token"] ?? ""
          const pages = yield* named(token, yield* administered(token))
          return [member, ...pages.map((page) => pageIdentity(member, page))] as const
        })
    } satisfies OAuthProvider
  })
