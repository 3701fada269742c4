/** The live registry as `herald serve` builds it from the environment. */
import { describe, expect, it } from "@effect/vitest"
import { SocialAccount } from "@herald/core/Account"
import { Platforms } from "@herald/core/Platforms"
import { platforms as allPlatforms } from "@herald/core/Platform"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as Registry from "../../src/platforms/Registry.js"
import * as LinkedInFake from "./fakes/LinkedInFake.js"
import * as ThreadsApiFake from "./fakes/ThreadsApiFake.js"
import * as XFake from "./fakes/XFake.js"
import { account, HttpLive, part, request } from "./fixtures.js"

const fakes = Effect.acquireRelease(
  Effect.promise(async () => ({
    x: await XFake.start(),
    linkedin: await LinkedInFake.start(),
    threads: await ThreadsApiFake.start()
  })),
  (f) => Effect.promise(() => Promise.all([f.x.server.close(), f.linkedin.server.close(), f.threads.server.close()]))
)

describe("Registry.layerLive", () => {
  it.scoped("registers the real clients, at the origins the environment names; other platforms have none", () =>
    Effect.gen(function*() {
      const f = yield* fakes
      const options = ConnectionsConfig.platformOptionsFromEnv({
        HERALD_X_API_URL: f.x.server.url,
        HERALD_LINKEDIN_API_URL: f.linkedin.server.url,
        HERALD_THREADS_API_URL: f.threads.server.url
      })
      const registry = yield* Platforms.pipe(Effect.provide(Registry.layerLive(options)), Effect.provide(HttpLive))
      const live = allPlatforms.filter((p) => Option.isSome(registry.get(p)))
      expect(live.sort()).toEqual(["bluesky", "discord", "instagram", "linkedin", "telegram", "threads", "x"])

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
        ...request({ platform: "threads", credentials: { access_token: ThreadsApiFake.accessToken }, main: part("to Threads") }),
        account: new SocialAccount({ ...account("threads"), platformAccountId: ThreadsApiFake.userId })
      })
      expect(f.threads.posts).toHaveLength(1)
    }))
})
