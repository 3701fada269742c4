/**
 * Renditions in bounded memory: the largest image an upload may be (64 MP, here 20,000 x 3,200, a
 * shape Instagram pads to 20,000 x 10,472) is rendered in a process of its own whose peak resident
 * set is measured; a header declaring more pixels than allowed is refused by the decoder itself; and
 * no more renditions run at once than the limit, however many are asked for together.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SharpRenditions from "@herald/adapters/media/SharpRenditions"
import * as MediaFitting from "@herald/core/media/MediaFitting"
import * as MediaRules from "@herald/core/media/MediaRules"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import sharp from "sharp"
import * as PixelBomb from "./support/PixelBomb.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../..")

const instagramPad = MediaFitting.makeProfile("jpeg", 8 * MediaRules.MiB, {
  range: MediaRules.platformAspectRatios.instagram!,
  fit: "pad"
})

/** Runs `support/RenderChild.ts` on `file` and returns what it printed. */
const renderInChild = (file: string, profile: MediaFitting.Profile) =>
  new Promise<
    { readonly peakMb: number; readonly width?: number; readonly height?: number; readonly refused?: string }
  >(
    (resolve, reject) => {
      const child = spawn(
        path.join(repoRoot, "node_modules/.bin/tsx"),
        ["--conditions=herald-source", path.join(here, "support/RenderChild.ts"), file, JSON.stringify(profile)],
        { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] }
      )
      let out = ""
      let err = ""
      child.stdout.on("data", (chunk) => (out += String(chunk)))
      child.stderr.on("data", (chunk) => (err += String(chunk)))
      child.on("error", reject)
      child.on("close", (code) => {
        const line = out.trim().split("\n").pop() ?? ""
        if (code !== 0 || line === "") {
          reject(new Error(`the rendition process ended with ${code}: ${err.slice(-2000)}`))
        } else resolve(JSON.parse(line))
      })
    }
  )

describe("rendition limits", () => {
  it.live(
    "the largest allowed image, padded for Instagram, peaks well under 1 GB of RSS",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-rendition-rss-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const file = path.join(dir, "largest.png")
        // 20,000 x 3,200 = 64,000,000 pixels: exactly the upload limit, in ~60 KB.
        fs.writeFileSync(file, PixelBomb.flat(20_000, 3_200))
        expect(20_000 * 3_200).toBe(MediaRules.maxImagePixels)
        const result = yield* Effect.promise(() => renderInChild(file, instagramPad))
        // Padding it whole as RGBA (20,000 x 10,472 x 4 bytes, plus the source) took 2.4 GB.
        expect(result.refused).toBeUndefined()
        expect(result.peakMb).toBeLessThan(1000)
        expect(result.width! / result.height!).toBeLessThanOrEqual(1.91)
        expect(result.width! * result.height!).toBeLessThanOrEqual(SharpRenditions.maxWorkingPixels)
      }).pipe(Effect.scoped),
    300_000
  )

  it.live("a header declaring more pixels than allowed is refused before it is decoded", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(SharpRenditions.render(PixelBomb.header(40_000, 6_700), instagramPad))
      expect(error.message).toBe(`the image has more than ${MediaRules.maxImagePixels} pixels`)
    }))

  it.live(
    "no more renditions run at once than the limit, however many are asked for together",
    () =>
      Effect.gen(function*() {
        const renditions = yield* SharpRenditions.make()
        expect(SharpRenditions.defaultConcurrency).toBeLessThanOrEqual(2)
        const source = new Uint8Array(
          yield* Effect.promise(() =>
            sharp({
              create: {
                width: 1500,
                height: 1500,
                channels: 3,
                background: "#808080",
                noise: { type: "gaussian", mean: 128, sigma: 60 }
              }
            })
              .png()
              .toBuffer()
          )
        )
        let peak = 0
        const timer = setInterval(() => {
          const { process: running, queue } = sharp.counters()
          peak = Math.max(peak, running + queue)
        }, 1)
        yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)))
        const profile = MediaFitting.makeProfile("jpeg", 200_000)
        const made = yield* Effect.all(Array.from({ length: 6 }, () => renditions.render(source, profile)), {
          concurrency: "unbounded"
        })
        expect(made).toHaveLength(6)
        expect(peak).toBeGreaterThan(0)
        expect(peak).toBeLessThanOrEqual(SharpRenditions.defaultConcurrency)
      }).pipe(Effect.scoped),
    120_000
  )
})
