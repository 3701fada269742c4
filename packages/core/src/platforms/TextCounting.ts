/**
 * How each platform counts a text: grapheme clusters, code points, UTF-16 units, UTF-8 bytes, X's
 * weighted length and Threads' length. Every count has an `...UpTo(text, max)` form that stops once
 * past `max`. Pure: no I/O.
 */

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" })

/**
 * Every count here is one pass over the text, and each `...UpTo(text, max)` stops as soon as the
 * count passes `max` (returning a number above `max`, exact only up to `max`): a 400 KB text over a
 * 300-grapheme limit costs what 301 graphemes cost.
 *
 * `Intl.Segmenter` itself is not linear on long strings (each step costs with the string's length:
 * 100,000 characters took seconds), so it is only ever given short windows: a window is segmented,
 * its last segment (perhaps cut by the window's end) dropped, and the next window starts where that
 * segment started. A grapheme boundary depends only on what precedes it, and nothing before a true
 * boundary changes the boundaries after it, so the clusters are exactly those of the whole text. A
 * window holding a single cluster is doubled until it holds two.
 */
const segmentWindow = 256

/** The extended grapheme clusters of `text`, in order, as `Intl.Segmenter` finds them in the whole text. */
export function* graphemeClusters(text: string, window: number = segmentWindow): Generator<string, void, undefined> {
  let position = 0
  let span = window
  while (position < text.length) {
    let end = Math.min(text.length, position + span)
    // Never between the two halves of a surrogate pair: a boundary depends on the whole character after it.
    const last = text.charCodeAt(end - 1)
    const next = text.charCodeAt(end)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end += 1
    const part = text.slice(position, end)
    if (end === text.length) {
      for (const { segment } of segmenter.segment(part)) yield segment
      return
    }
    const found: Array<string> = []
    for (const { segment } of segmenter.segment(part)) found.push(segment)
    if (found.length < 2) {
      span *= 2
      continue
    }
    found.pop()
    for (const segment of found) {
      position += segment.length
      yield segment
    }
    span = window
  }
}

/**
 * Characters that never join a neighbour of the same kind into one cluster: ASCII, the Latin letters
 * of Latin-1 and Latin Extended (not the pictographs © and ®), Greek and Cyrillic letters, common
 * punctuation (dashes, quotes, bullets, ellipsis, per mille), CJK ideographs, kana and Hangul
 * syllables. Between two of them there is always a grapheme boundary (none is a Prepend, Extend,
 * SpacingMark, ZWJ, regional indicator, pictograph, Hangul jamo or Indic consonant), except CR before
 * LF; each is one code unit and one code point.
 */
const isSimple = (c: number): boolean =>
  c < 0x80 ||
  (c >= 0xa0 && c <= 0x2ff && c !== 0xa9 && c !== 0xae) ||
  (c >= 0x370 && c <= 0x3ff) || (c >= 0x400 && c <= 0x482) || (c >= 0x48a && c <= 0x52f) ||
  (c >= 0x1e00 && c <= 0x1eff) || (c >= 0x2010 && c <= 0x2027) || (c >= 0x2030 && c <= 0x203b) ||
  (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x3041 && c <= 0x3096) ||
  (c >= 0x30a1 && c <= 0x30fa) || (c >= 0xac00 && c <= 0xd7a3)

/**
 * Code points after which a boundary is not certain even before a simple character: the blocks
 * holding the Prepend characters (Arabic, Syriac, Malayalam, the Brahmic scripts of plane 1) and the
 * Hangul leading jamo (L × LV).
 */
const joinsForward = (cp: number): boolean =>
  (cp >= 0x600 && cp <= 0x8ff) || (cp >= 0xd00 && cp <= 0xd7f) || (cp >= 0x11000 && cp <= 0x11fff) ||
  (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0xa960 && cp <= 0xa97f)

/** A pictograph that nothing before it joins, unless a ZWJ (GB11): not an emoji modifier or extender. */
const freePictograph = /^(?!\p{Emoji_Modifier}|\p{Grapheme_Extend}|\p{Regional_Indicator})\p{Extended_Pictographic}$/u

