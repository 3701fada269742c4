/**
 * The sandbox AI (`herald serve --sandbox` with no provider configured): deterministic captions built
 * from templates, and real PNG images of the requested aspect ratio (a gradient whose colours come
 * from the prompt). The same request always gives the same output, and every answer is labelled
 * `provider: "sandbox"`.
 */
import { CaptionGenerator, type CaptionLength, type Tone } from "@herald/core/ai/CaptionGenerator"
import { type AspectRatio, ImageGenerator, ratioOf } from "@herald/core/ai/ImageGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Png from "./Png.js"

export const provider = "sandbox"
export const captionModel = "sandbox-caption-1"
export const imageModel = "sandbox-image-1"

/** FNV-1a, for picking templates and colours deterministically. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

const openers: Record<Tone, ReadonlyArray<string>> = {
  professional: [
    "Here is what matters about",
    "A closer look at",
    "Key takeaways on",
    "What teams should know about",
    "Our perspective on"
  ],
  casual: ["Let's talk about", "So, about", "Quick thoughts on", "Been thinking about", "A little something on"],
  witty: ["Plot twist:", "Hot take on", "Breaking (not really) news about", "Confession time:", "Nobody asked, but"],
  enthusiastic: [
    "We are so excited about",
    "You will love",
    "Big news:",
    "Can we talk about how great",
    "Loving every bit of"
  ],
  urgent: ["Don't miss this:", "Act now on", "Last call:", "Time is running out for", "Heads up on"],
  inspirational: [
    "Dream bigger with",
    "Every journey starts with",
    "Believe in",
    "Find your spark in",
    "Small steps, big change:"
  ]
}

const middles: ReadonlyArray<string> = [
  "It is simpler than it looks, and the details make the difference.",
  "Here is why it deserves a place on your list this week.",
  "We gathered what we learned so you can skip the guesswork.",
  "A few ideas worth trying today, and one worth remembering.",
  "The best part is how quickly you can get started."
]

const closers: ReadonlyArray<string> = [
  "Tell us what you think in the comments.",
  "Save this for later and share it with someone who needs it.",
  "Follow along for more.",
  "What would you add?",
  "Link in bio for the full story."
]

const emojis: Record<Tone, string> = {
  professional: "📈",
  casual: "😊",
  witty: "😏",
  enthusiastic: "🎉",
  urgent: "⏰",
  inspirational: "✨"
}

const sentences: Record<CaptionLength, number> = { short: 1, medium: 2, long: 3 }

const stopWords = new Set([
  "the",
  "and",
  "for",
  "with",
  "every",
  "our",
  "your",
  "from",
  "this",
  "that",
  "about",
  "into",
  "over",
  "new",
  "are",
  "was"
])

const hashtagsOf = (topic: string): string =>
  [
    ...new Set(
      topic.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 2 && !stopWords.has(w.toLowerCase())).slice(0, 3)
    )
  ]
    .map((w) => `#${w[0]!.toUpperCase()}${w.slice(1).toLowerCase()}`)
    .join(" ")

const tidy = (topic: string): string => topic.replace(/\s+/g, " ").replace(/[.!?]+$/, "")

export const captions = (request: {
  readonly topic: string
  readonly tone: Tone
  readonly length: CaptionLength
  readonly includeHashtags: boolean
  readonly includeEmojis: boolean
  readonly count: number
}): ReadonlyArray<string> => {
  const seed = hash(`${request.topic}\u0000${request.tone}\u0000${request.length}`)
  const topic = tidy(request.topic)
  const tags = request.includeHashtags ? hashtagsOf(request.topic) : ""
  return Array.from({ length: request.count }, (_, i) => {
    const pick = <A>(list: ReadonlyArray<A>, salt: number) => list[(seed + i + salt) % list.length]!
    const parts = [`${pick(openers[request.tone], 0)} ${topic}.`]
    if (sentences[request.length] >= 2) parts.push(pick(middles, 1))
    if (sentences[request.length] >= 3) parts.push(pick(closers, 2))
    let text = parts.join(" ")
    if (request.includeEmojis) text = `${emojis[request.tone]} ${text}`
    if (tags !== "") text = `${text}\n\n${tags}`
    return text
  })
}

/** The sandbox image's pixel size: exact to the ratio, the long side 256 to 320 pixels. */
export const imageSize = (aspectRatio: AspectRatio): { readonly width: number; readonly height: number } => {
  const [w, h] = ratioOf(aspectRatio)
  const unit = Math.floor(320 / Math.max(w, h))
  return { width: w * unit, height: h * unit }
}

export const image = (prompt: string, aspectRatio: AspectRatio): Uint8Array => {
  const { height, width } = imageSize(aspectRatio)
  const seed = hash(prompt)
  const from = [seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff] as const
  const to = [255 - from[0], 255 - from[1], 255 - from[2]] as const
  return Png.encodeRgb(width, height, (x, y) => {
    const t = (x / Math.max(1, width - 1) + y / Math.max(1, height - 1)) / 2
    return [
      Math.round(from[0] + (to[0] - from[0]) * t),
      Math.round(from[1] + (to[1] - from[1]) * t),
      Math.round(from[2] + (to[2] - from[2]) * t)
    ]
  })
}

export const layer: Layer.Layer<CaptionGenerator | ImageGenerator> = Layer.merge(
  Layer.succeed(
    CaptionGenerator,
    CaptionGenerator.of({
      configured: true,
      generate: (request) => Effect.succeed({ captions: captions(request), provider, model: captionModel })
    })
  ),
  Layer.succeed(
    ImageGenerator,
    ImageGenerator.of({
      configured: true,
      generate: (request) =>
        Effect.sync(() => ({ bytes: image(request.prompt, request.aspectRatio), provider, model: imageModel }))
    })
  )
)
