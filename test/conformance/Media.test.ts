/**
 * The media endpoints over real HTTP (`herald serve --sandbox` as a child process), on SQLite and
 * (where one answers) Postgres: presign, the signed PUT, complete, list/get/delete, the type and size
 * checks, imports refused on private addresses, posts with media (existence, auto-finalize,
 * per-platform rules), the upload budget with Retry-After, and a sandbox publish that reads the exact
 * uploaded bytes through the blob store.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { validate } from "../support/JsonSchema.js"
import * as Fixtures from "../support/MediaFixtures.js"
import * as PixelBomb from "../media/support/PixelBomb.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Media conformance on Postgres skipped: ${pg.reason}`)

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

interface Account {
  readonly id: number
  readonly platform: string
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("media on $label", ({ postgres, skip }) => {
  let server: Fixtures.SandboxServer
  let accounts: ReadonlyArray<Account>
  const account = (platform: string) => accounts.find((a) => a.platform === platform)!.id

  beforeAll(async () => {
    if (skip) return
    server = await Fixtures.startSandboxServer({ postgres })
    accounts = (await server.request("GET", "/api/v1/accounts")).json.data["accounts"] as ReadonlyArray<Account>
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  const presign = (filename: string, contentType: string, size: number, key?: string) =>
    server.request("POST", "/api/v1/media/upload", { filename, content_type: contentType, file_size: size }, key)

  /** Presign and PUT; returns the media id (not completed). */
  const uploaded = async (filename: string, contentType: string, bytes: Uint8Array) => {
    const p = await presign(filename, contentType, bytes.length)
    expect(p.status, p.text).toBe(201)
    const put = await server.put(String(p.json.data["upload_url"]), bytes, contentType)
    expect(put.status, put.text).toBe(200)
    return p.json.data.id
  }

  it.skipIf(skip)("presign, PUT the bytes, complete: ready with the detected type and size; get and list", async () => {
    const png = Fixtures.png(64, 48)
    const p = await presign("photo.png", "image/png", png.length)
    expect(p.status, p.text).toBe(201)
    const data = p.json.data
    expect(data).toMatchObject({
      media_id: data.id,
      filename: "photo.png",
      content_type: "image/png",
      file_size: png.length,
      type: "image",
      status: "pending_upload",
      upload_method: "PUT",
      upload_headers: { "Content-Type": "image/png" },
      expires_in_seconds: 3600
    })
    expect(String(data["upload_url"])).toMatch(new RegExp(`^${server.baseUrl}/uploads/media/${data.id}\\?token=`))

    const put = await server.put(String(data["upload_url"]), png, "image/png")
    expect(put.status, put.text).toBe(200)
    expect(put.json.data).toMatchObject({ id: data.id, status: "pending_upload", size: png.length })

    const done = await server.request("POST", `/api/v1/media/${data.id}/complete`)
    expect(done.status, done.text).toBe(200)
    expect(done.json.data).toMatchObject({
      id: data.id,
      status: "ready",
      mime_type: "image/png",
      type: "image",
      size: png.length,
      width: 64,
      height: 48
    })
    // The bytes are on disk under <data-dir>/media, whole.
    const orgDirs = fs.readdirSync(path.join(server.dataDir, "media"))
    const stored = orgDirs.map((d) => path.join(server.dataDir, "media", d, data.id)).find((f) => fs.existsSync(f))!
    expect(sha256(fs.readFileSync(stored))).toBe(sha256(png))

    // Completing again changes nothing.
    expect((await server.request("POST", `/api/v1/media/${data.id}/complete`)).json.data).toMatchObject({
      status: "ready"
    })
    const got = await server.request("GET", `/api/v1/media/${data.id}`)
    expect(got.json.data).toMatchObject({ id: data.id, status: "ready", width: 64 })
    const images = await server.request("GET", "/api/v1/media?type=image&limit=100")
    expect((images.json.data["media"] as ReadonlyArray<{ id: string }>).map((m) => m.id)).toContain(data.id)
    expect(images.json.data["pagination"]).toMatchObject({ limit: 100, offset: 0, has_more: false })
    const videos = await server.request("GET", "/api/v1/media?type=video")
    expect((videos.json.data["media"] as ReadonlyArray<{ id: string }>).map((m) => m.id)).not.toContain(data.id)
    const bad = await server.request("GET", "/api/v1/media?type=audio")
    expect([bad.status, bad.json.error.code]).toEqual([400, "validation_error"])
  })

  it.skipIf(skip)("every generated type is accepted and measured: JPEG, GIF, MP4, PDF", async () => {
    const cases = [
      {
        name: "a.jpg",
        type: "image/jpeg",
        bytes: Fixtures.jpeg(40, 24),
        expect: { type: "image", width: 40, height: 24 }
      },
      {
        name: "a.gif",
        type: "image/gif",
        bytes: Fixtures.gif(10, 12),
        expect: { type: "image", width: 10, height: 12 }
      },
      {
        name: "a.mp4",
        type: "video/mp4",
        bytes: Fixtures.movie({ width: 320, height: 240, durationMs: 1500 }),
        expect: { type: "video", width: 320, height: 240, duration_ms: 1500 }
      },
      { name: "a.pdf", type: "application/pdf", bytes: Fixtures.pdf(), expect: { type: "document" } }
    ]
    for (const c of cases) {
      const id = await uploaded(c.name, c.type, c.bytes)
      const done = await server.request("POST", `/api/v1/media/${id}/complete`)
      expect(done.status, `${c.name}: ${done.text}`).toBe(200)
      expect(done.json.data).toMatchObject({ status: "ready", mime_type: c.type, size: c.bytes.length, ...c.expect })
    }
  })

  it.skipIf(skip)(
    "declared checks at presign: unsupported_media_type and file_too_large (20 MiB images, 500 MiB video)",
    async () => {
      const svg = await presign("a.svg", "image/svg+xml", 100)
      expect([svg.status, svg.json.error.code]).toEqual([400, "unsupported_media_type"])
      const big = await presign("a.png", "image/png", 20 * 1024 * 1024 + 1)
      expect([big.status, big.json.error.code]).toEqual([400, "file_too_large"])
      expect(big.json.error.details).toMatchObject({ kind: "image", max_bytes: 20 * 1024 * 1024 })
      expect((await presign("a.png", "image/png", 20 * 1024 * 1024)).status).toBe(201)
      expect((await presign("a.mp4", "video/mp4", 500 * 1024 * 1024)).status).toBe(201)
      const bigVideo = await presign("a.mp4", "video/mp4", 500 * 1024 * 1024 + 1)
      expect(bigVideo.json.error.code).toBe("file_too_large")
      const form = await fetch(`${server.baseUrl}/api/v1/media/upload`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "multipart/form-data; boundary=x" },
        body: "--x--"
      })
      const formJson = (await form.json()) as { error: { message: string } }
      expect(form.status).toBe(400)
      expect(formJson.error.message).toContain("upload_url")
    }
  )

  it.skipIf(skip)("a PNG declared as JPEG is file_type_mismatch at complete; the bytes are removed", async () => {
    const png = Fixtures.png(8, 8)
    const id = await uploaded("fake.jpg", "image/jpeg", png)
    const done = await server.request("POST", `/api/v1/media/${id}/complete`)
    expect([done.status, done.json.error.code]).toEqual([400, "file_type_mismatch"])
    expect(done.json.error.details).toEqual({ declared_type: "image/jpeg", detected_type: "image/png" })
    // The refused bytes are gone: completing again says to upload first.
    const again = await server.request("POST", `/api/v1/media/${id}/complete`)
    expect(again.json.error.code).toBe("file_not_uploaded")
    expect((await server.request("GET", `/api/v1/media/${id}`)).json.data["status"]).toBe("pending_upload")
  })

  it.skipIf(skip)(
    "a PNG of a few bytes declaring 40,000 x 6,700 pixels: the PUT is 400 file_too_large naming the limit; nothing kept",
    async () => {
      const bomb = PixelBomb.header(40_000, 6_700)
      const p = await presign("bomb.png", "image/png", bomb.length)
      expect(p.status, p.text).toBe(201)
      const put = await server.put(String(p.json.data["upload_url"]), bomb, "image/png")
      expect([put.status, put.json.error.code]).toEqual([400, "file_too_large"])
      expect(put.json.error.message).toContain("64,000,000 pixels")
      expect(put.json.error.details).toMatchObject({ width: 40_000, height: 6_700, max_pixels: 64_000_000 })
      const id = String(p.json.data.id)
      expect((await server.request("GET", `/api/v1/media/${id}`)).json.data["status"]).toBe("pending_upload")
      const done = await server.request("POST", `/api/v1/media/${id}/complete`)
      expect(done.json.error.code).toBe("file_not_uploaded")
    }
  )

  it.skipIf(skip)(
    "the upload URL: tampered, missing or wrong-type is refused; oversize is file_too_large",
    async () => {
      const png = Fixtures.png(4, 4)
      const p = await presign("a.png", "image/png", png.length)
      const url = String(p.json.data["upload_url"])
      const tampered = url.slice(0, -1) + (url.endsWith("0") ? "1" : "0")
      const t = await server.put(tampered, png, "image/png")
      expect([t.status, t.json.error.code]).toEqual([401, "auth_failed"])
      expect(t.json.data).toBeNull()
      const none = await server.put(url.replace(/\?token=.*$/, ""), png, "image/png")
      expect([none.status, none.json.error.code]).toEqual([401, "auth_failed"])
      // Another media's id with this token.
      const other = await presign("b.png", "image/png", 10)
      const swapped = url.replace(p.json.data.id, other.json.data.id)
      expect((await server.put(swapped, png, "image/png")).status).toBe(401)
      const wrongType = await server.put(url, png, "image/gif")
      expect([wrongType.status, wrongType.json.error.code]).toEqual([400, "file_type_mismatch"])

      // 20 MiB + 1 declared by Content-Length: refused before reading.
      const over = new Uint8Array(20 * 1024 * 1024 + 1)
      const big = await server.put(url, over, "image/png")
      expect([big.status, big.json.error.code]).toEqual([400, "file_too_large"])
      // A chunked body without a length: refused once the stream passes the cap.
      let pulled = 0
      const chunk = new Uint8Array(1024 * 1024)
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 40 * 1024 * 1024) return controller.close()
          pulled += chunk.length
          controller.enqueue(chunk)
        }
      })
      const streamed = await server.put(url, stream, "image/png")
      expect([streamed.status, streamed.json.error.code]).toEqual([400, "file_too_large"])
      // Nothing was kept: the medium still has no file.
      expect((await server.request("POST", `/api/v1/media/${p.json.data.id}/complete`)).json.error.code).toBe(
        "file_not_uploaded"
      )
    }
  )

  it.skipIf(skip)(
    "complete before any bytes: file_not_uploaded, saying to upload first; unknown ids are 404",
    async () => {
      const p = await presign("a.png", "image/png", 100)
      const done = await server.request("POST", `/api/v1/media/${p.json.data.id}/complete`)
      expect([done.status, done.json.error.code]).toEqual([400, "file_not_uploaded"])
      expect(done.json.error.message).toContain("upload the file first")
      const missing = await server.request("POST", "/api/v1/media/00000000-0000-4000-8000-000000000000/complete")
      expect(missing.status).toBe(404)
      expect((await server.request("GET", "/api/v1/media/not-a-uuid")).status).toBe(404)
    }
  )

  it.skipIf(skip)("upload-from-url refuses loopback, private, link-local and metadata addresses", async () => {
    for (
      const url of [
        "http://127.0.0.1:1/a.png",
        "http://10.1.2.3/a.png",
        "http://192.168.0.1/a.png",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/a.png",
        "http://localhost/a.png",
        "ftp://example.com/a.png"
      ]
    ) {
      const r = await server.request("POST", "/api/v1/media/upload-from-url", { url })
      expect([url, r.status, r.json.error.code]).toEqual([url, 400, "validation_error"])
    }
  })

  it.skipIf(skip)("scopes: a read-only key lists but cannot upload", async () => {
    const created = await server.cli(["keys", "create", "--scopes", "read"])
    const readKey = created.stdout.trim()
    expect((await server.request("GET", "/api/v1/media", undefined, readKey)).status).toBe(200)
    const denied = await presign("a.png", "image/png", 10, readKey)
    expect([denied.status, denied.json.error.code]).toEqual([403, "insufficient_scope"])
    expect((await server.request("GET", "/api/v1/media", undefined, null)).status).toBe(401)
  })

  it.skipIf(skip)(
    "posts: unknown ids and unuploaded files are file_not_uploaded; uploaded ones are finalized",
    async () => {
      const x = account("x")
      const unknown = await server.request("POST", "/api/v1/posts", {
        content: "hi",
        account_ids: [x],
        scheduled_for: new Date(Date.now() + 3_600_000).toISOString(),
        media_ids: ["00000000-0000-4000-8000-0000000000aa"]
      })
      expect([unknown.status, unknown.json.error.code]).toEqual([400, "file_not_uploaded"])

      const p = await presign("later.png", "image/png", 100)
      const notYet = await server.request("POST", "/api/v1/posts", {
        content: "hi",
        account_ids: [x],
        draft: true,
        media_ids: [p.json.data.id]
      })
      expect([notYet.status, notYet.json.error.code]).toEqual([400, "file_not_uploaded"])

      const id = await uploaded("now.png", "image/png", Fixtures.png(12, 12))
      expect((await server.request("GET", `/api/v1/media/${id}`)).json.data["status"]).toBe("pending_upload")
      const post = await server.request("POST", "/api/v1/posts", {
        content: "with a picture",
        account_ids: [x],
        scheduled_for: new Date(Date.now() + 3_600_000).toISOString(),
        media_ids: [id]
      })
      expect(post.status, post.text).toBe(201)
      expect(post.json.data["media_ids"]).toEqual([id])
      expect((await server.request("GET", `/api/v1/media/${id}`)).json.data).toMatchObject({
        status: "ready",
        width: 12
      })
    }
  )

  it.skipIf(skip)("posts: per-platform media rules at create time name the platform", async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const image = await uploaded("i.png", "image/png", Fixtures.png(4, 4))
    const images = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => uploaded(`m${i}.jpg`, "image/jpeg", Fixtures.jpeg(8, 8)))
    )
    const video = await uploaded("v.mp4", "video/mp4", Fixtures.movie())

    const errorsOf = (r: Fixtures.Answer) =>
      (r.json.error.details?.["validation_errors"] ?? []) as ReadonlyArray<{ platform?: string; message: string }>

    // A TikTok post is one video or a photo post: an image beside a video is neither.
    const tiktokMixed = await server.request("POST", "/api/v1/posts", {
      content: "x",
      account_ids: [account("tiktok")],
      scheduled_for: later,
      media_ids: [image, video],
      platform_content: { tiktok: { content: "x", settings: { privacyLevel: "SELF_ONLY" } } }
    })
    expect([tiktokMixed.status, tiktokMixed.json.error.code]).toEqual([400, "validation_error"])
    expect(errorsOf(tiktokMixed)).toContainEqual(
      expect.objectContaining({ platform: "tiktok", message: "tiktok: a video must be the post's only medium" })
    )

    for (const platform of ["tiktok", "youtube", "instagram"]) {
      const none = await server.request("POST", "/api/v1/posts", {
        content: "no media",
        account_ids: [account(platform)],
        scheduled_for: later,
        platform_content: platform === "youtube"
          ? { youtube: { content: "v", settings: { title: "T" } } }
          : platform === "tiktok"
          ? { tiktok: { content: "no media", settings: { privacyLevel: "SELF_ONLY" } } }
          : undefined
      })
      expect([platform, none.status, none.json.error.code]).toEqual([platform, 400, "validation_error"])
      expect(errorsOf(none).map((e) => e.platform)).toContain(platform)
    }

    const xFive = await server.request("POST", "/api/v1/posts", {
      content: "five",
      account_ids: [account("x")],
      scheduled_for: later,
      media_ids: images
    })
    expect(xFive.status).toBe(400)
    expect(errorsOf(xFive)).toEqual([
      expect.objectContaining({ platform: "x", message: expect.stringContaining("at most 4") })
    ])

    const mixed = await server.request("POST", "/api/v1/posts", {
      content: "mixed",
      account_ids: [account("bluesky")],
      scheduled_for: later,
      media_ids: [images[0], video]
    })
    expect(mixed.status).toBe(400)
    expect(errorsOf(mixed).map((e) => e.platform)).toContain("bluesky")

    // A draft may lack required media; a TikTok video is fine.
    const draft = await server.request("POST", "/api/v1/posts", {
      content: "d",
      account_ids: [account("tiktok")],
      draft: true
    })
    expect(draft.status, draft.text).toBe(201)
    const tiktokVideo = await server.request("POST", "/api/v1/posts", {
      content: "v",
      account_ids: [account("tiktok")],
      scheduled_for: later,
      media_ids: [video],
      platform_content: { tiktok: { content: "v", settings: { privacyLevel: "SELF_ONLY" } } }
    })
    expect(tiktokVideo.status, tiktokVideo.text).toBe(201)
  })

  it.skipIf(skip)(
    "end to end: the sandbox publishes each platform's rendition of an uploaded image, read through the blob store",
    async () => {
      const png = Fixtures.png(33, 21)
      const id = await uploaded("e2e.png", "image/png", png)
      expect((await server.request("POST", `/api/v1/media/${id}/complete`)).status).toBe(200)
      const post = await server.request("POST", "/api/v1/posts", {
        content: "Picture from the sandbox",
        account_ids: [account("bluesky"), account("instagram")],
        media_ids: [id]
      })
      expect(post.status, post.text).toBe(201)
      const postId = String(post.json.data["post_id"] ?? post.json.data.id)
      let status = ""
      for (let i = 0; i < 100 && status !== "published" && status !== "failed"; i++) {
        await new Promise((r) => setTimeout(r, 100))
        status = String((await server.request("GET", `/api/v1/posts/${postId}`)).json.data["status"])
      }
      expect(status).toBe("published")
      const orgDirs = fs.readdirSync(path.join(server.dataDir, "media"))
      const original = orgDirs.map((d) => path.join(server.dataDir, "media", d, id)).find((f) => fs.existsSync(f))!
      // The original is untouched; each platform got its rendition, stored beside it.
      expect(sha256(fs.readFileSync(original))).toBe(sha256(png))
      const rendition = (profile: string) => fs.readFileSync(`${original}.renditions/${profile}`)
      const sent = (platform: string) =>
        server.journalLines().filter((l) => l["outcome"] === "published" && l["platform"] === platform)
          .find((l) => Array.isArray(l["media"]) && (l["media"] as ReadonlyArray<{ id: string }>)[0]?.id === id)
          ?.["media"]
      const bluesky = rendition("png-max1000000.png")
      expect(sent("bluesky")).toEqual([{ id, mimeType: "image/png", size: bluesky.length, sha256: sha256(bluesky) }])
      // Instagram takes JPEG only: a PNG is converted, not refused.
      const instagram = rendition(`jpeg-max${8 * 1024 * 1024}-pad-4x5-1_91x1.jpg`)
      expect([instagram[0], instagram[1]]).toEqual([0xff, 0xd8])
      expect(sent("instagram")).toEqual([{
        id,
        mimeType: "image/jpeg",
        size: instagram.length,
        sha256: sha256(instagram)
      }])
    }
  )

  it.skipIf(skip)("answers match the OpenAPI document", async () => {
    type Doc = {
      readonly paths: Record<
        string,
        Record<string, {
          readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
        }>
      >
    }
    const doc = (await server.request("GET", "/api/v1/openapi.json", undefined, null)).json as unknown as Doc
    const conforms = (p: string, method: string, res: Fixtures.Answer) => {
      const response = doc.paths[p]?.[method]?.responses[String(res.status)]
      expect(response, `${method} ${p} documents ${res.status}`).toBeDefined()
      expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
    }
    const png = Fixtures.png(3, 3)
    const p = await presign("doc.png", "image/png", png.length)
    conforms("/api/v1/media/upload", "post", p)
    const put = await server.put(String(p.json.data["upload_url"]), png, "image/png")
    conforms("/uploads/media/{id}", "put", put)
    conforms("/uploads/media/{id}", "put", await server.put(String(p.json.data["upload_url"]) + "0", png, "image/png"))
    conforms(
      "/api/v1/media/{id}/complete",
      "post",
      await server.request("POST", `/api/v1/media/${p.json.data.id}/complete`)
    )
    conforms("/api/v1/media/{id}", "get", await server.request("GET", `/api/v1/media/${p.json.data.id}`))
    conforms("/api/v1/media", "get", await server.request("GET", "/api/v1/media"))
    conforms("/api/v1/media/upload", "post", await presign("a.svg", "image/svg+xml", 3))
    conforms(
      "/api/v1/media/upload-from-url",
      "post",
      await server.request("POST", "/api/v1/media/upload-from-url", { url: "http://10.0.0.1/a.png" })
    )
    conforms("/api/v1/media/{id}", "delete", await server.request("DELETE", `/api/v1/media/${p.json.data.id}`))
  })

  it.skipIf(skip)(
    "posts: what a rendition can fit is planned, not refused; a video too long for a platform is refused at create time",
    async () => {
      const later = new Date(Date.now() + 3_600_000).toISOString()
      const png = await uploaded("screen.png", "image/png", Fixtures.png(40, 30))
      const forInstagram = await server.request("POST", "/api/v1/posts", {
        content: "a screenshot",
        account_ids: [account("instagram")],
        scheduled_for: later,
        media_ids: [png]
      })
      expect(forInstagram.status, forInstagram.text).toBe(201)
      const long = await uploaded("long.mp4", "video/mp4", Fixtures.movie({ durationMs: 150_000 }))
      const forX = await server.request("POST", "/api/v1/posts", {
        content: "a long video",
        account_ids: [account("x"), account("facebook")],
        scheduled_for: later,
        media_ids: [long]
      })
      expect([forX.status, forX.json.error.code]).toEqual([400, "validation_error"])
      expect(forX.json.error.details?.["validation_errors"]).toEqual([
        { platform: "x", path: "media_ids.0", message: "x takes videos of at most 140 seconds (150 seconds given)" }
      ])
      const forFacebook = await server.request("POST", "/api/v1/posts", {
        content: "a long video",
        account_ids: [account("facebook")],
        scheduled_for: later,
        media_ids: [long]
      })
      expect(forFacebook.status, forFacebook.text).toBe(201)
    }
  )

  it.skipIf(skip)("alt_text: set at upload, changed and cleared by PATCH /media/{id}, bounded, scoped", async () => {
    const png = Fixtures.png(5, 5)
    const p = await server.request("POST", "/api/v1/media/upload", {
      filename: "alt.png",
      content_type: "image/png",
      file_size: png.length,
      alt_text: "  A red bicycle against a wall  "
    })
    expect(p.status, p.text).toBe(201)
    expect(p.json.data["alt_text"]).toBe("A red bicycle against a wall")
    const id = p.json.data.id
    expect((await server.request("GET", `/api/v1/media/${id}`)).json.data["alt_text"]).toBe(
      "A red bicycle against a wall"
    )
    const changed = await server.request("PATCH", `/api/v1/media/${id}`, { alt_text: "A blue bicycle" })
    expect(changed.status, changed.text).toBe(200)
    expect(changed.json.data).toMatchObject({ id, alt_text: "A blue bicycle", status: "pending_upload" })
    const tooLong = await server.request("PATCH", `/api/v1/media/${id}`, { alt_text: "x".repeat(1001) })
    expect([tooLong.status, tooLong.json.error.code]).toEqual([400, "validation_error"])
    expect((await server.request("GET", `/api/v1/media/${id}`)).json.data["alt_text"]).toBe("A blue bicycle")
    const badType = await server.request("PATCH", `/api/v1/media/${id}`, { alt_text: 5 })
    expect([badType.status, badType.json.error.code]).toEqual([400, "validation_error"])
    // Absent leaves it; null clears it.
    expect((await server.request("PATCH", `/api/v1/media/${id}`, {})).json.data["alt_text"]).toBe("A blue bicycle")
    const cleared = await server.request("PATCH", `/api/v1/media/${id}`, { alt_text: null })
    expect(cleared.json.data["alt_text"]).toBeNull()
    const unknown = await server.request("PATCH", "/api/v1/media/00000000-0000-4000-8000-000000000000", {
      alt_text: "x"
    })
    expect(unknown.status).toBe(404)
    const tooLongAtUpload = await server.request("POST", "/api/v1/media/upload", {
      filename: "alt.png",
      content_type: "image/png",
      file_size: png.length,
      alt_text: "y".repeat(1001)
    })
    expect([tooLongAtUpload.status, tooLongAtUpload.json.error.code]).toEqual([400, "validation_error"])
  })

  it.skipIf(skip)("delete: media.deleted, the file is removed, then 404", async () => {
    const png = Fixtures.png(5, 5)
    const id = await uploaded("gone.png", "image/png", png)
    await server.request("POST", `/api/v1/media/${id}/complete`)
    const files = () =>
      fs.readdirSync(path.join(server.dataDir, "media")).filter((d) =>
        fs.existsSync(path.join(server.dataDir, "media", d, id))
      )
    expect(files()).toHaveLength(1)
    const del = await server.request("DELETE", `/api/v1/media/${id}`)
    expect(del.status, del.text).toBe(200)
    expect(del.json.data).toEqual({ id, media_id: id, deleted: true })
    expect(files()).toHaveLength(0)
    expect((await server.request("GET", `/api/v1/media/${id}`)).status).toBe(404)
    expect((await server.request("DELETE", `/api/v1/media/${id}`)).status).toBe(404)
  })
})

