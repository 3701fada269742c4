/**
 * A publish refused as `auth` (a 401 from the platform's fake: the stored access token has expired
 * while the refresh sweep has not run) renews the token once through the platform's OAuth provider,
 * stores the renewed credentials as the sweep does, and goes out with them: on every OAuth platform
 * whose tokens renew.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as Instagram from "@herald/adapters/platforms/Instagram"
import * as LinkedIn from "@herald/adapters/platforms/LinkedIn"
import * as Pinterest from "@herald/adapters/platforms/Pinterest"
import * as PlatformTransport from "@herald/adapters/platforms/PlatformTransport"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as Threads from "@herald/adapters/platforms/Threads"
import * as TikTok from "@herald/adapters/platforms/TikTok"
import * as X from "@herald/adapters/platforms/X"
import * as YouTube from "@herald/adapters/platforms/YouTube"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as OAuthProviders from "@herald/core/accounts/OAuthProviders"
import { OrganizationId } from "@herald/core/kernel/Ids"
import type { OAuthPlatform } from "@herald/core/domain/Platform"
import { type PlatformClient, Platforms, type PublishRequest } from "@herald/core/platforms/Platforms"
import * as PublishAuthRetry from "@herald/core/publishing/PublishAuthRetry"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as FakeServer from "../../packages/adapters/test/platforms/fakes/FakeServer.js"
import * as InstagramApiFake from "../../packages/adapters/test/platforms/fakes/InstagramApiFake.js"
import * as LinkedInFake from "../../packages/adapters/test/platforms/fakes/LinkedInFake.js"
import * as PinterestApiFake from "../../packages/adapters/test/platforms/fakes/PinterestApiFake.js"
import * as ThreadsApiFake from "../../packages/adapters/test/platforms/fakes/ThreadsApiFake.js"
import * as TikTokApiFake from "../../packages/adapters/test/platforms/fakes/TikTokApiFake.js"
import * as XFake from "../../packages/adapters/test/platforms/fakes/XFake.js"
import * as YouTubeApiFake from "../../packages/adapters/test/platforms/fakes/YouTubeApiFake.js"
import { bytesOf, media, part } from "../../packages/adapters/test/platforms/fixtures.js"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"

/** One platform's fake, its client, what a publish sends, and the token the fake accepts. */
interface Case {
  readonly server: FakeServer.FakeServer
  readonly client: PlatformClient
  readonly platformAccountId: string
  /** The stored credentials beside the access token (identity fields, the refresh token or `refresh_at`). */
  readonly stored: Readonly<Record<string, string>>
  readonly validToken: string
  readonly request: Pick<PublishRequest, "main" | "settings">
  /** Counts the fake's published posts. */
  readonly published: () => number
}

const video = () => {
  const bytes = YouTubeApiFake.mp4({ width: 1080, height: 1920, seconds: 30, size: 4000 })
  return media({ kind: "video", mimeType: "video/mp4", bytes, filename: "clip.mp4" })
}

const jpeg = (publicUrl?: string) =>
  media({
    kind: "image",
    mimeType: "image/jpeg",
    bytes: bytesOf(300, 1),
    filename: "photo.jpg",
    ...(publicUrl === undefined ? {} : { publicUrl })
  })

const http = <A, E>(effect: Effect.Effect<A, E, import("@effect/platform/HttpClient").HttpClient>) =>
  Effect.provide(effect, PlatformTransport.layer)

/** The access token a request carries: a Bearer or OAuth header, or Meta's `access_token` parameter. */
const tokenOf = (request: FakeServer.Recorded): string =>
  /^(?:Bearer|OAuth) (.+)$/.exec(request.headers.authorization ?? "")?.[1] ??
    request.query.get("access_token") ?? request.form?.get("access_token")?.toString() ?? ""

/** Requests to a path ending in `suffix` that carried the token the fake accepts. */
const sentWith = (server: FakeServer.FakeServer, suffix: string, token: string) =>
  server.requests.filter((r) => r.path.endsWith(suffix) && tokenOf(r) === token).length

const closing = <F extends { readonly server: FakeServer.FakeServer }>(start: () => Promise<F>) =>
  Effect.acquireRelease(Effect.promise(start), (f) => Effect.promise(() => f.server.close()))

