/**
 * Configuration of account connections from the environment.
 *
 * OAuth platforms, each enabled by its client credentials (redirect URI to register with the platform:
 * `{HERALD_PUBLIC_URL}/oauth/callback/{platform}`):
 *   HERALD_X_CLIENT_ID, HERALD_X_CLIENT_SECRET (secret optional: a public client uses PKCE alone)
 *   HERALD_LINKEDIN_CLIENT_ID / _SECRET, HERALD_YOUTUBE_CLIENT_ID / _SECRET,
 *   HERALD_PINTEREST_CLIENT_ID / _SECRET, HERALD_TIKTOK_CLIENT_ID / _SECRET (the TikTok client key),
 *   HERALD_FACEBOOK_CLIENT_ID / _SECRET (the Meta app id and secret), HERALD_INSTAGRAM_CLIENT_ID /
 *   _SECRET (the Instagram app id and secret of the app's Instagram Login product),
 *   HERALD_THREADS_CLIENT_ID / _SECRET (the Threads app id and secret)
 * Base URLs, for fakes and sandboxes: HERALD_X_AUTHORIZE_URL, HERALD_X_API_URL,
 *   HERALD_LINKEDIN_OAUTH_URL, HERALD_LINKEDIN_API_URL, HERALD_YOUTUBE_AUTHORIZE_URL,
 *   HERALD_YOUTUBE_TOKEN_URL, HERALD_YOUTUBE_API_URL, HERALD_PINTEREST_AUTHORIZE_URL,
 *   HERALD_PINTEREST_API_URL, HERALD_TIKTOK_AUTHORIZE_URL, HERALD_TIKTOK_API_URL,
 *   HERALD_FACEBOOK_AUTHORIZE_URL (the versioned dialog), HERALD_FACEBOOK_API_URL (graph.facebook.com),
 *   HERALD_INSTAGRAM_AUTHORIZE_URL, HERALD_INSTAGRAM_OAUTH_URL (api.instagram.com),
 *   HERALD_INSTAGRAM_API_URL (graph.instagram.com), HERALD_THREADS_AUTHORIZE_URL,
 *   HERALD_THREADS_API_URL (graph.threads.net).
 * Publishing clients' API origins: HERALD_TELEGRAM_API_URL, HERALD_DISCORD_API_URL,
 *   HERALD_BLUESKY_SERVICE_URL; HERALD_X_API_URL, HERALD_LINKEDIN_API_URL, HERALD_THREADS_API_URL,
 *   HERALD_INSTAGRAM_API_URL, HERALD_FACEBOOK_API_URL, HERALD_YOUTUBE_API_URL, HERALD_TIKTOK_API_URL and
 *   HERALD_PINTEREST_API_URL (https://api-sandbox.pinterest.com for Trial-access apps) are shared with those platforms' OAuth calls; HERALD_FACEBOOK_VIDEO_API_URL (graph-video.facebook.com,
 *   default the Facebook API origin when that is set) and HERALD_YOUTUBE_UPLOAD_URL (default the YouTube
 *   API origin) are where video bytes go.
 * LinkedIn Pages: HERALD_LINKEDIN_ORGANIZATIONS=true also connects the pages the member administers
 *   (the app needs LinkedIn's Community Management API product).
 * API versions (`platforms/ApiVersions.ts`): HERALD_LINKEDIN_VERSION (the LinkedIn-Version header,
 *   YYYYMM, default 202607) and HERALD_GRAPH_VERSION (Facebook and Instagram, vNN.N, default v26.0).
 * The connect state is signed with a key derived from the credential cipher's root key.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { ConnectSettings, type OAuthProvider, OAuthProviders } from "@herald/core/accounts/OAuthProviders"
import type { OAuthPlatform } from "@herald/core/domain/Platform"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as UrlImporter from "../media/UrlImporter.js"
import * as ApiVersions from "../platforms/ApiVersions.js"
import type * as Registry from "../platforms/Registry.js"
import { CredentialCipher } from "../security/CredentialCipher.js"
import * as Facebook from "./Facebook.js"
import * as Instagram from "./Instagram.js"
import * as LinkedIn from "./LinkedIn.js"
import * as Pinterest from "./Pinterest.js"
import * as Threads from "./Threads.js"
import * as TikTok from "./TikTok.js"
import * as X from "./X.js"
import * as YouTube from "./YouTube.js"

type Env = Readonly<Record<string, string | undefined>>

const read = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

const prefixOf = (platform: OAuthPlatform) => `HERALD_${platform.toUpperCase()}`

/** The providers whose client credentials are configured; for the others, what to set. */
export const makeProviders = (
  env: Env = process.env
): Effect.Effect<OAuthProviders["Type"], never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const built = new Map<OAuthPlatform, OAuthProvider>()
    const missing = new Map<OAuthPlatform, string>()
    const client = (platform: OAuthPlatform, secretOptional = false) => {
      const prefix = prefixOf(platform)
      const id = read(env, `${prefix}_CLIENT_ID`)
      const secret = read(env, `${prefix}_CLIENT_SECRET`)
      if (id === undefined || (secret === undefined && !secretOptional)) {
        missing.set(
          platform,
          `Connecting ${platform} is not configured on this server: set ${prefix}_CLIENT_ID` +
            (secretOptional ? "" : ` and ${prefix}_CLIENT_SECRET`) +
            ` (the OAuth client of your ${platform} developer app) and HERALD_PUBLIC_URL; register ` +
            `{HERALD_PUBLIC_URL}/oauth/callback/${platform} as its redirect URI`
        )
        return undefined
      }
      return { clientId: id, clientSecret: secret === undefined ? undefined : Redacted.make(secret) }
    }
    /** A client whose secret is required. */
    const confidential = (platform: OAuthPlatform) => {
      const found = client(platform)
      return found?.clientSecret === undefined
        ? undefined
        : { clientId: found.clientId, clientSecret: found.clientSecret }
    }
    const opt = <K extends string>(key: K, name: string): { readonly [P in K]?: string } => {
      const value = read(env, name)
      return (value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: string }
    }
    const x = client("x", true)
    if (x !== undefined) {
      built.set(
        "x",
        yield* X.make({ ...x, ...opt("authorizeUrl", "HERALD_X_AUTHORIZE_URL"), ...opt("apiUrl", "HERALD_X_API_URL") })
      )
    }
    const linkedin = client("linkedin")
    if (linkedin !== undefined) {
      built.set(
        "linkedin",
        yield* LinkedIn.make({
          ...linkedin,
          ...opt("oauthUrl", "HERALD_LINKEDIN_OAUTH_URL"),
          ...opt("apiUrl", "HERALD_LINKEDIN_API_URL"),
          // The member's LinkedIn Pages too (Community Management API): an operator's choice, since the
          // scopes it adds are refused to apps without that product.
          organizations: read(env, "HERALD_LINKEDIN_ORGANIZATIONS")?.toLowerCase() === "true",
          version: ApiVersions.fromEnv(env).linkedin
        })
      )
    }
    const youtube = client("youtube")
    if (youtube !== undefined) {
      built.set(
        "youtube",
        yield* YouTube.make({
          ...youtube,
          ...opt("authorizeUrl", "HERALD_YOUTUBE_AUTHORIZE_URL"),
          ...opt("tokenUrl", "HERALD_YOUTUBE_TOKEN_URL"),
          ...opt("apiUrl", "HERALD_YOUTUBE_API_URL")
        })
      )
    }
    const pinterest = client("pinterest")
    if (pinterest !== undefined) {
      built.set(
        "pinterest",
        yield* Pinterest.make({
          ...pinterest,
          ...opt("authorizeUrl", "HERALD_PINTEREST_AUTHORIZE_URL"),
          ...opt("apiUrl", "HERALD_PINTEREST_API_URL")
        })
      )
    }
    const tiktok = client("tiktok")
    if (tiktok !== undefined) {
      built.set(
        "tiktok",
        yield* TikTok.make({
          ...tiktok,
          ...opt("authorizeUrl", "HERALD_TIKTOK_AUTHORIZE_URL"),
          ...opt("apiUrl", "HERALD_TIKTOK_API_URL")
        })
      )
    }
    const graphVersion = ApiVersions.fromEnv(env).graph
    const facebook = confidential("facebook")
    if (facebook !== undefined) {
      built.set(
        "facebook",
        yield* Facebook.make({
          ...facebook,
          graphVersion,
          ...opt("authorizeUrl", "HERALD_FACEBOOK_AUTHORIZE_URL"),
          ...opt("apiUrl", "HERALD_FACEBOOK_API_URL")
        })
      )
    }
    const instagram = confidential("instagram")
    if (instagram !== undefined) {
      built.set(
        "instagram",
        yield* Instagram.make({
          ...instagram,
          graphVersion,
          ...opt("authorizeUrl", "HERALD_INSTAGRAM_AUTHORIZE_URL"),
          ...opt("oauthUrl", "HERALD_INSTAGRAM_OAUTH_URL"),
          ...opt("apiUrl", "HERALD_INSTAGRAM_API_URL")
        })
      )
    }
    const threads = confidential("threads")
    if (threads !== undefined) {
      built.set(
        "threads",
        yield* Threads.make({
          ...threads,
          ...opt("authorizeUrl", "HERALD_THREADS_AUTHORIZE_URL"),
          ...opt("apiUrl", "HERALD_THREADS_API_URL")
        })
      )
    }
    return OAuthProviders.of({
      get: (platform) => {
        const provider = built.get(platform)
        if (provider !== undefined) return Either.right(provider)
        return Either.left(missing.get(platform) ?? `Connecting ${platform} is not configured`)
      }
    })
  })

