/**
 * The media library's use cases over SQLite and a real blob directory, with the TestClock: upload URLs
 * expire, the budget's hour and day windows (counted at complete, import and auto-finalize, never at
 * presign), events in the outbox, imports whose bytes decide or contradict the answer's type, and
 * images whose header declares more pixels than allowed refused as their bytes arrive.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileBlobStore from "@herald/adapters/media/FileBlobStore"
import * as MediaInspector from "@herald/adapters/media/MediaInspector"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import { BlobStore } from "@herald/core/media/BlobStore"
import { DomainError } from "@herald/core/kernel/Errors"
import { EventStore } from "@herald/core/webhooks/EventStore"
import type { MediaId, OrganizationId } from "@herald/core/kernel/Ids"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Posts from "@herald/core/posts/Posts"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { organization } from "../../packages/adapters/test/contract/Fixtures.js"
import { sqlite } from "../../packages/adapters/test/support/TestDatabases.js"
import * as Fixtures from "../support/MediaFixtures.js"
import * as PixelBomb from "./support/PixelBomb.js"

/** What the fake fetcher answers for each URL. */
const answers = new Map<
  string,
  { readonly contentType?: string; readonly bytes: Uint8Array; readonly filename?: string }
>()

const fakeFetcher = Layer.succeed(
  MediaLibrary.UrlFetcher,
  MediaLibrary.UrlFetcher.of({
    fetch: (url) => {
      const answer = answers.get(url)
      if (answer === undefined) {
        return Effect.fail(
          new MediaLibrary.UrlFetchError({ reason: "http_status", message: "example.com answered HTTP 404" })
        )
      }
      return Effect.succeed({
        contentType: Option.fromNullable(answer.contentType),
        contentLength: Option.some(answer.bytes.length),
        filename: Option.fromNullable(answer.filename),
        body: Stream.make(answer.bytes)
      })
    }
  })
)

const blobs = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-media-lib-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((directory) => FileBlobStore.layer({ directory }).pipe(Layer.orDie)))
)

const services = (budget: MediaLibrary.Budget) =>
  Layer.mergeAll(
    MediaLibrary.layerPostMedia,
    Layer.succeed(MediaLibrary.MediaSettings, { signingKey: Redacted.make("test-signing-key") })
  ).pipe(
    Layer.provideMerge(Layer.mergeAll(
      SqlStores.layer,
      blobs,
      MediaInspector.layer,
      fakeFetcher,
      Layer.succeed(MediaLibrary.MediaBudget, budget),
      NodeCrypto.layer
    )),
    Layer.provideMerge(NodeIdGenerator.layer),
    Layer.provide(sqlite),
    Layer.orDie
  )

const newOrg = Effect.gen(function*() {
  const org = organization()
  yield* (yield* OrganizationStore).insert(org)
  return org.id
})

const codeOf = <A, E>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  return failure instanceof DomainError ? failure.code : `not a domain error: ${String(exit.cause)}`
}

/** Presign and send the bytes; returns the id. */
const uploaded = (org: OrganizationId, bytes: Uint8Array, contentType = "image/png", filename = "a.png") =>
  Effect.gen(function*() {
    const p = yield* MediaLibrary.presign(org, { filename, content_type: contentType, file_size: bytes.length })
    yield* MediaLibrary.receiveUpload({
      id: p.media.id,
      token: p.token,
      contentType: Option.some(contentType),
      contentLength: Option.none(),
      body: Stream.make(bytes)
    })
    return p.media.id
  })

