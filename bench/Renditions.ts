/**
 * Renditions per second and peak RSS while 20 posts with 5 MB photos publish at once.
 *
 * The engine's figure: 20 real ~5 MB JPEG photos (noisy, with GPS EXIF, made with sharp) in the blob
 * store, 20 due posts each with one photo and a destination on Bluesky (`jpeg-max1000000`), Instagram
 * (JPEG, 4:5..1.91:1) and X (`jpeg-max5242880`): the dispatcher (SQLite in-process, sandbox clients
 * that read every byte) publishes them all at once, each image fitted by `DispatchMedia` with sharp
 * as the server wires it (at most the machine's parallelism renditions at once), 60 renditions.
 * The peer, in the same run: plain sharp (orient, resize to the rendition's width, JPEG) of the same
 * 60 photo/platform pairs, all at once, no engine. Renditions/s and peak RSS for both, and the ratio.
 *
 * `npx tsx bench/Renditions.ts` prints the lines; `npm run bench` adds them to its table.
 */
import * as FileBlobStore from "@herald/adapters/media/FileBlobStore"
import * as SharpRenditions from "@herald/adapters/media/SharpRenditions"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as SqlClient from "@effect/sql/SqlClient"
import type { MediaId } from "@herald/core/kernel/Ids"
import { Media } from "@herald/core/domain/Media"
import { ImageRenditions } from "@herald/core/media/MediaFitting"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { MediaStore } from "@herald/core/media/MediaStore"
import { BlobStore } from "@herald/core/media/BlobStore"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import sharp from "sharp"
import * as W from "../test/engine/WorkerProcesses.js"

const posts = 20
const platforms = ["bluesky", "instagram", "x"] as const

export interface Line {
  readonly benchmark: string
  readonly store: string
  readonly processes: string
  readonly items: number
  readonly seconds: number
  readonly figure: string
}

/** A ~5 MB photo: 2600x1950 gaussian noise at quality 95, with GPS EXIF. */
const photo = (seed: number) =>
  sharp({
    create: {
      width: 2600,
      height: 1950,
      channels: 3,
      background: { r: seed * 10, g: 120, b: 200 },
      noise: { type: "gaussian", mean: 128, sigma: 70 }
    }
  }).jpeg({ quality: 95 }).withExif({ IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 30/1" } }).toBuffer()

/** Peak RSS while `run` runs, sampled every 10 ms. */
const withPeakRss = async <A>(run: () => Promise<A>) => {
  global.gc?.()
  let peak = process.memoryUsage().rss
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
  const started = performance.now()
  try {
    const result = await run()
    return { result, seconds: (performance.now() - started) / 1000, peakMiB: peak / 2 ** 20 }
  } finally {
    clearInterval(sampler)
  }
}

export const run = async (): Promise<ReadonlyArray<Line>> => {
  const sources = await Promise.all(Array.from({ length: posts }, (_, i) => photo(i)))
  const mean = sources.reduce((n, s) => n + s.length, 0) / sources.length
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-renditions-"))
  let renders = 0
  const counting = Layer.effect(
    ImageRenditions,
    Effect.map(SharpRenditions.make(), (inner) =>
      ImageRenditions.of({
        render: (source, profile) => Effect.tap(inner.render(source, profile), () => Effect.sync(() => renders++))
      }))
  )
  const media = MediaLibrary.layerDispatchMedia.pipe(
    Layer.provideMerge(Layer.merge(
      FileBlobStore.layer({ directory: path.join(tmp, "media") }).pipe(Layer.orDie),
      counting
    ))
  )
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(media, Registry.layerSandbox({})).pipe(
      Layer.provideMerge(W.storesLayer({ _tag: "Sqlite", filename: path.join(tmp, "bench.db") }))
    )
  )
  try {
    // 20 due posts on three platforms, then one photo each (ready in the library, bytes in the store).
    const seeded = await runtime.runPromise(
      W.seed({ posts, platforms, dueAt: DateTime.unsafeMake(Date.now() + 24 * 3_600_000) })
    )
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* MediaStore
      const blobs = yield* BlobStore
      const now = yield* DateTime.now
      const ids = yield* sql<{ id: string }>`SELECT id FROM posts ORDER BY id`
      for (const [i, row] of ids.entries()) {
        const id = crypto.randomUUID() as MediaId
        const storageKey = `${seeded.organizationId}/${id}`
        yield* blobs.put(storageKey, Stream.make(new Uint8Array(sources[i]!)), 50 * 2 ** 20)
        yield* store.insert(
          new Media({
            id,
            organizationId: seeded.organizationId,
            filename: `photo${i}.jpg`,
            mimeType: "image/jpeg",
            kind: "image",
            size: sources[i]!.length,
            width: Option.some(2600),
            height: Option.some(1950),
            durationMs: Option.none(),
            status: "ready",
            error: Option.none(),
            storageKey,
            sourceUrl: Option.none(),
            createdAt: now,
            updatedAt: now
          })
        )
        yield* sql`UPDATE posts SET media_ids = ${JSON.stringify([id])} WHERE id = ${row.id}`
      }
      yield* sql`UPDATE destinations SET due_at = ${Date.now()} WHERE status = 'queued'`
    }))

    const worker: Dispatcher.Options = { workerId: `bench-renditions:${process.pid}` }
    const engine = await withPeakRss(() =>
      runtime.runPromise(Effect.gen(function*() {
        let claimed = 0
        for (;;) {
          const round = yield* Dispatcher.runOnce(worker)
          claimed += round.claimed
          if (round.claimed === 0) return claimed
        }
      }))
    )
    // On a loaded machine a publish waiting for its turn at sharp can pass the 60 s publish deadline and
    // be queued for a retry: the line then says how many went out in this drain.
    const counts = await runtime.runPromise(W.statusCounts)
    const out = counts.published === posts * platforms.length
      ? ""
      : ` (${counts.published ?? 0} of ${posts * platforms.length} published, the rest queued again)`

    // The peer: plain sharp of the same pairs, at the widths the engine's renditions came out.
    const widths = { bluesky: 1400, instagram: 2600, x: 2600 } as const
    const peer = await withPeakRss(() =>
      Promise.all(
        sources.flatMap((source) =>
          platforms.map((p) => sharp(source).rotate().resize({ width: widths[p] }).jpeg({ quality: 85 }).toBuffer())
        )
      )
    )
    const engineRate = renders / engine.seconds
    const peerRate = peer.result.length / peer.seconds
    const label = `${posts} posts x ${platforms.length} platforms, ~${(mean / 1e6).toFixed(1)} MB photos at once`
    return [
      {
        benchmark: "renditions while publishing",
        store: "sqlite (synchronous=FULL)",
        processes: `1 (in-process), ${label}`,
        items: renders,
        seconds: engine.seconds,
        figure: `${engineRate.toFixed(1)} renditions/s, peak RSS ${engine.peakMiB.toFixed(0)} MiB; ` +
          `${(engineRate / peerRate).toFixed(2)}x plain sharp's rate${out}`
      },
      {
        benchmark: "renditions, peer: plain sharp resize",
        store: "none",
        processes: `1, the same ${peer.result.length} photo/platform pairs at once`,
        items: peer.result.length,
        seconds: peer.seconds,
        figure: `${peerRate.toFixed(1)} renditions/s, peak RSS ${peer.peakMiB.toFixed(0)} MiB`
      }
    ]
  } finally {
    await runtime.dispose()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const line of await run()) {
    console.log(
      `${line.benchmark} | ${line.processes} | ${line.items} in ${line.seconds.toFixed(2)} s | ${line.figure}`
    )
  }
}
