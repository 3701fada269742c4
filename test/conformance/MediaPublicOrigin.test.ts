/**
 * Media that a platform fetches from a public URL, over real HTTP (a `herald serve` child process, live
 * platforms), on SQLite and (where one answers) Postgres: with no public media origin configured, a post
 * for Instagram with an image, or for Threads with any medium, is refused at POST /posts with
 * `validation_error` naming HERALD_MEDIA_PUBLIC_URL (not at publish); a draft is accepted; an Instagram
 * video passes (it goes by resumable upload). With HERALD_MEDIA_PUBLIC_URL set, the image post passes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import * as Fixtures from "../support/MediaFixtures.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] MediaPublicOrigin conformance on Postgres skipped: ${pg.reason}`)

interface Envelope {
  readonly data: null | Record<string, unknown>
  readonly error: null | { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
}

const limits = { HERALD_RATE_LIMIT_PER_MINUTE: "1000000", HERALD_RATE_LIMIT_PER_HOUR: "1000000" }

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("media needing a public URL on $label", ({ postgres, skip }) => {
  const servers: Array<HeraldServer.HeraldServer> = []
  afterAll(async () => {
    for (const server of servers) await server.stop()
  })

  const start = async (env: Record<string, string> = {}) => {
    const server = await HeraldServer.start({ postgres, env: { ...limits, ...env } })
    servers.push(server)
    const [instagram, threads] = await server.withStore(insertAccounts(server.orgId, [
      { platform: "instagram", name: "origin_ig" },
      { platform: "threads", name: "origin_threads" }
    ]))
    const upload = async (filename: string, contentType: string, bytes: Uint8Array): Promise<string> => {
      const presigned = await server.request("POST", "/api/v1/media/upload", {
        body: { filename, content_type: contentType, file_size: bytes.length }
      })
      expect(presigned.status, presigned.text).toBe(201)
      const data = (presigned.json as Envelope).data!
      const url = new URL(String(data["upload_url"]))
      const put = await fetch(`${server.baseUrl}${url.pathname}${url.search}`, {
        method: "PUT",
        headers: { "content-type": contentType },
        body: bytes
      })
      expect(put.status, await put.text()).toBe(200)
      return String(data["id"])
    }
    return { server, instagram: instagram!.id, threads: threads!.id, upload }
  }

  const errorsOf = (r: HeraldServer.Response) =>
    ((r.json as Envelope).error?.details?.["validation_errors"] ?? []) as ReadonlyArray<
      { readonly platform?: string; readonly path: string; readonly message: string }
    >

  let none: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    if (skip) return
    none = await start()
  }, 120_000)

  it.skipIf(skip)(
    "no public origin: image for Instagram, any medium for Threads refused at create; Instagram videos too; drafts pass",
    async () => {
      const { server, instagram, threads, upload } = none
      const image = await upload("photo.jpg", "image/jpeg", Fixtures.jpeg(64, 80))
      const video = await upload("clip.mp4", "video/mp4", Fixtures.movie())
      const later = new Date(Date.now() + 3_600_000).toISOString()
      const before = await server.request("GET", "/api/v1/posts")

      const igImage = await server.request("POST", "/api/v1/posts", {
        body: { content: "a photo", account_ids: [instagram], scheduled_for: later, media_ids: [image] }
      })
      expect([igImage.status, (igImage.json as Envelope).error?.code]).toEqual([400, "validation_error"])
      expect(errorsOf(igImage)).toEqual([
        expect.objectContaining({
          platform: "instagram",
          path: "media_ids.0",
          message: expect.stringContaining("HERALD_MEDIA_PUBLIC_URL")
        })
      ])
      expect((igImage.json as Envelope).error?.message).toContain("HERALD_MEDIA_PUBLIC_URL")

      const threadsVideo = await server.request("POST", "/api/v1/posts", {
        body: { content: "a clip", account_ids: [threads], media_ids: [video] }
      })
      expect(threadsVideo.status, threadsVideo.text).toBe(400)
      expect(errorsOf(threadsVideo).map((e) => [e.platform, e.path])).toEqual([["threads", "media_ids.0"]])

      // Nothing stored by the refusals.
      const after = await server.request("GET", "/api/v1/posts")
      expect((after.json as Envelope).data?.["pagination"]).toEqual((before.json as Envelope).data?.["pagination"])

      const draft = await server.request("POST", "/api/v1/posts", {
        body: { content: "later", account_ids: [instagram, threads], media_ids: [image], draft: true }
      })
      expect(draft.status, draft.text).toBe(201)

      // Instagram fetches videos too (its resumable upload needs a Facebook Login connection).
      const beforeVideo = await server.request("GET", "/api/v1/posts")
      const igVideo = await server.request("POST", "/api/v1/posts", {
        body: { content: "a reel", account_ids: [instagram], scheduled_for: later, media_ids: [video] }
      })
      expect([igVideo.status, (igVideo.json as Envelope).error?.code]).toEqual([400, "validation_error"])
      expect(errorsOf(igVideo)).toEqual([
        expect.objectContaining({
          platform: "instagram",
          path: "media_ids.0",
          message: expect.stringContaining("HERALD_MEDIA_PUBLIC_URL")
        })
      ])
      const afterVideo = await server.request("GET", "/api/v1/posts")
      expect((afterVideo.json as Envelope).data?.["pagination"]).toEqual(
        (beforeVideo.json as Envelope).data?.["pagination"]
      )
    }
  )

  it.skipIf(skip)("with HERALD_MEDIA_PUBLIC_URL set, the same Instagram image post is accepted", async () => {
    const { server, instagram, upload } = await start({ HERALD_MEDIA_PUBLIC_URL: "https://media.example.com/herald" })
    const image = await upload("photo.jpg", "image/jpeg", Fixtures.jpeg(64, 80))
    const post = await server.request("POST", "/api/v1/posts", {
      body: {
        content: "a photo",
        account_ids: [instagram],
        scheduled_for: new Date(Date.now() + 3_600_000).toISOString(),
        media_ids: [image]
      }
    })
    expect(post.status, post.text).toBe(201)
  }, 120_000)
})