describe("media upload budget (sqlite, 2 per hour)", () => {
  let server: Fixtures.SandboxServer
  beforeAll(async () => {
    server = await Fixtures.startSandboxServer({ env: { HERALD_MEDIA_UPLOADS_PER_HOUR: "2" } })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it("counted at complete, not at presign: the third complete is 429 with Retry-After and details", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const png = Fixtures.png(2 + i, 2)
      const p = await server.request("POST", "/api/v1/media/upload", {
        filename: `b${i}.png`,
        content_type: "image/png",
        file_size: png.length
      })
      expect(p.status).toBe(201)
      expect((await server.put(String(p.json.data["upload_url"]), png, "image/png")).status).toBe(200)
      ids.push(p.json.data.id)
    }
    expect((await server.request("POST", `/api/v1/media/${ids[0]}/complete`)).status).toBe(200)
    expect((await server.request("POST", `/api/v1/media/${ids[1]}/complete`)).status).toBe(200)
    const third = await server.request("POST", `/api/v1/media/${ids[2]}/complete`)
    expect([third.status, third.json.error.code]).toEqual([429, "rate_limit_exceeded"])
    expect(third.json.error.details).toMatchObject({ limit: 2, remaining: 0, period: "hour", budget: "media_uploads" })
    const resetAt = Date.parse(String(third.json.error.details?.["reset_at"]))
    expect(resetAt).toBeGreaterThan(Date.now())
    const retryAfter = Number(third.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    // Still pending: a refused complete is not counted and does not finalize.
    expect((await server.request("GET", `/api/v1/media/${ids[2]}`)).json.data["status"]).toBe("pending_upload")
    // Presign is not counted; imports are checked against the budget before anything is fetched.
    expect(
      (await server.request("POST", "/api/v1/media/upload", {
        filename: "c.png",
        content_type: "image/png",
        file_size: 5
      })).status
    )
      .toBe(201)
    const imported = await server.request("POST", "/api/v1/media/upload-from-url", { url: "https://example.com/a.png" })
    expect([imported.status, imported.json.error.code]).toEqual([429, "rate_limit_exceeded"])
    expect(imported.headers.get("retry-after")).not.toBeNull()
  })
})
