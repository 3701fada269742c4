/**
 * Makes one rendition in a process of its own and prints what it cost: run by the rendition memory
 * test as `tsx --conditions=herald-source RenderChild.ts <png file> <profile json>`. Prints one JSON
 * line: the peak resident set (MB), and the rendition's size or the refusal.
 */
import * as SharpRenditions from "@herald/adapters/media/SharpRenditions"
import type { Profile } from "@herald/core/media/MediaFitting"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"

const [file, profileJson] = process.argv.slice(2)
const source = new Uint8Array(fs.readFileSync(file!))
const profile = JSON.parse(profileJson!) as Profile
const result = await Effect.runPromise(Effect.either(SharpRenditions.render(source, profile)))
const peakMb = Math.round(process.resourceUsage().maxRSS / 1024)
process.stdout.write(
  JSON.stringify(
    Either.isRight(result)
      ? { peakMb, width: result.right.width, height: result.right.height, bytes: result.right.bytes.length }
      : { peakMb, refused: result.left.message }
  ) + "\n"
)
