/**
 * Uploads never completed, through the media library's use cases on SQLite and a real blob directory,
 * under the TestClock: presigned and sent but never completed, a medium is swept (record and bytes)
 * 24 hours after its one-hour upload URL expired, not a millisecond earlier; completed media and media
 * a post finalized stay; no event is written for a swept medium; completing or posting it afterwards
 * is refused; a finalize that loses the medium to the sweep is refused rather than reported ready.
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
import type { OrganizationId } from "@herald/core/kernel/Ids"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { MediaStore } from "@herald/core/media/MediaStore"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Posts from "@herald/core/posts/Posts"
import * as Duration from "effect/Duration"
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

const blobs = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-media-sweep-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((directory) => FileBlobStore.layer({ directory }).pipe(Layer.orDie)))
)

const services = Layer.mergeAll(
  MediaLibrary.layerPostMedia,
  Layer.succeed(MediaLibrary.MediaSettings, { signingKey: Redacted.make("test-signing-key") })
).pipe(
  Layer.provideMerge(Layer.mergeAll(SqlStores.layer, blobs, MediaInspector.layer, NodeCrypto.layer)),
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

/** Presign and send the bytes (not completed); returns the medium. */
const sent = (org: OrganizationId, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const p = yield* MediaLibrary.presign(org, {
      filename: "a.png",
      content_type: "image/png",
      file_size: bytes.length
    })
    return yield* MediaLibrary.receiveUpload({
      id: p.media.id,
      token: p.token,
      contentType: Option.some("image/png"),
      contentLength: Option.none(),
      body: Stream.make(bytes)
    })
  })

const postWith = (org: OrganizationId, id: string) =>
  Effect.flatMap(Posts.PostMedia, (postMedia) =>
    postMedia.check({
      organizationId: org,
      mediaIds: [id as never],
      threadMediaIds: [],
      platforms: ["x"],
      platformContent: {},
      mode: "publish"
    }))

describe("sweep of uploads never completed", () => {
  it.effect("a medium sent but never completed goes 25 h after presign (URL 1 h + 24 h), bytes and all; no event", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const blobStore = yield* BlobStore
      const abandoned = yield* sent(org, Fixtures.png(3, 3))
      const neverSent =
        (yield* MediaLibrary.presign(org, { filename: "b.png", content_type: "image/png", file_size: 10 })).media
      const completed = yield* sent(org, Fixtures.png(4, 4))
      yield* MediaLibrary.complete(org, completed.id)
      const posted = yield* sent(org, Fixtures.png(5, 5))
      yield* postWith(org, posted.id)
      expect((yield* MediaLibrary.get(org, posted.id)).status).toBe("ready")
      expect(yield* blobStore.exists(abandoned.storageKey)).toBe(true)

      yield* TestClock.adjust(Duration.hours(25))
      expect((yield* MediaLibrary.sweepAbandoned()).media).toBe(0)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* MediaLibrary.sweepAbandoned()).toMatchObject({ media: 2, blobsLeft: 0 })
      expect(yield* blobStore.exists(abandoned.storageKey)).toBe(false)
      expect(codeOf(yield* Effect.exit(MediaLibrary.get(org, abandoned.id)))).toBe("not_found")
      expect(codeOf(yield* Effect.exit(MediaLibrary.get(org, neverSent.id)))).toBe("not_found")
      for (const kept of [completed, posted]) {
        expect((yield* MediaLibrary.get(org, kept.id)).status).toBe("ready")
        expect(yield* blobStore.exists(kept.storageKey)).toBe(true)
      }
      // The organization never had these as media: no media.deleted, only the two uploads.
      const events = yield* (yield* EventStore).list(org)
      expect(events.map((e) => e.type)).toEqual(["media.uploaded", "media.uploaded"])
      // Completing or posting it now is refused.
      expect(codeOf(yield* Effect.exit(MediaLibrary.complete(org, abandoned.id)))).toBe("not_found")
      expect(codeOf(yield* Effect.exit(postWith(org, abandoned.id)))).toBe("file_not_uploaded")
      expect((yield* MediaLibrary.sweepAbandoned()).media).toBe(0)
    }).pipe(Effect.provide(services)))

  it.effect("the grace is an option; the URL lifetime comes from the media settings", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const m = yield* sent(org, Fixtures.png(3, 3))
      yield* TestClock.adjust(Duration.hours(2))
      // URL of 1 h + 1 h grace: due just after 2 h.
      expect((yield* MediaLibrary.sweepAbandoned({ grace: "1 hour" })).media).toBe(0)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* MediaLibrary.sweepAbandoned({ grace: "2 hours" })).media).toBe(0)
      expect(
        (yield* MediaLibrary.sweepAbandoned({ grace: "1 hour" }).pipe(
          Effect.provideService(MediaLibrary.MediaSettings, {
            signingKey: Redacted.make("test-signing-key"),
            uploadTtlSeconds: 7200
          })
        )).media
      ).toBe(0)
      expect((yield* MediaLibrary.sweepAbandoned({ grace: "1 hour" })).media).toBe(1)
      expect(codeOf(yield* Effect.exit(MediaLibrary.get(org, m.id)))).toBe("not_found")
    }).pipe(Effect.provide(services)))

  it.effect("a finalize whose medium was swept meanwhile is file_not_uploaded, not a ready medium", () =>
    Effect.gen(function*() {
      const org = yield* newOrg
      const m = yield* sent(org, Fixtures.png(3, 3))
      // The sweep takes the record between the finalizer's read and its write.
      yield* (yield* MediaStore).delete(org, m.id)
      const exit = yield* Effect.exit(MediaLibrary.finalize(m))
      expect(codeOf(exit)).toBe("file_not_uploaded")
      expect((yield* (yield* EventStore).list(org)).map((e) => e.type)).toEqual([])
    }).pipe(Effect.provide(services)))
})