/**
 * Whether there is certainly a grapheme boundary before the code unit at `j` (0 < j < length): the
 * character there is simple (nothing joins it to what precedes, by its own kind) or a pictograph not
 * preceded by a ZWJ, and the one before neither prepends nor is CR before LF.
 */
const certainBefore = (text: string, j: number): boolean => {
  const b = text.charCodeAt(j)
  let a = text.charCodeAt(j - 1)
  if (!isSimple(b)) {
    if (b < 0xd800 || b > 0xdbff || a === 0x200d) return false
    const cp = text.codePointAt(j) ?? 0
    if (cp <= 0xffff || !freePictograph.test(String.fromCodePoint(cp))) return false
  }
  if (a === 13) return b !== 10
  if (a >= 0xdc00 && a <= 0xdfff && j >= 2) {
    const high = text.charCodeAt(j - 2)
    if (high >= 0xd800 && high <= 0xdbff) a = ((high - 0xd800) << 10) + (a - 0xdc00) + 0x10000
  }
  return !joinsForward(a)
}

/** Whether `text[from, to)` is one code point. */
const oneCodePoint = (text: string, from: number, to: number): boolean => {
  if (to - from === 1) return true
  if (to - from !== 2) return false
  const high = text.charCodeAt(from)
  const low = text.charCodeAt(from + 1)
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff
}

/**
 * Whether `text[from, to)` is a simple character that is no control, followed only by combining
 * diacritical marks (U+0300–U+036F, all Extend): one cluster (an accented letter, decomposed).
 */
const accentedLetter = (text: string, from: number, to: number): boolean => {
  const base = text.charCodeAt(from)
  if (!isSimple(base) || base < 0x20 || base === 0x7f || base === 0xad) return false
  for (let k = from + 1; k < to; k++) {
    const mark = text.charCodeAt(k)
    if (mark < 0x300 || mark > 0x36f) return false
  }
  return true
}

/**
 * The sum of `weigh` over the clusters of `text`, stopping once it passes `max`. The text is cut at
 * certain boundaries (`certainBefore`); a piece that is one simple character is weighed by
 * `simpleWeight`, a piece that is one code point or an accented letter by `weigh` (it is a cluster),
 * without the segmenter (most text is that, emoji included); only other pieces go through
 * `graphemeClusters`.
 */
const sumClusters = (
  text: string,
  weigh: (cluster: string) => number,
  simpleWeight: (code: number) => number,
  max: number
): number => {
  let total = 0
  let i = 0
  const n = text.length
  // Invariant: a grapheme boundary is certain at i.
  while (i < n) {
    let end = i + 1
    while (end < n && !certainBefore(text, end)) end += 1
    const c = text.charCodeAt(i)
    if (end === i + 1 && isSimple(c)) {
      total += simpleWeight(c)
    } else if (oneCodePoint(text, i, end) || accentedLetter(text, i, end)) {
      total += weigh(text.slice(i, end))
    } else {
      for (const cluster of graphemeClusters(text.slice(i, end))) {
        total += weigh(cluster)
        if (total > max) return total
      }
    }
    if (total > max) return total
    i = end
  }
  return total
}

const one = (): number => 1

/** Characters as people see them (extended grapheme clusters), counting stopped past `max`. */
export const graphemesUpTo = (text: string, max: number): number => sumClusters(text, one, one, max)

/** Characters as people see them (extended grapheme clusters). */
export const graphemes = (text: string): number => graphemesUpTo(text, Infinity)

/** Unicode code points, counting stopped past `max`. */
export const codePointsUpTo = (text: string, max: number): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i += 1
    }
    n += 1
    if (n > max) return n
  }
  return n
}

/** Unicode code points. */
export const codePoints = (text: string): number => codePointsUpTo(text, Infinity)

/** UTF-16 code units (what JavaScript's `length` and Telegram count). */
export const utf16Units = (text: string): number => text.length

/** UTF-8 bytes (a lone surrogate counts 3, as TextEncoder writes U+FFFD), counting stopped past `max`. */
export const utf8BytesUpTo = (text: string, max: number): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4
        i += 1
      } else n += 3
    } else n += 3
    if (n > max) return n
  }
  return n
}

