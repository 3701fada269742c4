/**
 * Renditions per platform through the dispatcher's media path (DispatchMedia over the library, as
 * the worker wires it): SQLite, a real blob directory, real sharp. Images are generated with sharp:
 * a PNG, a WebP, a large noisy JPEG carrying GPS EXIF, a rotated phone photo, tall and wide images.
 * What the platform client would receive is read back with sharp.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileBlobStore from "@herald/adapters/media/FileBlobStore"
import * as MediaInspector from "@herald/adapters/media/MediaInspector"
import * as SharpRenditions from "@herald/adapters/media/SharpRenditions"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import { BlobStore } from "@herald/core/media/BlobStore"
import { DispatchMedia, type MediaTarget } from "@herald/core/publishing/Dispatcher"
import type { MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import { ImageRenditions } from "@herald/core/media/MediaFitting"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import type { MediaRef } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import sharp from "sharp"
import { organization } from "../../packages/adapters/test/contract/Fixtures.js"
import { sqlite } from "../../packages/adapters/test/support/TestDatabases.js"

const noisy = (width: number, height: number) =>
  sharp({
    create: { width, height, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 60 } }
  })

const gps = {
  IFD0: { Make: "HeraldPhone", Model: "Test 1" },
  IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 30/1", GPSLongitudeRef: "E", GPSLongitude: "2/1 17/1 40/1" }
}

/** A 2400x1600 noisy JPEG of several megabytes, with GPS EXIF. */
const bigGpsJpeg = () => noisy(2400, 1600).jpeg({ quality: 95 }).withExif(gps).toBuffer()
/** 400x200 pixels stored, EXIF orientation 6: it is meant to be seen as 200x400. */
const rotatedJpeg = () =>
  sharp({ create: { width: 400, height: 200, channels: 3, background: "#ff0000" } }).jpeg()
    .withMetadata({ orientation: 6 }).withExif(gps).toBuffer()
const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 1 } } }).png().toBuffer()
const webp = () => noisy(300, 300).webp().withExif(gps).toBuffer()

/** Counts how many renditions are actually made. */
let renders = 0
const countingRenditions = Layer.succeed(
  ImageRenditions,
  ImageRenditions.of({
    render: (source, profile) => Effect.zipRight(Effect.sync(() => renders++), SharpRenditions.render(source, profile))
  })
)

const blobDirectory = fs.mkdtempSync(path.join(os.tmpdir(), "herald-renditions-"))
const blobs = FileBlobStore.layer({ directory: blobDirectory }).pipe(Layer.orDie)

const base = Layer.mergeAll(SqlStores.layer, blobs, MediaInspector.layer, NodeCrypto.layer).pipe(
  Layer.provideMerge(NodeIdGenerator.layer),
  Layer.provide(sqlite),
  Layer.orDie
)

/** The library, and DispatchMedia as the worker builds it (a fresh layer per call: another process). */
const services = Layer.mergeAll(
  MediaLibrary.layerPostMedia,
  Layer.succeed(MediaLibrary.MediaSettings, { signingKey: Redacted.make("test-signing-key") })
).pipe(Layer.provideMerge(base))

const dispatchMedia = MediaLibrary.layerDispatchMedia.pipe(Layer.provide(countingRenditions))

const newOrg = Effect.gen(function*() {
  const org = organization()
  yield* (yield* OrganizationStore).insert(org)
  return org.id
})

const upload = (org: OrganizationId, bytes: Uint8Array, contentType: string, filename: string) =>
  Effect.gen(function*() {
    const p = yield* MediaLibrary.presign(org, { filename, content_type: contentType, file_size: bytes.length })
    yield* MediaLibrary.receiveUpload({
      id: p.media.id,
      token: p.token,
      contentType: Option.some(contentType),
      contentLength: Option.none(),
      body: Stream.make(bytes)
    })
    return (yield* MediaLibrary.complete(org, p.media.id)).id
  })

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat([...chunks]))

/** What a platform client receives for the medium on `target`: the ref and its bytes. */
const published = (org: OrganizationId, id: MediaId, target: MediaTarget) =>
  Effect.gen(function*() {
    const [ref] = yield* Effect.flatMap(DispatchMedia, (d) => d.resolve(org, [id], target)).pipe(
      Effect.provide(dispatchMedia)
    )
    const bytes = yield* collect(ref!.bytes)
    const meta = yield* Effect.promise(() => sharp(bytes).metadata())
    return { ref: ref as MediaRef, bytes, meta }
  })