const cases: Record<OAuthPlatform & string, Effect.Effect<Case, never, import("effect/Scope").Scope> | undefined> = {
  facebook: undefined,
  x: Effect.gen(function*() {
    const fake = yield* closing(() => XFake.start())
    return {
      server: fake.server,
      client: yield* http(X.make({ apiUrl: fake.server.url })),
      platformAccountId: XFake.userId,
      stored: { refresh_token: "x-refresh", user_id: XFake.userId, username: XFake.username },
      validToken: XFake.accessToken,
      request: { main: part("after downtime"), settings: {} },
      published: () => fake.posts.length
    }
  }),
  youtube: Effect.gen(function*() {
    const fake = yield* closing(() => YouTubeApiFake.start())
    return {
      server: fake.server,
      client: yield* http(YouTube.make({ apiUrl: fake.server.url, chunkSize: YouTubeApiFake.chunkUnit })),
      platformAccountId: YouTubeApiFake.channelId,
      stored: { refresh_token: "1//yt-refresh" },
      validToken: YouTubeApiFake.accessToken,
      request: { main: part("a video", [video()]), settings: { title: "After downtime" } },
      published: () => fake.videos.length
    }
  }),
  linkedin: Effect.gen(function*() {
    const fake = yield* closing(() => LinkedInFake.start())
    return {
      server: fake.server,
      client: yield* http(LinkedIn.make({ apiUrl: fake.server.url, mediaGrace: "1 millis" })),
      platformAccountId: LinkedInFake.memberId,
      stored: { refresh_token: "li-refresh", user_id: LinkedInFake.memberId, author_urn: LinkedInFake.authorUrn },
      validToken: LinkedInFake.accessToken,
      request: { main: part("after downtime"), settings: {} },
      published: () => sentWith(fake.server, "/rest/posts", LinkedInFake.accessToken)
    }
  }),
  pinterest: Effect.gen(function*() {
    const fake = yield* closing(() => PinterestApiFake.start())
    return {
      server: fake.server,
      client: yield* http(Pinterest.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 })),
      platformAccountId: "pinterest-user",
      stored: { refresh_token: "pina-refresh", default_board_id: "1070096254886001" },
      validToken: fake.accessToken,
      request: { main: part("a pin", [jpeg("https://cdn.example.com/a.jpg")]), settings: {} },
      published: () => fake.pins.length
    }
  }),
  tiktok: Effect.gen(function*() {
    const fake = yield* closing(() => TikTokApiFake.start())
    return {
      server: fake.server,
      client: yield* http(
        TikTok.make({ apiUrl: fake.server.url, chunkSize: 5 * 1024 * 1024, pollInterval: "5 millis", maxPolls: 10 })
      ),
      platformAccountId: "tiktok-user",
      stored: { refresh_token: "rft.tiktok" },
      validToken: fake.accessToken,
      request: { main: part("a clip", [video()]), settings: { privacyLevel: "SELF_ONLY" } },
      published: () => sentWith(fake.server, "/v2/post/publish/video/init/", fake.accessToken)
    }
  }),
  threads: Effect.gen(function*() {
    const fake = yield* closing(() => ThreadsApiFake.start())
    return {
      server: fake.server,
      client: yield* http(Threads.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 })),
      platformAccountId: ThreadsApiFake.userId,
      stored: { refresh_at: "1767232800000", user_id: ThreadsApiFake.userId, username: ThreadsApiFake.username },
      validToken: ThreadsApiFake.accessToken,
      request: { main: part("after downtime"), settings: {} },
      published: () => sentWith(fake.server, "/threads_publish", ThreadsApiFake.accessToken)
    }
  }),
  instagram: Effect.gen(function*() {
    const fake = yield* closing(() => InstagramApiFake.start())
    return {
      server: fake.server,
      client: yield* http(
        Instagram.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 })
      ),
      platformAccountId: InstagramApiFake.userId,
      stored: { refresh_at: "1767232800000", user_id: InstagramApiFake.userId, username: InstagramApiFake.username },
      validToken: InstagramApiFake.accessToken,
      request: { main: part("a photo", [jpeg("https://media.example.com/m/1.jpg")]), settings: {} },
      published: () => sentWith(fake.server, "/media_publish", InstagramApiFake.accessToken)
    }
  })
}

const stores = SqlStores.layer.pipe(
  Layer.provide(CredentialCipher.layer({ secret: Redacted.make("test-secret"), dataDir: "/nonexistent" })),
  Layer.provideMerge(NodeIdGenerator.layer),
  Layer.provideMerge(TestDatabases.sqlite),
  Layer.orDie
)

