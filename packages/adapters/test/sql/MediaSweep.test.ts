/**
 * Housekeeping of uploads never completed, on SQLite and on Postgres where one answers:
 * `MediaStore.deleteAbandoned` (old `pending_upload` media only, oldest first, in batches, never one a
 * post names, each medium to one of several concurrent sweepers) and `MediaLibrary.sweepAbandoned`
 * over a real blob directory under the TestClock (the bytes go with the record). Each test has its
 * own database.
 */
import { describe, expect, it } from "@effect/vitest"
import { BlobStore } from "@herald/core/media/BlobStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { MediaId, type OrganizationId } from "@herald/core/kernel/Ids"
import { Media, type MediaStatus } from "@herald/core/domain/Media"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { MediaStore } from "@herald/core/media/MediaStore"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { ThreadPost } from "@herald/core/domain/Post"
import { PostStore } from "@herald/core/posts/PostStore"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FileBlobStore from "../../src/media/FileBlobStore.js"
import * as SqlDatabase from "../../src/sql/SqlDatabase.js"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { at, organization, post } from "../contract/Fixtures.js"
import { createFreshPgDatabase, databasesUnderTest, type TestDatabaseLayer } from "../support/TestDatabases.js"

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))

const hour = 3_600_000
/** A time well after the fixtures' T0, so that "25 hours before now" is a plain number. */
const NOW = 1_800_000_000_000

const medium = (organizationId: OrganizationId, createdAt: number, status: MediaStatus = "pending_upload") => {
  const id = MediaId.make(randomUUID())
  return new Media({
    id,
    organizationId,
    filename: "photo.png",
    mimeType: "image/png",
    size: 4,
    kind: "image",
    width: Option.none(),
    height: Option.none(),
    durationMs: Option.none(),
    status,
    error: Option.none(),
    storageKey: `${organizationId}/${id}`,
    sourceUrl: Option.none(),
    createdAt: at(createdAt),
    updatedAt: at(createdAt)
  })
}

const newOrg = Effect.gen(function*() {
  const org = organization()
  yield* (yield* OrganizationStore).insert(org)
  return org.id
})

const given = (organizationId: OrganizationId, createdAt: number, status: MediaStatus = "pending_upload") =>
  Effect.gen(function*() {
    const m = medium(organizationId, createdAt, status)
    yield* (yield* MediaStore).insert(m)
    return m
  })

/** Where the test's blob store keeps its files. */
class BlobDir extends Context.Tag("test/BlobDir")<BlobDir, string>() {}

/** A blob directory of its own, with the path it lives at. */
const blobDirectory = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "herald-sweep-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(
    Effect.map((directory) =>
      Layer.merge(FileBlobStore.layer({ directory }).pipe(Layer.orDie), Layer.succeed(BlobDir, directory))
    )
  )
)

const storesOn = (database: TestDatabaseLayer) =>
  Layer.mergeAll(SqlStores.layer, blobDirectory).pipe(
    Layer.provide(randomIds),
    Layer.provideMerge(database),
    Layer.orDie
  )

/** Postgres with a connection per concurrent caller, so the sweepers really race. */
const widePostgres: TestDatabaseLayer = Layer.unwrapScoped(
  Effect.acquireRelease(createFreshPgDatabase().pipe(Effect.orDie), (db) => db.drop).pipe(
    Effect.map((db) => SqlDatabase.layer({ _tag: "Postgres", url: db.url, maxConnections: 8 }))
  )
)

