import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as UrlImporter from "../../src/media/UrlImporter.js"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as Bluesky from "../../src/platforms/Bluesky.js"
import * as LinkPreview from "../../src/platforms/LinkPreview.js"
import * as BlueskyFake from "./fakes/BlueskyFake.js"
import * as FakeServer from "./fakes/FakeServer.js"
import { bytesOf, HttpLive, media, part, request } from "./fixtures.js"

const thumb = bytesOf(4000, 5)

const page = `<!doctype html><html><head>
<title>Fallback title</title>
<meta property="og:title" content="Herald &amp; friends">
<meta name="description" content="Publishing, one API">
<meta property="og:image" content="/card.png">
</head><body>hello</body></html>`

const setup = (allowPrivate: boolean) =>
  Effect.gen(function*() {
    const fake = yield* Effect.acquireRelease(
      Effect.promise(() => BlueskyFake.start()),
      (f) => Effect.promise(() => f.close())
    )
    const site = yield* FakeServer.scoped((r) =>
      r.path === "/card.png"
        ? { status: 200, headers: { "content-type": "image/png" }, body: Buffer.from(thumb) }
        : { status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: page }
    )
    const client = yield* Bluesky.make({
      service: fake.entryway.url,
      videoService: fake.pds.url,
      appView: fake.pds.url,
      linkCards: UrlImporter.make({ allowPrivate })
    }).pipe(Effect.provide(HttpLive))
    const identity = yield* client.connectWithCredentials!({
      handle: "@herald.bsky.social",
      app_password: BlueskyFake.appPassword
    })
    return { fake, site, client, credentials: identity.credentials }
  })

describe("Bluesky link card (app.bsky.embed.external)", () => {
  it("reads Open Graph tags first, then <title> and meta description; the image made absolute", () => {
    expect(LinkPreview.parsePage(page, "https://example.com/a/b")).toEqual({
      title: "Herald & friends",
      description: "Publishing, one API",
      image: Option.some("https://example.com/card.png")
    })
    expect(LinkPreview.parsePage("<title> Plain </title>", "https://example.com/")).toEqual({
      title: "Plain",
      description: "",
      image: Option.none()
    })
  })

  it.scopedLive("a post with a link and no media gets a card with title, description and the thumbnail blob", () =>
    Effect.gen(function*() {
      const { client, credentials, fake, site } = yield* setup(true)
      const link = `${site.url}/post`
      yield* client.publish(request({ platform: "bluesky", credentials, main: part(`Read this ${link}`) }))
      const upload = fake.pds.requests.find((r) => r.path === "/xrpc/com.atproto.repo.uploadBlob")!
      expect(upload.headers["content-type"]).toBe("image/png")
      expect(new Uint8Array(upload.body)).toEqual(thumb)
      expect(fake.records[0]!.record["embed"]).toEqual({
        $type: "app.bsky.embed.external",
        external: {
          uri: link,
          title: "Herald & friends",
          description: "Publishing, one API",
          thumb: { $type: "blob", ref: { $link: fake.blobs[0]!.link }, mimeType: "image/png", size: thumb.length }
        }
      })
      // With media, no card is fetched.
      const before = site.requests.length
      yield* client.publish(request({
        platform: "bluesky",
        credentials,
        main: part(`Pic ${link}`, [media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(100, 1) })])
      }))
      expect(site.requests.length).toBe(before)
      expect((fake.records[1]!.record["embed"] as { $type: string }).$type).toBe("app.bsky.embed.images")
    }))

  it("the live clients fetch cards: platformOptionsFromEnv gives Bluesky a link card fetcher", () => {
    expect(ConnectionsConfig.platformOptionsFromEnv({}).bluesky?.linkCards).toBeDefined()
  })

  it.scopedLive("a link to a private address is refused by the guard: the post goes out without a card", () =>
    Effect.gen(function*() {
      const { client, credentials, fake, site } = yield* setup(false)
      yield* client.publish(request({ platform: "bluesky", credentials, main: part(`Read this ${site.url}/post`) }))
      expect(site.requests).toHaveLength(0)
      expect(fake.records[0]!.record["embed"]).toBeUndefined()
      expect(fake.records[0]!.record["text"]).toBe(`Read this ${site.url}/post`)
    }))
})
