/**
 * Facebook Pages through Facebook Login (platform reference §6): authorize without PKCE, exchange the
 * code for a short-lived user token, exchange that for a long-lived one (`fb_exchange_token`, about 60
 * days), then list the Pages it manages (`/me/accounts`, following the cursor). Each Page is its own
 * social account whose credential is the Page token, which does not expire when obtained from a
 * long-lived user token: there is no refresh, and the user token is not kept. A login that grants no
 * Page is refused.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type { OAuthProvider } from "@herald/core/accounts/OAuthProviders"
import type { ConnectedIdentity } from "@herald/core/platforms/Platforms"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MetaGraph from "../platforms/internal/MetaGraph.js"
import { field, publishError, stringField, trimSlash } from "../platforms/internal/PlatformHttp.js"
import * as OAuth2 from "./OAuth2.js"

export interface Options {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** `https://www.facebook.com/v26.0/dialog/oauth`. */
  readonly authorizeUrl?: string
  /** `https://graph.facebook.com`: token exchanges and the Graph API (the version is added). */
  readonly apiUrl?: string
  /** The Graph API version (`HERALD_GRAPH_VERSION`); `MetaGraph.version` unless set. */
  readonly graphVersion?: string
}

export const defaultAuthorizeUrl = `https://www.facebook.com/${MetaGraph.version}/dialog/oauth`
export const defaultApiUrl = "https://graph.facebook.com"
/** `pages_manage_engagement` lets the Page post a first comment under its own post. */
export const scopes = [
  "pages_show_list",
  "pages_manage_posts",
  "pages_read_engagement",
  "pages_manage_engagement"
] as const

/** `/me/accounts` is read 100 Pages at a time, at most this many times. */
export const maxPageRequests = 20

const label = "Facebook"

interface Page {
  readonly id: string
  readonly name: string
  readonly username: string | undefined
  readonly accessToken: string
  readonly picture: string
}

const pageOf = (entry: unknown): Page | undefined => {
  const id = stringField(entry, "id")
  const accessToken = stringField(entry, "access_token")
  // Without a token the person has no role on the Page that lets the app act for it.
  if (id === undefined || accessToken === undefined || accessToken === "") return undefined
  return {
    id,
    name: stringField(entry, "name") ?? id,
    username: stringField(entry, "username"),
    accessToken,
    picture: stringField(field(field(entry, "picture"), "data"), "url") ?? ""
  }
}

export const make = (options: Options): Effect.Effect<OAuthProvider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    // Tokens and the client secret travel in URLs: no spans carrying them.
    const http = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const graphVersion = options.graphVersion ?? MetaGraph.version
    const graph = `${trimSlash(options.apiUrl ?? defaultApiUrl)}/${graphVersion}`
    const secret = Redacted.value(options.clientSecret)

    const pages = (userToken: string) =>
      Effect.gen(function*() {
        const found: Array<Page> = []
        const seen = new Set<string>()
        let after: string | undefined = undefined
        for (let request = 0; request < maxPageRequests; request++) {
          const body: unknown = yield* MetaGraph.get(http, label, `${graph}/me/accounts`, {
            fields: "id,name,username,access_token,picture.type(large)",
            limit: "100",
            after,
            access_token: userToken
          }, [secret])
          const data = field(body, "data")
          for (const entry of Array.isArray(data) ? data : []) {
            const page = pageOf(entry)
            if (page !== undefined && !seen.has(page.id)) {
              seen.add(page.id)
              found.push(page)
            }
          }
          const paging = field(body, "paging")
          after = stringField(field(paging, "cursors"), "after")
          // Meta gives `next` only while there is more; follow the cursor, not the URL it sends.
          if (stringField(paging, "next") === undefined || after === undefined) break
        }
        return found
      })

    const identityOf = (page: Page): ConnectedIdentity => ({
      platformAccountId: page.id,
      accountName: page.name,
      avatarUrl: page.picture,
      credentials: {
        access_token: page.accessToken,
        page_id: page.id,
        ...(page.username === undefined ? {} : { username: page.username })
      },
      tokenExpiresAt: Option.none()
    })

    return {
      platform: "facebook",
      authorizeUrl: (request) =>
        OAuth2.buildUrl(options.authorizeUrl ?? `https://www.facebook.com/${graphVersion}/dialog/oauth`, {
          client_id: options.clientId,
          redirect_uri: request.redirectUri,
          response_type: "code",
          scope: scopes.join(","),
          state: request.state
        }),
      exchangeCode: (request) =>
        Effect.gen(function*() {
          const short = yield* MetaGraph.get(
            http,
            label,
            `${graph}/oauth/access_token`,
            {
              client_id: options.clientId,
              redirect_uri: request.redirectUri,
              client_secret: secret,
              code: request.code
            },
            [secret, request.code],
            "oauth"
          ).pipe(Effect.flatMap((body) => MetaGraph.tokenOf(label, body)))
          const long = yield* MetaGraph.get(
            http,
            label,
            `${graph}/oauth/access_token`,
            {
              grant_type: "fb_exchange_token",
              client_id: options.clientId,
              client_secret: secret,
              fb_exchange_token: short.accessToken
            },
            [secret, request.code, short.accessToken],
            "oauth"
          ).pipe(
            Effect.flatMap((body) => MetaGraph.tokenOf(label, body))
          )
          const granted = yield* pages(long.accessToken)
          if (!Arr.isNonEmptyReadonlyArray(granted)) {
            return yield* publishError(
              "auth",
              `${label}: this login granted no Facebook Page. Open the link again and, when Facebook asks, select ` +
                "the Pages to connect (your profile needs a role on each Page that allows creating content)."
            )
          }
          return Arr.map(granted, identityOf)
        })
    } satisfies OAuthProvider
  })
