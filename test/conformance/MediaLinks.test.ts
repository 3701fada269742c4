/**
 * Signed media links on Herald's own public origin, over real HTTP: a `herald serve`
 * child process with `HERALD_MEDIA_PUBLIC_URL` naming its `/media-public` route. The dispatcher's
 * media path (built here as a `herald worker` sharing the store and data dir builds it) hands the live
 * Instagram client a signed link to the JPEG rendition; the Graph fake fetches it over loopback and
 * receives the rendition. Unsigned, altered, swapped, expired links are 403 `auth_failed`; a deleted
 * medium's link is 404. On SQLite and (where one answers) Postgres.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileBlobStore from "@herald/adapters/media/FileBlobStore"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as Instagram from "@herald/adapters/platforms/Instagram"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import { SocialAccount } from "@herald/core/domain/Account"
import * as MediaLinks from "@herald/core/media/MediaLinks"
import type { MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import { DispatchMedia } from "@herald/core/publishing/Dispatcher"
import * as MediaHttp from "@herald/http/groups/Media"
import * as MediaServices from "@herald/http/MediaServices"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as InstagramApiFake from "../../packages/adapters/test/platforms/fakes/InstagramApiFake.js"
import { account, part, request } from "../../packages/adapters/test/platforms/fixtures.js"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] MediaLinks conformance on Postgres skipped: ${pg.reason}`)

interface Envelope {
  readonly data: null | Record<string, unknown>
  readonly error: null | { readonly code: string; readonly message: string }
}

const limits = { HERALD_RATE_LIMIT_PER_MINUTE: "1000000", HERALD_RATE_LIMIT_PER_HOUR: "1000000" }

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** A clock two hours back: links signed under it expired an hour ago. */
const pastClock = (offsetMs: number): Clock.Clock => {
  const at = () => Date.now() - offsetMs
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: at,
    currentTimeMillis: Effect.sync(at),
    unsafeCurrentTimeNanos: () => BigInt(at()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(at()) * 1_000_000n),
    sleep: () => Effect.void
  }
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("signed media links on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let fake: InstagramApiFake.InstagramFake
  let publicBase: string
  let dataDir: string

  beforeAll(async () => {
    if (skip) return
    const port = await freePort()
    publicBase = `http://127.0.0.1:${port}${MediaHttp.publicMediaPath}`
    server = await HeraldServer.start({
      postgres,
      args: ["--port", String(port)],
      env: { ...limits, HERALD_MEDIA_PUBLIC_URL: publicBase }
    })
    dataDir = server.storeArgs[1]!
    fake = await InstagramApiFake.start()
    fake.fetchImages = true
  }, 120_000)

  afterAll(async () => {
    if (skip) return
    await fake.server.close()
    await server.stop()
  })

  const upload = async (bytes: Uint8Array): Promise<string> => {
    const presigned = await server.request("POST", "/api/v1/media/upload", {
      body: { filename: "screen.png", content_type: "image/png", file_size: bytes.length }
    })
    expect(presigned.status, presigned.text).toBe(201)
    const data = (presigned.json as Envelope).data!
    const url = new URL(String(data["upload_url"]))
    const put = await fetch(`${server.baseUrl}${url.pathname}${url.search}`, {
      method: "PUT",
      headers: { "content-type": "image/png" },
      body: bytes
    })
    expect(put.status, await put.text()).toBe(200)
    const completed = await server.request("POST", `/api/v1/media/${String(data["id"])}/complete`)
    expect(completed.status, completed.text).toBe(200)
    return String(data["id"])
  }

  /** The worker's media path over the server's store and data dir (another process would build the same). */
  const resolveFor = (mediaId: string) =>
    server.withStore(
      Effect.flatMap(DispatchMedia, (media) =>
        media.resolve(server.orgId as OrganizationId, [mediaId as MediaId], { platform: "instagram", settings: {} }))
        .pipe(
          Effect.provide(
            MediaServices.layerDispatch({ dataDir, env: { HERALD_MEDIA_PUBLIC_URL: publicBase } }).pipe(
              Layer.provide(CredentialCipher.layer({ dataDir }))
            )
          )
        )
    )

  const refusal = async (url: string) => {
    const response = await fetch(url)
    const body = (await response.json()) as Envelope
    return { status: response.status, code: body.error?.code, message: body.error?.message }
  }

  it.skipIf(skip)("the media record's public_url is a signed link that serves the original's bytes", async () => {
    const png = new Uint8Array(
      await sharp({ create: { width: 64, height: 48, channels: 3, background: "#00f" } }).png().toBuffer()
    )
    const id = await upload(png)
    const got = await server.request("GET", `/api/v1/media/${id}`)
    const link = String((got.json as Envelope).data!["public_url"])
    expect(link).toMatch(
      new RegExp(`^${publicBase}/${server.orgId}/${id}\\?expires=\\d+&signature=[0-9a-f]{64}$`)
    )
    const expires = Number(new URL(link).searchParams.get("expires"))
    expect(expires * 1000 - Date.now()).toBeGreaterThan(59 * 60 * 1000)
    expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(60 * 60 * 1000 + 5000)
    const served = await fetch(link)
    expect(served.status).toBe(200)
    expect(served.headers.get("content-type")).toBe("image/png")
    expect(served.headers.get("cache-control")).toBe("private, no-store")
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(png)
  }, 60_000)

  it.skipIf(skip)(
    "Instagram's fake fetches the signed rendition link over loopback and receives the JPEG; forged links are refused",
    async () => {
      const png = new Uint8Array(
        await sharp({ create: { width: 800, height: 600, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 1 } } })
          .png().toBuffer()
      )
      const id = await upload(png)
      const [ref] = await resolveFor(id)
      const link = Option.getOrThrow(ref!.publicUrl)
      expect(ref!.mimeType).toBe("image/jpeg")
      expect(link).toMatch(
        new RegExp(
          `^${publicBase}/${server.orgId}/${id}\\.renditions/[A-Za-z0-9_-]+\\.jpg\\?expires=\\d+&signature=[0-9a-f]{64}$`
        )
      )

      const client = await Effect.runPromise(
        Instagram.make({ apiUrl: fake.server.url, pollInterval: "5 millis", maxPolls: 10 }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
      )
      const result = await Effect.runPromise(
        client.publish({
          ...request({
            platform: "instagram",
            credentials: {
              access_token: InstagramApiFake.accessToken,
              user_id: InstagramApiFake.userId,
              username: InstagramApiFake.username,
              expires_at: "1767232800000"
            },
            main: part("a screenshot", [ref!])
          }),
          account: new SocialAccount({ ...account("instagram"), platformAccountId: InstagramApiFake.userId })
        }).pipe(Effect.provide(FetchHttpClient.layer))
      )
      expect(result.platformPostId).not.toBe("")
      const fetched = fake.fetched.get(link)
      expect(fetched?.status).toBe(200)
      expect(fetched?.contentType).toBe("image/jpeg")
      const seen = await sharp(fetched!.bytes).metadata()
      expect([seen.format, seen.width, seen.height]).toEqual(["jpeg", 800, 600])

      const url = new URL(link)
      const signature = url.searchParams.get("signature")!
      const altered = new URL(link)
      altered.searchParams.set("signature", `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`)
      expect(await refusal(altered.toString())).toMatchObject({ status: 403, code: "auth_failed" })
      expect(await refusal(`${url.origin}${url.pathname}`)).toMatchObject({ status: 403, code: "auth_failed" })
      const later = new URL(link)
      later.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600))
      expect(await refusal(later.toString())).toMatchObject({ status: 403, code: "auth_failed" })
      // The rendition's signature does not open the original.
      const original = `${publicBase}/${server.orgId}/${id}${url.search}`
      expect(await refusal(original)).toMatchObject({ status: 403, code: "auth_failed" })

      // Signed correctly but an hour past its expiry.
      const expired = await Effect.runPromise(
        Effect.gen(function*() {
          const cipher = yield* CredentialCipher.CredentialCipher
          const signingKey = yield* cipher.deriveSecret("media-public/v1")
          return yield* MediaLinks.signedUrl(`${server.orgId}/${id}`).pipe(
            Effect.provideService(MediaLinks.MediaLinkSigner, { signingKey, lifetime: MediaLinks.defaultLifetime }),
            Effect.withClock(pastClock(2 * 60 * 60 * 1000))
          )
        }).pipe(
          Effect.provide(Layer.mergeAll(
            CredentialCipher.layer({ dataDir }),
            FileBlobStore.layer({ directory: `${dataDir}/media`, publicBaseUrl: publicBase }).pipe(Layer.orDie),
            NodeCrypto.layer
          ))
        )
      )
      expect(await refusal(Option.getOrThrow(expired))).toEqual({
        status: 403,
        code: "auth_failed",
        message: "This media link has expired"
      })

      // A deleted medium's links stop working at once.
      const deleted = await server.request("DELETE", `/api/v1/media/${id}`)
      expect(deleted.status, deleted.text).toBe(200)
      expect(await refusal(link)).toMatchObject({ status: 404, code: "not_found" })
    },
    120_000
  )
})
