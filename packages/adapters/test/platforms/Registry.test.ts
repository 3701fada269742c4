/** The live registry as `herald serve` builds it from the environment. */
import { describe, expect, it } from "@effect/vitest"
import { SocialAccount } from "@herald/core/domain/Account"
import { Platforms } from "@herald/core/platforms/Platforms"
import { platforms as allPlatforms } from "@herald/core/domain/Platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as Registry from "../../src/platforms/Registry.js"
import * as FacebookApiFake from "./fakes/FacebookApiFake.js"
import * as LinkedInFake from "./fakes/LinkedInFake.js"
import * as PinterestApiFake from "./fakes/PinterestApiFake.js"
import * as ThreadsApiFake from "./fakes/ThreadsApiFake.js"
import * as TikTokApiFake from "./fakes/TikTokApiFake.js"
import * as XFake from "./fakes/XFake.js"
import * as YouTubeApiFake from "./fakes/YouTubeApiFake.js"
import { account, HttpLive, media, part, request } from "./fixtures.js"

const fakes = Effect.acquireRelease(
  Effect.promise(async () => ({
    x: await XFake.start(),
    linkedin: await LinkedInFake.start(),
    threads: await ThreadsApiFake.start(),
    facebook: await FacebookApiFake.start(),
    youtube: await YouTubeApiFake.start(),
    tiktok: await TikTokApiFake.start(),
    pinterest: await PinterestApiFake.start()
  })),
  (f) =>
    Effect.promise(() =>
      Promise.all([
        f.x.server.close(),
        f.linkedin.server.close(),
        f.threads.server.close(),
        f.facebook.server.close(),
        f.youtube.server.close(),
        f.tiktok.server.close(),
        f.pinterest.server.close()
      ])
    )
)

describe("Registry.layerLive", () => {
  it.scoped("registers the real clients, at the origins the environment names; other platforms have none", () =>
    Effect.gen(function*() {
      const f = yield* fakes
      const options = ConnectionsConfig.platformOptionsFromEnv({
        HERALD_X_API_URL: f.x.server.url,
        HERALD_LINKEDIN_API_URL: f.linkedin.server.url,
        HERALD_THREADS_API_URL: f.threads.server.url,
        HERALD_FACEBOOK_API_URL: f.facebook.server.url,
        HERALD_YOUTUBE_API_URL: f.youtube.server.url,
        HERALD_TIKTOK_API_URL: f.tiktok.server.url,
        HERALD_PINTEREST_API_URL: f.pinterest.server.url
      })
      const registry = yield* Platforms.pipe(Effect.provide(Registry.layerLive(options)), Effect.provide(HttpLive))
      const live = allPlatforms.filter((p) => Option.isSome(registry.get(p)))
      expect(live.sort()).toEqual([
        "bluesky",
        "discord",
        "facebook",
        "instagram",
        "linkedin",
        "pinterest",
        "telegram",
        "threads",
        "tiktok",
        "x",
        "youtube"
      ])

      const x = Option.getOrThrow(registry.get("x"))
      yield* x.publish(request({ platform: "x", credentials: { access_token: XFake.accessToken }, main: part("to X") }))
      expect(f.x.posts.map((p) => p.text)).toEqual(["to X"])

      const linkedin = Option.getOrThrow(registry.get("linkedin"))
      yield* linkedin.publish(request({
        platform: "linkedin",
        credentials: { access_token: LinkedInFake.accessToken, author_urn: LinkedInFake.authorUrn },
        main: part("to LinkedIn")
      }))
      expect(f.linkedin.posts).toHaveLength(1)

      f.threads.imagePolls = 0
      const threads = Option.getOrThrow(registry.get("threads"))
      yield* threads.publish({
        ...request({
          platform: "threads",
          credentials: { access_token: ThreadsApiFake.accessToken },
          main: part("to Threads")
        }),
        account: new SocialAccount({ ...account("threads"), platformAccountId: ThreadsApiFake.userId })
      })
      expect(f.threads.posts).toHaveLength(1)

      const facebook = Option.getOrThrow(registry.get("facebook"))
      yield* facebook.publish({
        ...request({
          platform: "facebook",
          credentials: { access_token: FacebookApiFake.pageToken, page_id: FacebookApiFake.pageId },
          main: part("to Facebook")
        }),
        account: new SocialAccount({ ...account("facebook"), platformAccountId: FacebookApiFake.pageId })
      })
      expect(f.facebook.posts.map((p) => p.params["message"])).toEqual(["to Facebook"])

      // Uploads default to the API origin, so the session is opened on the fake.
      const youtube = Option.getOrThrow(registry.get("youtube"))
      const bytes = YouTubeApiFake.mp4({ width: 1920, height: 1080, seconds: 10, size: 2000 })
      yield* youtube.publish(request({
        platform: "youtube",
        credentials: { access_token: YouTubeApiFake.accessToken },
        main: part("to YouTube", [media({ kind: "video", mimeType: "video/mp4", bytes })]),
        settings: { title: "Registry" }
      }))
      expect(f.youtube.videos).toHaveLength(1)

      f.tiktok.processingPolls = 0
      const tiktok = Option.getOrThrow(registry.get("tiktok"))
      yield* tiktok.publish(request({
        platform: "tiktok",
        credentials: { access_token: f.tiktok.accessToken },
        main: part("to TikTok", [media({ kind: "video", mimeType: "video/mp4", bytes })]),
        settings: { privacyLevel: "SELF_ONLY" }
      }))
      expect(f.tiktok.uploads).toHaveLength(1)

      const pinterest = Option.getOrThrow(registry.get("pinterest"))
      yield* pinterest.publish(request({
        platform: "pinterest",
        credentials: { access_token: f.pinterest.accessToken, default_board_id: f.pinterest.boards[0]!.id },
        main: part("to Pinterest", [media({ kind: "image", mimeType: "image/png", bytes: new Uint8Array(8) })])
      }))
      expect(f.pinterest.pins).toHaveLength(1)
    }))
})
