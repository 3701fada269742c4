/**
 * The MediaStore over SQL, on SQLite and on Postgres where one answers: round trip of every field,
 * organization scoping, newest-first pages with a kind filter and total, the status fence of
 * `update`, and delete.
 */
import { describe, expect, layer } from "@effect/vitest"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { MediaId, type OrganizationId } from "@herald/core/kernel/Ids"
import { Media, type MediaKind } from "@herald/core/domain/Media"
import { MediaStore } from "@herald/core/media/MediaStore"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as SqlStores from "../../src/sql/SqlStores.js"
import { at, organization, T0 } from "../contract/Fixtures.js"
import { databasesUnderTest } from "../support/TestDatabases.js"

const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => randomUUID()) }))

const medium = (organizationId: OrganizationId, overrides: Partial<ConstructorParameters<typeof Media>[0]> = {}) => {
  const id = MediaId.make(randomUUID())
  return new Media({
    id,
    organizationId,
    filename: "photo.png",
    mimeType: "image/png",
    size: 1234,
    kind: "image",
    width: Option.some(640),
    height: Option.some(480),
    durationMs: Option.none(),
    status: "pending_upload",
    error: Option.none(),
    storageKey: `${organizationId}/${id}`,
    sourceUrl: Option.none(),
    createdAt: at(T0),
    updatedAt: at(T0),
    ...overrides
  })
}

const newOrg = Effect.gen(function*() {
  const org = organization()
  yield* (yield* OrganizationStore).insert(org)
  return org.id
})

for (const db of await databasesUnderTest()) {
  describe.skipIf(db.layer === undefined)(`media store on ${db.label}`, () => {
    if (db.layer === undefined) return
    layer(SqlStores.layer.pipe(Layer.provide(randomIds), Layer.provideMerge(db.layer)))((it) => {
      it.effect("round-trips every field, scoped to its organization", () =>
        Effect.gen(function*() {
          const store = yield* MediaStore
          const org = yield* newOrg
          const other = yield* newOrg
          const video = medium(org, {
            kind: "video",
            mimeType: "video/mp4",
            size: 3_000_000_000,
            durationMs: Option.some(2500),
            sourceUrl: Option.some("https://cdn.example.com/v.mp4"),
            error: Option.some("note"),
            altText: Option.some("A cat, dancing")
          })
          yield* store.insert(video)
          expect(yield* store.findById(org, video.id)).toEqual(Option.some(video))
          expect(yield* store.findById(other, video.id)).toEqual(Option.none())
          expect(yield* store.findByIds(org, [video.id, MediaId.make(randomUUID())])).toEqual([video])
          expect(yield* store.findByIds(other, [video.id])).toEqual([])
          expect(yield* store.findByIds(org, [])).toEqual([])
        }))

      it.effect("lists newest first, filtered by kind, with the total", () =>
        Effect.gen(function*() {
          const store = yield* MediaStore
          const org = yield* newOrg
          const kinds: ReadonlyArray<MediaKind> = ["image", "video", "image", "document", "image"]
          const all = kinds.map((kind, i) => medium(org, { kind, createdAt: at(T0 + i * 1000) }))
          for (const m of all) yield* store.insert(m)
          const page = yield* store.list(org, { limit: 2, offset: 0 })
          expect(page.total).toBe(5)
          expect(page.items.map((m) => m.id)).toEqual([all[4]!.id, all[3]!.id])
          const images = yield* store.list(org, { kind: "image", limit: 10, offset: 1 })
          expect(images.total).toBe(3)
          expect(images.items.map((m) => m.id)).toEqual([all[2]!.id, all[0]!.id])
        }))

      it.effect("update is fenced by the expected status; delete says whether it found the row", () =>
        Effect.gen(function*() {
          const store = yield* MediaStore
          const org = yield* newOrg
          const m = medium(org)
          yield* store.insert(m)
          const ready = new Media({ ...m, status: "ready", size: 99, updatedAt: at(T0 + 5) })
          expect(yield* store.update(ready, "pending_upload")).toBe(true)
          expect(yield* store.update(new Media({ ...m, status: "ready", size: 1 }), "pending_upload")).toBe(false)
          expect(Option.map(yield* store.findById(org, m.id), (x) => [x.status, x.size])).toEqual(
            Option.some(["ready", 99])
          )
          expect(yield* store.update(new Media({ ...ready, altText: Option.some("Alt") }), "ready")).toBe(true)
          expect(Option.flatMap(yield* store.findById(org, m.id), (x) => x.altText)).toEqual(Option.some("Alt"))
          expect(yield* store.delete(org, m.id)).toBe(true)
          expect(yield* store.delete(org, m.id)).toBe(false)
          expect(yield* store.findById(org, m.id)).toEqual(Option.none())
        }))
    })
  })
}
