/**
 * A text as one platform will count it, for a composer's preview: every limit the text must meet
 * (`TextLimits.textLimits`, the very limits POST /posts checks), its length in each limit's unit, and
 * where a text that is too long stops fitting (the longest prefix, at a grapheme boundary, within
 * every limit), so a preview can show what fits and what is over. Pure: no I/O.
 */
import type { Platform } from "../domain/Platform.js"
import { graphemeClusters } from "./TextCounting.js"
import { reportedLengthFactor } from "./PlatformRules.js"
import { type TextLimit, textLimits } from "./TextLimits.js"

export interface LimitCount {
  readonly limit: number
  readonly unit: TextLimit["unit"]
  /** The text's length in `unit`, exact up to 10 times the limit; past that, where counting stopped. */
  readonly length: number
  readonly length_is_minimum: boolean
  readonly over: boolean
}

export interface TextMeasure {
  readonly limits: ReadonlyArray<LimitCount>
  /**
   * UTF-16 index where the part that fits every limit ends: the text's length when it fits; else the
   * longest prefix ending at a grapheme boundary that is within every limit.
   */
  readonly fits: number
}

/**
 * Whether the first `clusters` grapheme clusters of the text (`prefix`) are within every limit. A
 * grapheme count is the cluster count itself (a prefix ending at a boundary holds exactly the clusters
 * before it), which spares segmenting the prefix again at each step.
 */
const within = (limits: ReadonlyArray<TextLimit>, prefix: string, clusters: number): boolean =>
  limits.every((l) => (l.unit === "graphemes" ? clusters : l.countUpTo(prefix, l.limit)) <= l.limit)

/** How `text`, published on `platform` (with or without media), counts against each of its limits. */
export const measure = (platform: Platform, text: string, hasMedia: boolean): TextMeasure => {
  const limits = textLimits(platform, hasMedia)
  const counts = limits.map((l): LimitCount => {
    const ceiling = l.limit * reportedLengthFactor
    const length = l.countUpTo(text, ceiling)
    return {
      limit: l.limit,
      unit: l.unit,
      length: Math.min(length, ceiling),
      length_is_minimum: length > ceiling,
      over: length > l.limit
    }
  })
  if (!counts.some((c) => c.over)) return { limits: counts, fits: text.length }
  // Every cluster boundary: a fitting prefix may hold more clusters than the limit's number (X counts
  // a long URL as 23).
  const boundaries = [0]
  let position = 0
  for (const cluster of graphemeClusters(text)) {
    position += cluster.length
    boundaries.push(position)
  }
  // The longest fitting prefix, by bisection (counts grow with the prefix).
  let lo = 0
  let hi = boundaries.length - 1
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (within(limits, text.slice(0, boundaries[mid]), mid)) lo = mid
    else hi = mid - 1
  }
  return { limits: counts, fits: boundaries[lo]! }
}