const ids = (media: ReadonlyArray<Media>) => media.map((m) => m.id as string)

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`sweep of abandoned uploads on ${db.label}`, () => {
    if (db.layer === undefined) return
    const stores = storesOn(db.layer)
    const concurrentStores = db.label === "postgres" ? storesOn(widePostgres) : stores

    it.effect("deleteAbandoned takes old pending media only, oldest first, up to the limit", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const org = yield* newOrg
        const other = yield* newOrg
        const oldest = yield* given(org, NOW - 50 * hour)
        const old = yield* given(other, NOW - 40 * hour)
        const fresh = yield* given(org, NOW - 10 * hour)
        const ready = yield* given(org, NOW - 50 * hour, "ready")
        const failed = yield* given(org, NOW - 50 * hour, "failed")
        const cutoff = { createdBefore: at(NOW - 25 * hour) }
        expect(ids(yield* store.deleteAbandoned({ ...cutoff, limit: 1 }))).toEqual([oldest.id])
        expect(yield* store.deleteAbandoned({ ...cutoff, limit: 10 })).toEqual([old])
        expect(yield* store.deleteAbandoned({ ...cutoff, limit: 10 })).toEqual([])
        expect(yield* store.findById(org, oldest.id)).toEqual(Option.none())
        expect(yield* store.findById(other, old.id)).toEqual(Option.none())
        for (const kept of [fresh, ready, failed]) {
          expect(Option.map(yield* store.findById(org, kept.id), (m) => m.id)).toEqual(Option.some(kept.id))
        }
        // A medium created exactly at the cutoff is not before it.
        const atCutoff = yield* given(org, NOW - 25 * hour)
        expect(yield* store.deleteAbandoned({ ...cutoff, limit: 10 })).toEqual([])
        expect(ids(yield* store.deleteAbandoned({ createdBefore: at(NOW - 25 * hour + 1), limit: 10 }))).toEqual([
          atCutoff.id
        ])
      }).pipe(Effect.provide(stores)))

    it.effect("never takes a pending medium that a post names, in media_ids or a thread post", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const posts = yield* PostStore
        const org = yield* newOrg
        const named = yield* given(org, NOW - 50 * hour)
        const inThread = yield* given(org, NOW - 50 * hour)
        const loose = yield* given(org, NOW - 50 * hour)
        yield* posts.insert({
          post: post(org, { mediaIds: [named.id], createdAt: at(NOW - 49 * hour), updatedAt: at(NOW - 49 * hour) }),
          destinations: []
        })
        yield* posts.insert({
          post: post(org, {
            threadPosts: [new ThreadPost({ content: "more", media_ids: [inThread.id] })],
            createdAt: at(NOW - 48 * hour),
            updatedAt: at(NOW - 48 * hour)
          }),
          destinations: []
        })
        // Another organization's post naming the id does not count.
        const other = yield* newOrg
        yield* posts.insert({ post: post(other, { mediaIds: [loose.id], updatedAt: at(NOW) }), destinations: [] })
        expect(ids(yield* store.deleteAbandoned({ createdBefore: at(NOW - 25 * hour), limit: 10 }))).toEqual([loose.id])
        expect(Option.isSome(yield* store.findById(org, named.id))).toBe(true)
        expect(Option.isSome(yield* store.findById(org, inThread.id))).toBe(true)
      }).pipe(Effect.provide(stores)))

    it.effect("concurrent sweepers each get different media, and together all of them", () =>
      Effect.gen(function*() {
        const store = yield* MediaStore
        const org = yield* newOrg
        const all: Array<Media> = []
        for (let i = 0; i < 24; i++) all.push(yield* given(org, NOW - 30 * hour - i))
        const rounds = yield* Effect.forEach(
          Array.from({ length: 6 }, () => undefined),
          () => store.deleteAbandoned({ createdBefore: at(NOW - 25 * hour), limit: 5 }),
          { concurrency: "unbounded" }
        )
        const rest = yield* store.deleteAbandoned({ createdBefore: at(NOW - 25 * hour), limit: 100 })
        const got = [...rounds.flat(), ...rest].map((m) => m.id as string)
        expect(new Set(got).size).toBe(got.length)
        expect(new Set(got)).toEqual(new Set(ids(all)))
      }).pipe(Effect.provide(concurrentStores)), { timeout: 60_000 })

    it.effect("sweepAbandoned (TestClock) removes media pending 24 h after their URL expired, with their bytes", () =>
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        const dir = yield* BlobDir
        const org = yield* newOrg
        yield* TestClock.setTime(NOW)
        const bytes = (m: Media) => blobs.put(m.storageKey, Stream.make(new Uint8Array([1, 2, 3, 4])), 100)
        const file = (m: Media) => path.join(dir, m.storageKey)
        // Created 25 h + 1 ms ago: the URL (1 h) expired more than 24 h ago.
        const partial = yield* given(org, NOW - 25 * hour - 1)
        yield* bytes(partial)
        const empty = yield* given(org, NOW - 26 * hour) // never received any bytes
        const recent = yield* given(org, NOW - 25 * hour) // exactly 24 h after its URL expired: kept
        yield* bytes(recent)
        const ready = yield* given(org, NOW - 100 * hour, "ready")
        yield* bytes(ready)
        expect(fs.existsSync(file(partial))).toBe(true)

        const summary = yield* MediaLibrary.sweepAbandoned()
        expect([summary.media, summary.blobsLeft]).toEqual([2, 0])
        expect(summary.createdBefore).toEqual(at(NOW - 25 * hour))
        const store = yield* MediaStore
        expect(yield* store.findById(org, partial.id)).toEqual(Option.none())
        expect(yield* store.findById(org, empty.id)).toEqual(Option.none())
        expect(fs.existsSync(file(partial))).toBe(false)
        expect(fs.existsSync(file(recent))).toBe(true)
        expect(fs.existsSync(file(ready))).toBe(true)
        expect(Option.map(yield* store.findById(org, ready.id), (m) => m.status)).toEqual(Option.some("ready"))

        // One millisecond later the next one is due; a shorter grace takes it at once.
        yield* TestClock.adjust(Duration.millis(1))
        expect((yield* MediaLibrary.sweepAbandoned()).media).toBe(1)
        expect(fs.existsSync(file(recent))).toBe(false)
        const young = yield* given(org, NOW - 2 * hour)
        expect((yield* MediaLibrary.sweepAbandoned()).media).toBe(0)
        expect((yield* MediaLibrary.sweepAbandoned({ grace: "30 minutes" })).media).toBe(1)
        expect(yield* store.findById(org, young.id)).toEqual(Option.none())
        expect(fs.existsSync(file(ready))).toBe(true)
      }).pipe(Effect.provide(stores)))

    it.effect("sweepAbandoned works in batches until nothing is left", () =>
      Effect.gen(function*() {
        const org = yield* newOrg
        yield* TestClock.setTime(NOW)
        for (let i = 0; i < 7; i++) yield* given(org, NOW - 30 * hour - i)
        expect((yield* MediaLibrary.sweepAbandoned({ batchSize: 3, maxBatches: 2 })).media).toBe(6)
        expect((yield* MediaLibrary.sweepAbandoned({ batchSize: 3 })).media).toBe(1)
        expect((yield* MediaLibrary.sweepAbandoned({ batchSize: 3 })).media).toBe(0)
      }).pipe(Effect.provide(stores)))
  })
}
