/**
 * `npx tsx bench/Renditions.ts`: renditions per second and peak RSS while 20 different ~5 MB photos
 * (with GPS EXIF) are fitted at once for Bluesky (1,000,000 bytes) and Instagram (JPEG, 4:5..1.91:1),
 * through the `ImageRenditions` service as the server wires it (`SharpRenditions.make`: at most
 * the machine's parallelism at once); the rest of a publish is not measured here. Prints one line per platform.
 */
import * as SharpRenditions from "@herald/adapters/media/SharpRenditions"
import * as MediaFitting from "@herald/core/media/MediaFitting"
import * as Effect from "effect/Effect"
import sharp from "sharp"

const photos = 20

const photo = (seed: number) =>
  sharp({
    create: { width: 2600, height: 1950, channels: 3, background: { r: seed * 10, g: 120, b: 200 }, noise: { type: "gaussian", mean: 128, sigma: 70 } }
  }).jpeg({ quality: 92 }).withExif({ IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 30/1" } }).toBuffer()

const main = async () => {
  const sources = await Promise.all(Array.from({ length: photos }, (_, i) => photo(i)))
  const mean = sources.reduce((n, s) => n + s.length, 0) / sources.length
  for (const platform of ["bluesky", "instagram"] as const) {
    const planned = MediaFitting.plan({ kind: "image", mimeType: "image/jpeg", size: mean }, { platform })
    if (planned._tag !== "Rendition") throw new Error(`no rendition planned for ${platform}`)
    global.gc?.()
    let peak = process.memoryUsage().rss
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
    const started = performance.now()
    const out = await Effect.runPromise(Effect.flatMap(SharpRenditions.make(), (renditions) =>
      Effect.forEach(sources, (s) => renditions.render(s, planned.profile), { concurrency: photos })))
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    const largest = Math.max(...out.map((r) => r.bytes.length))
    console.log(
      `${platform}: ${photos} photos of ~${(mean / 1e6).toFixed(1)} MB at once -> ${(photos / seconds).toFixed(1)} ` +
        `renditions/s (${seconds.toFixed(2)} s), peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB, largest rendition ` +
        `${largest} bytes (${planned.profile.key})`
    )
  }
}

void main()
