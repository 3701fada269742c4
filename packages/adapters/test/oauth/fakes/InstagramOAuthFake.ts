/**
 * An Instagram Login fake (platform reference §7) on one server standing for api.instagram.com (the
 * code exchange, refused in its older `{error_type,code,error_message}` shape) and graph.instagram.com
 * (long-lived exchange, renewal, `/v26.0/me`, Meta's error object). The code exchange answers
 * `user_id` as a JSON number beyond double precision, as Instagram does, flat or inside `data[]`.
 */
import * as LongLivedFake from "./LongLivedFake.js"

export const clientId = "990011223344556"
export const clientSecret = "ig-app-secret-0123456789abcdef"
export const scopes = [
  "instagram_business_basic",
  "instagram_business_content_publish",
  "instagram_business_manage_comments",
  "instagram_business_manage_insights"
]

export interface User extends LongLivedFake.User {
  /** The app-scoped id `/me` also returns as `id`. */
  readonly appScopedId: string
  readonly accountType: "BUSINESS" | "MEDIA_CREATOR"
}

export type InstagramFake = LongLivedFake.LongLivedFake<User> & {
  /** The code exchange answers inside `data[]` (the documented shape) instead of flat. */
  nested: boolean
}

export const start = async (): Promise<InstagramFake> => {
  const holder: { fake?: InstagramFake } = {}
  const fake = await LongLivedFake.start<User>({
    clientId,
    clientSecret,
    scopes,
    users: {
      "17841400000000001": {
        id: "17841400000000001",
        appScopedId: "7711223344",
        username: "herald.gallery",
        name: "Herald Gallery",
        picture: "https://scontent.cdninstagram.example/herald.jpg",
        accountType: "BUSINESS"
      },
      "17841400000000002": {
        id: "17841400000000002",
        appScopedId: "7711223355",
        username: "other.creator",
        name: "Other",
        picture: "https://scontent.cdninstagram.example/other.jpg",
        accountType: "MEDIA_CREATOR"
      }
    },
    authorizePath: "/oauth/authorize",
    authorizeHash: "#_",
    exchangeGrant: "ig_exchange_token",
    refreshGrant: "ig_refresh_token",
    mePath: "/v26.0/me",
    prefixes: { short: "IGAAS", long: "IGAAL" },
    codeRefused: (quote) => ({
      status: 400,
      body: { error_type: "OAuthException", code: 400, error_message: `Invalid authorization code${quote}` }
    }),
    codeAnswer: (accessToken, user) => {
      // The id written as a bare number: JSON.parse would round it.
      const entry = `{"access_token":${JSON.stringify(accessToken)},"user_id":${user.id},` +
        `"permissions":${JSON.stringify(scopes)}}`
      return {
        status: 200,
        headers: { "content-type": "application/json" },
        body: holder.fake?.nested === true ? `{"data":[${entry}]}` : entry
      }
    },
    me: (user, fields) => {
      const all: Record<string, unknown> = {
        user_id: user.id,
        username: user.username,
        name: user.name,
        account_type: user.accountType,
        profile_picture_url: user.picture
      }
      const out: Record<string, unknown> = { id: user.appScopedId }
      for (const f of fields) if (f in all) out[f] = all[f]
      return out
    }
  })
  // The same object, with the switch added.
  holder.fake = Object.assign(fake, { nested: false })
  return holder.fake
}