/** An OAuth provider whose refresh hands out the token the fake accepts (and a rotated refresh token). */
const providers = (platform: OAuthPlatform, validToken: string, refreshes: { count: number }) =>
  Layer.succeed(OAuthProviders.OAuthProviders, {
    get: (asked) =>
      asked !== platform
        ? Either.left(`${asked} is not configured`)
        : Either.right(
          {
            platform,
            authorizeUrl: () => "https://example.invalid/authorize",
            exchangeCode: () => Effect.die("not used"),
            refresh: (credentials) =>
              Effect.sync(() => {
                refreshes.count++
                const stored = Redacted.value(credentials)
                return {
                  platformAccountId: "renewed",
                  accountName: "renewed",
                  avatarUrl: "",
                  credentials: {
                    ...stored,
                    access_token: validToken,
                    ...(stored["refresh_token"] === undefined ? {} : { refresh_token: `${stored["refresh_token"]}-2` })
                  },
                  tokenExpiresAt: Option.some(DateTime.unsafeMake(Date.now() + 3_600_000))
                }
              })
          } satisfies OAuthProviders.OAuthProvider
        )
  })

describe("a publish refused as auth renews the token once, on every platform whose tokens renew", () => {
  it("the platforms retried are the OAuth platforms with renewable grants", () => {
    expect([...PublishAuthRetry.refreshablePlatforms].sort()).toEqual(
      ["instagram", "linkedin", "pinterest", "threads", "tiktok", "x", "youtube"]
    )
  })

  for (const platform of PublishAuthRetry.refreshablePlatforms as ReadonlyArray<OAuthPlatform>) {
    it.scopedLive(`${platform}: the fake answers 401 to the stale token; renewed, stored, published once`, () =>
      Effect.gen(function*() {
        const made = cases[platform]
        if (made === undefined) return yield* Effect.die(`no case for ${platform}`)
        const c = yield* made
        const refreshes = { count: 0 }
        const registry = Layer.succeed(Platforms, Registry.make([c.client]))
        const world = Layer.mergeAll(registry, providers(platform, c.validToken, refreshes)).pipe(
          Layer.provideMerge(stores)
        )
        yield* Effect.gen(function*() {
          const orgId = OrganizationId.make(randomUUID())
          const now = yield* DateTime.now
          yield* (yield* OrganizationStore).insert(
            new Organization({
              id: orgId,
              name: "Herald test",
              plan: "scale",
              subscriptionStatus: "active",
              trialEndsAt: Option.none(),
              createdAt: now
            })
          )
          const staleCredentials = { ...c.stored, access_token: `stale-${platform}-token-0000000000` }
          const account = yield* (yield* AccountStore).insert({
            organizationId: orgId,
            platform,
            platformAccountId: c.platformAccountId,
            accountName: "acct",
            avatarUrl: "",
            isActive: true,
            connectionFlow: "direct",
            needsReconnection: false,
            tokenExpiresAt: Option.some(DateTime.unsafeMake(Date.now() - 60_000)),
            lastSuccessAt: Option.none(),
            recentFailures: 0,
            credentials: Option.some(Redacted.make(JSON.stringify(staleCredentials))),
            createdAt: now,
            updatedAt: now
          })
          const client = Option.getOrThrow(
            (yield* PublishAuthRetry.decorate(PublishAuthRetry.refreshablePlatforms)).get(platform)
          )
          const result = yield* client.publish({
            account,
            credentials: Redacted.make(staleCredentials),
            main: c.request.main,
            contentType: Option.none(),
            settings: c.request.settings,
            thread: []
          })
          expect(result.platformPostId).not.toBe("")
          expect(refreshes.count).toBe(1)
          // The fake refused the stale token with its 401, then took the renewed one.
          const tokens = c.server.requests.map(tokenOf)
          expect(tokens[0]).toBe(staleCredentials.access_token)
          expect(tokens.at(-1)).toBe(c.validToken)
          expect(c.published()).toBe(1)
          // Stored as the sweep stores a renewal: the new pair, the expiry, the account healthy.
          const after = Option.getOrThrow(yield* (yield* AccountStore).findById(orgId, account.id))
          const stored = JSON.parse(Redacted.value(Option.getOrThrow(after.credentials))) as Record<string, string>
          expect(stored["access_token"]).toBe(c.validToken)
          if (c.stored["refresh_token"] !== undefined) {
            expect(stored["refresh_token"]).toBe(`${c.stored["refresh_token"]}-2`)
          }
          expect(after.needsReconnection).toBe(false)
          expect(Option.isSome(after.tokenExpiresAt)).toBe(true)
        }).pipe(Effect.provide(world))
      }))
  }
})
