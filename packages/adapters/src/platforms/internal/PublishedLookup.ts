/**
 * What the platform clients share when the engine asks whether an abandoned attempt reached the
 * platform (`PlatformClient.findPublished`): the window they search, how texts are compared, and how a
 * listing's candidates become an answer.
 *
 * - The window is the attempt's `[since, until]` widened by `skewMillis` on both sides: the platform's
 *   clock and ours differ, and the platform stamps a post when it stores it, not when it was sent.
 * - Texts are compared in a canonical form, since platforms hand back what they stored, not what was
 *   sent: HTML entities the platform escaped (`&amp;`, `&lt;`, `&gt;`) are read back, Unicode is NFC,
 *   runs of white space are one space, the ends are trimmed, and a URL's scheme is dropped (X answers
 *   a bare domain as `http://…`). Anything else that differs is another post.
 * - Absent is said only when the whole window was listed and nothing in it carries the text; an
 *   attempt without text (a video or image alone) cannot be told apart from another such post in the
 *   window, so a candidate without text there makes the answer Unknown rather than Found.
 */
import type { PublishedAnswer, PublishedLookup } from "@herald/core/platforms/Platforms"

/** How far the window is widened on each side. */
export const skewMillis = 60_000

export interface Window {
  readonly since: number
  readonly until: number
}

export const windowOf = (lookup: PublishedLookup): Window => ({
  since: lookup.since.epochMillis - skewMillis,
  until: lookup.until.epochMillis + skewMillis
})

export const inWindow = (window: Window, millis: number): boolean =>
  Number.isFinite(millis) && millis >= window.since && millis <= window.until

/** The canonical form two texts are compared in (see the module comment). */
export const canonical = (text: string): string =>
  text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .normalize("NFC")
    .replace(/\bhttps?:\/\//gi, "")
    .replace(/\s+/gu, " ")
    .trim()

export const sameText = (sent: string, stored: string): boolean => canonical(sent) === canonical(stored)

/** A post of the account's listing that falls inside the window. */
export interface Candidate {
  readonly id: string
  readonly url: string
  /** The text as the platform stores it (already expanded where the platform shortens links). */
  readonly text: string
}

/**
 * The answer from every candidate inside the window, once the listing covered the whole window:
 * the one carrying the text is Found; with no text sent, any text-less candidate makes it Unknown.
 */
export const answerFrom = (
  lookup: PublishedLookup,
  candidates: ReadonlyArray<Candidate>,
  platform: string
): PublishedAnswer => {
  const wanted = canonical(lookup.content)
  if (wanted === "") {
    return candidates.some((c) => canonical(c.text) === "")
      ? {
        _tag: "Unknown",
        reason: `${platform}: a post without text was published in the attempt's window; without text it cannot be ` +
          "told whether it is this attempt's"
      }
      : { _tag: "Absent" }
  }
  const found = candidates.find((c) => canonical(c.text) === wanted)
  return found === undefined
    ? { _tag: "Absent" }
    : { _tag: "Found", platformPostId: found.id, platformPostUrl: found.url }
}

/** The answer when the listing ran out of pages before it covered the window. */
export const tooMany = (platform: string, listed: number): PublishedAnswer => ({
  _tag: "Unknown",
  reason: `${platform}: more than ${listed} posts to look through since the attempt began`
})