export const layerProviders = (env: Env = process.env): Layer.Layer<OAuthProviders, never, HttpClient.HttpClient> =>
  Layer.effect(OAuthProviders, makeProviders(env))

/** HERALD_PUBLIC_URL, and the state-signing key derived from the cipher's root key. */
export const layerSettings = (env: Env = process.env): Layer.Layer<ConnectSettings, never, CredentialCipher> =>
  Layer.effect(
    ConnectSettings,
    Effect.gen(function*() {
      const cipher = yield* CredentialCipher
      const stateSecret = yield* cipher.deriveSecret("connect-state/v1").pipe(Effect.orDie)
      const publicUrl = read(env, "HERALD_PUBLIC_URL")
      return ConnectSettings.of({
        publicUrl: Option.fromNullable(publicUrl?.replace(/\/+$/, "")),
        stateSecret
      })
    })
  )

/** The publishing clients' API origins (tests point them at fakes). */
export const platformOptionsFromEnv = (env: Env = process.env): Registry.LiveOptions => {
  const telegram = read(env, "HERALD_TELEGRAM_API_URL")
  const discord = read(env, "HERALD_DISCORD_API_URL")
  const bluesky = read(env, "HERALD_BLUESKY_SERVICE_URL")
  // Operator switch: a self-hosted PDS on a private network (read as the webhook switch is).
  const blueskyAllowPrivate = read(env, "HERALD_BLUESKY_ALLOW_PRIVATE")?.toLowerCase() === "true"
  // One API origin per platform for the OAuth identity calls and publishing.
  const x = read(env, "HERALD_X_API_URL")
  const linkedin = read(env, "HERALD_LINKEDIN_API_URL")
  const threads = read(env, "HERALD_THREADS_API_URL")
  const instagram = read(env, "HERALD_INSTAGRAM_API_URL")
  const facebook = read(env, "HERALD_FACEBOOK_API_URL")
  const facebookVideo = read(env, "HERALD_FACEBOOK_VIDEO_API_URL")
  const youtube = read(env, "HERALD_YOUTUBE_API_URL")
  const youtubeUpload = read(env, "HERALD_YOUTUBE_UPLOAD_URL")
  const tiktok = read(env, "HERALD_TIKTOK_API_URL")
  const pinterest = read(env, "HERALD_PINTEREST_API_URL")
  const versions = ApiVersions.fromEnv(env)
  // Link previews (Bluesky cards, LinkedIn articles) are fetched through the media importer's address
  // guard (HERALD_MEDIA_ALLOW_PRIVATE).
  const linkCards = UrlImporter.make(UrlImporter.fromEnv(env))
  const graphVersion = { graphVersion: versions.graph }
  return {
    versionNotices: versions.ignored,
    ...(pinterest === undefined ? {} : { pinterest: { apiUrl: pinterest } }),
    ...(tiktok === undefined ? {} : { tiktok: { apiUrl: tiktok } }),
    facebook: {
      ...graphVersion,
      ...(facebook === undefined ? {} : { apiUrl: facebook }),
      ...(facebookVideo === undefined ? {} : { videoApiUrl: facebookVideo })
    },
    ...(youtube === undefined && youtubeUpload === undefined
      ? {}
      : {
        youtube: {
          ...(youtube === undefined ? {} : { apiUrl: youtube }),
          ...(youtubeUpload === undefined ? {} : { uploadUrl: youtubeUpload })
        }
      }),
    ...(threads === undefined ? {} : { threads: { apiUrl: threads } }),
    instagram: {
      ...graphVersion,
      ...(instagram === undefined ? {} : { apiUrl: instagram })
    },
    ...(x === undefined ? {} : { x: { apiUrl: x } }),
    linkedin: {
      version: versions.linkedin,
      linkCards,
      ...(linkedin === undefined ? {} : { apiUrl: linkedin })
    },
    ...(telegram === undefined ? {} : { telegram: { baseUrl: telegram } }),
    ...(discord === undefined ? {} : { discord: { baseUrl: discord } }),
    bluesky: {
      linkCards,
      ...(bluesky === undefined ? {} : { service: bluesky, allowInsecureService: bluesky.startsWith("http://") }),
      ...(blueskyAllowPrivate ? { allowPrivate: true } : {})
    }
  }
}