describe("MediaLibrary", () => {
  it.effect("an upload URL works for an hour, then is auth_failed; a token is bound to its media", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const png = Fixtures.png(3, 3)
      const p = yield* MediaLibrary.presign(org, {
        filename: "a.png",
        content_type: "image/png",
        file_size: png.length
      })
      const other = yield* MediaLibrary.presign(org, { filename: "b.png", content_type: "image/png", file_size: 1 })
      const send = (id: string, token: string) =>
        Effect.exit(MediaLibrary.receiveUpload({
          id,
          token,
          contentType: Option.none(),
          contentLength: Option.none(),
          body: Stream.make(png)
        }))
      expect(codeOf(yield* send(other.media.id, p.token))).toBe("auth_failed")
      yield* TestClock.adjust("3599 seconds")
      expect(codeOf(yield* send(p.media.id, p.token))).toBe("success")
      yield* TestClock.adjust("1 second")
      expect(codeOf(yield* send(p.media.id, p.token))).toBe("auth_failed")
    }).pipe(Effect.provide(services(MediaLibrary.defaultBudget))))

  it.effect("budget: counted at complete, not at presign; the day window refuses, then resets", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const ids = [
        yield* uploaded(org, Fixtures.png(2, 2)),
        yield* uploaded(org, Fixtures.png(3, 2)),
        yield* uploaded(org, Fixtures.png(4, 2))
      ]
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(org, ids[0]!)))).toBe("success")
      yield* TestClock.adjust("2 hours")
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(org, ids[1]!)))).toBe("success")
      yield* TestClock.adjust("2 hours")
      const third = yield* Effect.exit(MediaLibrary.complete(org, ids[2]!))
      expect(codeOf(third)).toBe("daily_limit_reached")
      if (Exit.isFailure(third) && third.cause._tag === "Fail") {
        expect(third.cause.error).toMatchObject({
          details: {
            limit: 2,
            remaining: 0,
            period: "day",
            reset_at: "1970-01-02T00:00:00.000Z",
            budget: "media_uploads"
          }
        })
      }
      // Another organization has its own budget.
      const other = yield* newOrg
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(other, yield* uploaded(other, Fixtures.png(2, 2))))))
        .toBe("success")
      yield* TestClock.adjust("20 hours")
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(org, ids[2]!)))).toBe("success")
    }).pipe(Effect.provide(services({ hour: 10, day: 2 }))))

  it.effect("budget: the hour window; a post's auto-finalize counts like a complete", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const first = yield* uploaded(org, Fixtures.png(2, 2))
      const postMedia = yield* Posts.PostMedia
      yield* postMedia.check({
        organizationId: org,
        mediaIds: [first],
        threadMediaIds: [],
        platforms: ["x"],
        platformContent: {},
        mode: "publish"
      })
      expect((yield* MediaLibrary.get(org, first)).status).toBe("ready")
      const second = yield* uploaded(org, Fixtures.png(3, 3))
      const refused = yield* Effect.exit(MediaLibrary.complete(org, second))
      expect(codeOf(refused)).toBe("rate_limit_exceeded")
      yield* TestClock.adjust("1 hour")
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(org, second)))).toBe("success")
    }).pipe(Effect.provide(services({ hour: 1, day: 100 }))))

  it.effect("a post that names no medium is held to the platforms' rules; one that names an unknown medium is refused", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const postMedia = yield* Posts.PostMedia
      const check = (
        platforms: ReadonlyArray<"instagram" | "x">,
        mediaIds: ReadonlyArray<string>,
        mode: "draft" | "publish"
      ) =>
        Effect.exit(postMedia.check({
          organizationId: org,
          mediaIds: mediaIds as ReadonlyArray<MediaId>,
          threadMediaIds: [],
          platforms,
          platformContent: {},
          mode
        }))
      // No medium: no store read, but Instagram still cannot publish without one.
      const instagram = yield* check(["instagram"], [], "publish")
      expect(codeOf(instagram)).toBe("validation_error")
      expect(JSON.stringify(instagram)).toContain("instagram requires")
      expect(codeOf(yield* check(["instagram"], [], "draft"))).toBe("success")
      expect(codeOf(yield* check(["x"], [], "publish"))).toBe("success")
      expect(
        MediaLibrary.carriesMedia({
          organizationId: org,
          mediaIds: [],
          threadMediaIds: [],
          platforms: [],
          platformContent: {},
          threadParts: [[], []]
        })
      )
        .toBe(false)
      // A medium named: the library looks it up (in the post or only in a thread post).
      expect(codeOf(yield* check(["x"], ["00000000-0000-4000-8000-000000000000"], "publish"))).toBe("file_not_uploaded")
      const threadOnly = yield* Effect.exit(postMedia.check({
        organizationId: org,
        mediaIds: [],
        threadMediaIds: ["00000000-0000-4000-8000-000000000001" as MediaId],
        platforms: ["x"],
        platformContent: {},
        mode: "publish"
      }))
      expect(codeOf(threadOnly)).toBe("file_not_uploaded")
    }).pipe(Effect.provide(services({ hour: 10, day: 10 }))))

  it.effect("events: media.uploaded at complete (once) and media.deleted at delete, with the bytes removed", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const id = yield* uploaded(org, Fixtures.png(9, 4))
      yield* MediaLibrary.complete(org, id)
      yield* MediaLibrary.complete(org, id)
      const media = yield* MediaLibrary.get(org, id)
      expect(yield* (yield* BlobStore).exists(media.storageKey)).toBe(true)
      yield* MediaLibrary.remove(org, id)
      expect(yield* (yield* BlobStore).exists(media.storageKey)).toBe(false)
      const events = yield* (yield* EventStore).list(org)
      expect(events.map((e) => e.type)).toEqual(["media.uploaded", "media.deleted"])
      expect(events[0]!.data).toMatchObject({
        media_id: id,
        mime_type: "image/png",
        type: "image",
        width: 9,
        height: 4,
        status: "ready"
      })
      expect(codeOf(yield* Effect.exit(MediaLibrary.get(org, id)))).toBe("not_found")
    }).pipe(Effect.provide(services(MediaLibrary.defaultBudget))))

  it.effect("imports: the bytes decide when the answer says nothing; a contradicting type is refused and removed", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      answers.set("https://example.com/blob", { contentType: "application/octet-stream", bytes: Fixtures.gif(6, 5) })
      answers.set("https://example.com/lie.jpg", { contentType: "image/jpeg", bytes: Fixtures.png(2, 2) })
      answers.set("https://example.com/page", {
        contentType: "text/html; charset=utf-8",
        bytes: new TextEncoder().encode("<html>")
      })
      answers.set("https://example.com/doc", {
        contentType: "application/pdf",
        bytes: Fixtures.pdf(),
        filename: "Report.pdf"
      })

      const gif = yield* MediaLibrary.importFromUrl(org, { url: "https://example.com/blob" })
      expect(gif).toMatchObject({ mimeType: "image/gif", kind: "image", status: "ready", filename: "download" })
      expect(gif.width).toEqual(Option.some(6))
      expect(gif.sourceUrl).toEqual(Option.some("https://example.com/blob"))
      const doc = yield* MediaLibrary.importFromUrl(org, { url: "https://example.com/doc", alt_text: " The report " })
      expect(doc).toMatchObject({ mimeType: "application/pdf", kind: "document", filename: "Report.pdf" })
      expect(doc.altText).toEqual(Option.some("The report"))
      expect(gif.altText).toEqual(Option.none())
      expect(
        codeOf(
          yield* Effect.exit(
            MediaLibrary.importFromUrl(org, { url: "https://example.com/doc", alt_text: "z".repeat(1001) })
          )
        )
      )
        .toBe("validation_error")

      const lie = yield* Effect.exit(
        MediaLibrary.importFromUrl(org, { url: "https://example.com/lie.jpg", filename: "x.jpg" })
      )
      expect(codeOf(lie)).toBe("file_type_mismatch")
      expect(codeOf(yield* Effect.exit(MediaLibrary.importFromUrl(org, { url: "https://example.com/page" }))))
        .toBe("unsupported_media_type")
      expect(codeOf(yield* Effect.exit(MediaLibrary.importFromUrl(org, { url: "https://example.com/none" }))))
        .toBe("upload_failed")
      expect(codeOf(yield* Effect.exit(MediaLibrary.importFromUrl(org, { url: "" })))).toBe("validation_error")

      // Only the two accepted imports are in the library (and in the outbox).
      const listed = yield* MediaLibrary.list(org, {})
      expect(listed.items.map((m) => m.id).sort()).toEqual([gif.id, doc.id].sort())
      const events = yield* (yield* EventStore).list(org)
      expect(events.map((e) => e.type)).toEqual(["media.uploaded", "media.uploaded"])
    }).pipe(Effect.provide(services(MediaLibrary.defaultBudget))))

  it.effect("an image declaring too many pixels is file_too_large at upload, at complete and at import; nothing is kept", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const blobStore = yield* BlobStore
      const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
        Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error instanceof DomainError
          ? exit.cause.error
          : undefined
      const send = (bytes: Uint8Array, filename = "bomb.png") =>
        Effect.gen(function*() {
          const p = yield* MediaLibrary.presign(org, { filename, content_type: "image/png", file_size: bytes.length })
          const exit = yield* Effect.exit(MediaLibrary.receiveUpload({
            id: p.media.id,
            token: p.token,
            contentType: Option.some("image/png"),
            contentLength: Option.some(bytes.length),
            body: Stream.make(bytes)
          }))
          return { id: p.media.id, exit }
        })

      // 40,000 x 6,700 in 100 bytes: 268 million pixels, refused before anything decodes it.
      const bomb = PixelBomb.header(40_000, 6_700)
      expect(bomb.length).toBeLessThan(200)
      const refused = yield* send(bomb)
      expect(codeOf(refused.exit)).toBe("file_too_large")
      expect(failureOf(refused.exit)?.message).toContain("40,000 x 6,700 pixels")
      expect(failureOf(refused.exit)?.message).toContain("64,000,000 pixels")
      expect(failureOf(refused.exit)?.details).toMatchObject({ width: 40_000, height: 6_700, max_pixels: 64_000_000 })
      const pending = yield* MediaLibrary.get(org, refused.id)
      expect(pending.status).toBe("pending_upload")
      expect(yield* blobStore.exists(pending.storageKey)).toBe(false)
      // Finalizing finds no bytes: nothing was kept to publish later.
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(org, refused.id)))).toBe("file_not_uploaded")

      // Few pixels but a side over 20,000 is refused too; exactly at both limits is taken.
      expect(codeOf((yield* send(PixelBomb.header(20_001, 10))).exit)).toBe("file_too_large")
      const atLimit = yield* send(PixelBomb.header(8_000, 8_000), "limit.png")
      expect(codeOf(atLimit.exit)).toBe("success")

      // A URL import is held to the same limit, and leaves nothing behind.
      answers.set("https://example.com/bomb.png", { contentType: "image/png", bytes: PixelBomb.header(50_000, 50_000) })
      const imported = yield* Effect.exit(MediaLibrary.importFromUrl(org, { url: "https://example.com/bomb.png" }))
      expect(codeOf(imported)).toBe("file_too_large")
      const listed = (yield* MediaLibrary.list(org, {})).items
      expect(listed.filter((m) => m.status === "ready" || Option.isSome(m.sourceUrl))).toHaveLength(0)
      expect(yield* (yield* EventStore).list(org)).toHaveLength(0)
    }).pipe(Effect.provide(services(MediaLibrary.defaultBudget))))
})