/** The RGB of one pixel (JPEG: within a unit or two of the colour drawn). */
const pixel = (bytes: Uint8Array, left: number, top: number) =>
  Effect.promise(async () => {
    const { data } = await sharp(bytes).extract({ left, top, width: 1, height: 1 }).raw().toBuffer({
      resolveWithObject: true
    })
    return [...data].slice(0, 3).map((v) => (v > 250 ? (v >= 254 ? v : 255) : v < 5 ? 0 : v))
  })

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const originalBytes = (org: OrganizationId, id: MediaId) =>
  Effect.flatMap(BlobStore, (b) => collect(b.get(MediaLibrary.storageKey(org, id))))

describe("renditions per platform", () => {
  it.effect("a PNG goes to Instagram as a JPEG, and is still a PNG (stripped) for Bluesky", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const source = yield* Effect.promise(() => png(640, 640))
      const id = yield* upload(org, source, "image/png", "shot.png")
      const ig = yield* published(org, id, { platform: "instagram" })
      expect(ig.ref.mimeType).toBe("image/jpeg")
      expect(ig.ref.filename).toBe("shot.jpg")
      expect(ig.meta.format).toBe("jpeg")
      expect(ig.ref.size).toBe(ig.bytes.length)
      expect([ig.bytes[0], ig.bytes[1]]).toEqual([0xff, 0xd8])
      const bsky = yield* published(org, id, { platform: "bluesky" })
      expect(bsky.ref.mimeType).toBe("image/png")
      expect(bsky.meta.format).toBe("png")
      expect(sha256(yield* originalBytes(org, id))).toBe(sha256(source))
    }).pipe(Effect.provide(services)))

  it.effect(
    "a large JPEG with GPS: under 1,000,000 bytes for Bluesky, under 5 MiB for X, no EXIF anywhere, original untouched",
    () =>
      Effect.gen(function*() {
        const org = yield* newOrg
        const source = yield* Effect.promise(bigGpsJpeg)
        expect(source.length).toBeGreaterThan(2_000_000)
        const before = yield* Effect.promise(() => sharp(source).metadata())
        expect(before.exif?.includes(Buffer.from("HeraldPhone"))).toBe(true)
        const id = yield* upload(org, source, "image/jpeg", "photo.jpg")
        for (const platform of ["bluesky", "x", "instagram"] as const) {
          const out = yield* published(org, id, { platform })
          expect(out.ref.mimeType, platform).toBe("image/jpeg")
          expect(out.meta.exif, `${platform}: no EXIF (so no GPS)`).toBeUndefined()
          expect(out.meta.xmp, platform).toBeUndefined()
          expect(out.bytes.includes(Buffer.from("HeraldPhone")), platform).toBe(false)
          if (platform === "bluesky") {
            expect(out.bytes.length).toBeLessThanOrEqual(1_000_000)
            expect(out.meta.width! / out.meta.height!).toBeCloseTo(1.5, 1)
          }
          if (platform === "x") expect(out.bytes.length).toBeLessThanOrEqual(5 * 1024 * 1024)
        }
        expect(sha256(yield* originalBytes(org, id))).toBe(sha256(source))
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.effect("orientation is applied before the metadata goes: a rotated phone photo looks the same", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const id = yield* upload(org, yield* Effect.promise(rotatedJpeg), "image/jpeg", "phone.jpg")
      const out = yield* published(org, id, { platform: "bluesky" })
      expect([out.meta.width, out.meta.height]).toEqual([200, 400])
      expect(out.meta.orientation).toBeUndefined()
      expect(out.meta.exif).toBeUndefined()
    }).pipe(Effect.provide(services)))

  it.effect("Instagram: tall and wide images are letterboxed to 4:5 and 1.91:1 (content kept); crop on request", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const tall = yield* upload(org, yield* Effect.promise(() => png(400, 1000)), "image/png", "tall.png")
      const wide = yield* upload(org, yield* Effect.promise(() => png(2000, 500)), "image/png", "wide.png")
      const square = yield* upload(org, yield* Effect.promise(() => png(500, 500)), "image/png", "square.png")
      const t = yield* published(org, tall, { platform: "instagram" })
      expect([t.meta.width, t.meta.height]).toEqual([800, 1000])
      // The client is told the rendition's own dimensions.
      expect([t.ref.width, t.ref.height]).toEqual([800, 1000])
      // The padding is white, the picture (blue) is in the middle, whole.
      expect(yield* pixel(t.bytes, 50, 500)).toEqual([255, 255, 255])
      expect(yield* pixel(t.bytes, 750, 500)).toEqual([255, 255, 255])
      expect(yield* pixel(t.bytes, 400, 5)).toEqual([0, 0, 254])
      expect(yield* pixel(t.bytes, 400, 995)).toEqual([0, 0, 254])
      const w = yield* published(org, wide, { platform: "instagram" })
      expect(w.meta.width).toBe(2000)
      expect(w.meta.width! / w.meta.height!).toBeLessThanOrEqual(1.91)
      expect(w.meta.height).toBe(Math.ceil(2000 / 1.91))
      const s = yield* published(org, square, { platform: "instagram" })
      expect([s.meta.width, s.meta.height]).toEqual([500, 500])
      const cropped = yield* published(org, tall, { platform: "instagram", settings: { mediaFit: "crop" } })
      expect([cropped.meta.width, cropped.meta.height]).toEqual([400, 500])
      // A Story is not held to the feed's ratios.
      const story = yield* published(org, tall, { platform: "instagram", contentType: "Story" })
      expect([story.meta.width, story.meta.height]).toEqual([400, 1000])
      // Bluesky has no ratio rule: the tall image keeps its shape.
      const bsky = yield* published(org, tall, { platform: "bluesky" })
      expect([bsky.meta.width, bsky.meta.height]).toEqual([400, 1000])
    }).pipe(Effect.provide(services)))

  it.effect("WebP: a JPEG for Threads (which takes no WebP), a stripped WebP for Bluesky", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const id = yield* upload(org, yield* Effect.promise(webp), "image/webp", "pic.webp")
      const threads = yield* published(org, id, { platform: "threads" })
      expect(threads.meta.format).toBe("jpeg")
      const bsky = yield* published(org, id, { platform: "bluesky" })
      expect(bsky.meta.format).toBe("webp")
      expect(bsky.meta.exif).toBeUndefined()
    }).pipe(Effect.provide(services)))

  it.effect("a rendition is made once per medium and profile, then reused (also by another process)", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const id = yield* upload(org, yield* Effect.promise(() => png(300, 200)), "image/png", "once.png")
      const start = renders
      const first = yield* published(org, id, { platform: "instagram" })
      const again = yield* published(org, id, { platform: "instagram" })
      expect(renders - start).toBe(1)
      expect(sha256(again.bytes)).toBe(sha256(first.bytes))
      // Another profile is another rendition.
      yield* published(org, id, { platform: "bluesky" })
      expect(renders - start).toBe(2)
      // Without a target (a caller that does not say where), the original goes as before.
      const [plain] = yield* Effect.flatMap(DispatchMedia, (d) => d.resolve(org, [id])).pipe(
        Effect.provide(dispatchMedia)
      )
      expect(plain!.mimeType).toBe("image/png")
    }).pipe(Effect.provide(services)))

  it.effect("alt text reaches the client: the medium's, or the platform's settings.altText", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const id = yield* upload(org, yield* Effect.promise(() => png(30, 20)), "image/png", "alt.png")
      yield* MediaLibrary.update(org, id, { alt_text: "A blue square" })
      expect((yield* published(org, id, { platform: "bluesky" })).ref.altText).toBe("A blue square")
      const overridden = yield* published(org, id, { platform: "instagram", settings: { altText: "Blue" } })
      expect(overridden.ref.altText).toBe("Blue")
      yield* MediaLibrary.update(org, id, { alt_text: null })
      expect((yield* published(org, id, { platform: "bluesky" })).ref.altText).toBeUndefined()
    }).pipe(Effect.provide(services)))

  it.effect("deleting a medium removes its renditions", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const id = yield* upload(org, yield* Effect.promise(() => png(300, 200)), "image/png", "gone.png")
      yield* published(org, id, { platform: "instagram" })
      const dir = path.join(blobDirectory, `${MediaLibrary.storageKey(org, id)}.renditions`)
      expect(fs.readdirSync(dir).sort()).toEqual([
        `jpeg-max${8 * 1024 * 1024}-pad-4x5-1_91x1.jpg`,
        `jpeg-max${8 * 1024 * 1024}-pad-4x5-1_91x1.jpg.json`
      ])
      yield* MediaLibrary.remove(org, id)
      expect(fs.existsSync(dir) ? fs.readdirSync(dir).length : 0).toBe(0)
    }).pipe(Effect.provide(services)))

  it.effect("an animated GIF is not turned into a still; a video over the platform's cap is refused", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const frames = yield* Effect.promise(() =>
        sharp({ create: { width: 20, height: 40, channels: 3, background: "#00ff00" } }).gif().toBuffer()
      )
      const gifId = yield* upload(org, frames, "image/gif", "still.gif")
      // Discord takes GIFs: it goes as it is.
      const discord = yield* published(org, gifId, { platform: "discord" })
      expect(discord.ref.mimeType).toBe("image/gif")
      // Instagram does not: unfit, with the platform and the rule.
      const exit = yield* Effect.exit(
        Effect.flatMap(DispatchMedia, (d) => d.resolve(org, [gifId], { platform: "instagram" })).pipe(
          Effect.provide(dispatchMedia)
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(exit)).toContain("instagram does not take image/gif")
    }).pipe(Effect.provide(services)))
})
