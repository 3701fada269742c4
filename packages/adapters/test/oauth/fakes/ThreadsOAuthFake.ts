/**
 * A Threads fake (platform reference §8) standing for graph.threads.net: `POST /oauth/access_token`,
 * `GET /access_token?grant_type=th_exchange_token`, `GET /refresh_access_token?grant_type=th_refresh_token`
 * and `GET /v1.0/me`, with Meta's error object.
 */
import * as LongLivedFake from "./LongLivedFake.js"
import { metaError } from "./MetaFake.js"

export const clientId = "778899001122334"
export const clientSecret = "th-app-secret-0123456789abcdef"
export const scopes = ["threads_basic", "threads_content_publish", "threads_manage_replies", "threads_manage_insights"]

export type ThreadsFake = LongLivedFake.LongLivedFake<LongLivedFake.User>

export const start = (): Promise<ThreadsFake> =>
  LongLivedFake.start<LongLivedFake.User>({
    clientId,
    clientSecret,
    scopes,
    users: {
      "25990011": {
        id: "25990011",
        username: "herald.threads",
        name: "Herald",
        picture: "https://scontent.threads.example/h.jpg"
      },
      "25990022": {
        id: "25990022",
        username: "someone.else",
        name: "Someone",
        picture: "https://scontent.threads.example/s.jpg"
      }
    },
    authorizePath: "/oauth/authorize",
    authorizeHash: "",
    exchangeGrant: "th_exchange_token",
    refreshGrant: "th_refresh_token",
    mePath: "/v1.0/me",
    prefixes: { short: "THAAS", long: "THAAL" },
    codeRefused: (quote) => metaError(400, `Invalid verification code format.${quote}`, 100, { subcode: 36007 }),
    codeAnswer: (accessToken, user) => ({ status: 200, body: { access_token: accessToken, user_id: Number(user.id) } }),
    me: (user, fields) => {
      const all: Record<string, unknown> = {
        id: user.id,
        username: user.username,
        name: user.name,
        threads_profile_picture_url: user.picture
      }
      const out: Record<string, unknown> = {}
      for (const f of fields) if (f in all) out[f] = all[f]
      return out
    }
  })