export const utf8Bytes = (text: string): number => utf8BytesUpTo(text, Infinity)

const pictographic = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u

/** Every URL counts as this many characters on X (t.co wrapping). */
export const xUrlWeight = 23

/** The characters X leaves out of the end of a URL. */
const xTrailingPunctuation = new Set([".", ",", ":", ";", "!", "?", ")", "]", "'", "\""])

/**
 * X's URL detection, simplified from twitter-text: `http(s)://` or `www.` followed by non-space
 * characters, with trailing punctuation left out of the URL. (The same matches as the regex
 * `/(?:https?:\/\/|www\.)[^\s]+?(?=[.,:;!?)\]'"]*(?:\s|$))/giu`, found in linear time: that regex
 * retries its lookahead at every character, quadratic on a long run of punctuation.)
 */
export const xUrls = (text: string): ReadonlyArray<{ readonly index: number; readonly length: number }> => {
  const start = /https?:\/\/|www\./giu
  const run = /[^\s]*/uy
  const found: Array<{ index: number; length: number }> = []
  let from = 0
  while (from < text.length) {
    start.lastIndex = from
    const match = start.exec(text)
    if (match === null) break
    const bodyStart = match.index + match[0].length
    run.lastIndex = bodyStart
    const runEnd = bodyStart + (run.exec(text)?.[0].length ?? 0)
    if (runEnd === bodyStart) {
      from = match.index + 1
      continue
    }
    let end = runEnd
    while (end > bodyStart && xTrailingPunctuation.has(text[end - 1]!)) end -= 1
    // At least one character after the prefix (the trailing punctuation is all ASCII: one unit).
    if (end === bodyStart) end = bodyStart + 1
    found.push({ index: match.index, length: end - match.index })
    from = end
  }
  return found
}

/** The code-point ranges twitter-text weighs 1; everything else weighs 2. */
const xLightRanges: ReadonlyArray<readonly [number, number]> = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247]
]

const xCodePointWeight = (cp: number): number => xLightRanges.some(([start, end]) => cp >= start && cp <= end) ? 1 : 2

const xClusterWeight = (cluster: string): number => {
  if (pictographic.test(cluster)) return 2
  let total = 0
  for (const char of cluster) total += xCodePointWeight(char.codePointAt(0) ?? 0)
  return total
}

/** A simple character's weight on X: its code point's (none is a pictograph). */
const xSimpleWeight = (code: number): number => xCodePointWeight(code)

/** X's weighted length (see `xWeightedLength`), counting stopped past `max`. */
export const xWeightedLengthUpTo = (text: string, max: number): number => {
  const normalized = text.normalize("NFC")
  let total = 0
  let rest = ""
  let last = 0
  for (const url of xUrls(normalized)) {
    rest += normalized.slice(last, url.index) + " "
    total += xUrlWeight - 1
    last = url.index + url.length
  }
  if (total > max) return total
  rest += normalized.slice(last)
  return total + sumClusters(rest, xClusterWeight, xSimpleWeight, max - total)
}

/**
 * X's weighted length (twitter-text v3 configuration): the text is NFC-normalized; every URL counts
 * 23; an emoji (a whole grapheme cluster, with its modifiers and joiners) counts 2; other code points
 * count 1 in the Latin and general-punctuation ranges and 2 elsewhere (CJK and most other scripts).
 */
export const xWeightedLength = (text: string): number => xWeightedLengthUpTo(text, Infinity)

const threadsClusterWeight = (cluster: string): number =>
  pictographic.test(cluster) ? utf8Bytes(cluster) : codePoints(cluster)

/** Threads' length (see `threadsLength`), counting stopped past `max`. */
export const threadsLengthUpTo = (text: string, max: number): number =>
  sumClusters(text, threadsClusterWeight, one, max)

/** Threads counts emoji as their UTF-8 bytes, other characters as one each. */
export const threadsLength = (text: string): number => threadsLengthUpTo(text, Infinity)
