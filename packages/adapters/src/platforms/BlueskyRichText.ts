/**
 * Bluesky rich-text facets (platform reference §2), after `bluesky-social/atproto`
 * `packages/api/src/rich-text/detection.ts`: links, mentions and hashtags found in the text, with
 * their spans as UTF-8 byte offsets (byteStart inclusive, byteEnd exclusive). Links are found by
 * `internal/Links`, which the other platforms' link previews use too.
 *
 * Mentions are detected with the handle and resolved to a DID afterwards; an unresolved mention
 * is dropped.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Links from "./internal/Links.js"

export interface ByteSlice {
  readonly byteStart: number
  readonly byteEnd: number
}

export type Feature =
  | { readonly $type: "app.bsky.richtext.facet#link"; readonly uri: string }
  | { readonly $type: "app.bsky.richtext.facet#mention"; readonly did: string }
  | { readonly $type: "app.bsky.richtext.facet#tag"; readonly tag: string }

export interface Facet {
  readonly index: ByteSlice
  readonly features: ReadonlyArray<Feature>
}

/** A facet as detected: mentions still carry the handle, to be resolved. */
export type Detected =
  | { readonly _tag: "Facet"; readonly facet: Facet }
  | { readonly _tag: "Mention"; readonly index: ByteSlice; readonly handle: string }

const encoder = new TextEncoder()

export const utf8Length = (text: string): number => encoder.encode(text).length

/** The UTF-8 byte offset of a UTF-16 index into `text`. */
export const utf8Index = (text: string, utf16Index: number): number => utf8Length(text.slice(0, utf16Index))

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" })

export const graphemeLength = (text: string): number => {
  let n = 0
  for (const _ of segmenter.segment(text)) n++
  return n
}

export const isValidDomain = Links.isValidDomain

const mentionRegex = /(^|\s|\()(@)([a-zA-Z0-9.-]+)(\b)/g
const tagRegex =
  /(?:^|\s)(#[\p{L}\p{Emoji_Presentation}\p{Emoji_Modifier_Base}\p{Extended_Pictographic}][\p{L}\p{Emoji_Presentation}\p{Emoji_Modifier_Base}\p{Extended_Pictographic}\d_-]*)/giu
const trailingPunctuation = /\p{P}+$/u

/** Finds links, mentions and hashtags, each with its UTF-8 byte span, sorted by byteStart. */
export const detect = (text: string): ReadonlyArray<Detected> => {
  const found: Array<Detected> = []
  const slice = (start: number, end: number): ByteSlice => ({
    byteStart: utf8Index(text, start),
    byteEnd: utf8Index(text, end)
  })

  for (const match of text.matchAll(mentionRegex)) {
    const handle = match[3]!
    if (!isValidDomain(handle) && !handle.endsWith(".test")) continue
    const start = text.indexOf(handle, match.index) - 1
    found.push({ _tag: "Mention", index: slice(start, start + handle.length + 1), handle: handle.toLowerCase() })
  }

  for (const link of Links.find(text)) {
    found.push({
      _tag: "Facet",
      facet: {
        index: slice(link.start, link.end),
        features: [{ $type: "app.bsky.richtext.facet#link", uri: link.uri }]
      }
    })
  }

  for (const match of text.matchAll(tagRegex)) {
    const captured = match[1]!
    const tag = captured.trim().replace(trailingPunctuation, "")
    if (tag.length <= 1 || tag.length > 66) continue
    const start = match.index + match[0].length - captured.length
    found.push({
      _tag: "Facet",
      facet: {
        index: slice(start, start + tag.length),
        features: [{ $type: "app.bsky.richtext.facet#tag", tag: tag.slice(1) }]
      }
    })
  }

  return found.sort((a, b) => startOf(a) - startOf(b))
}

const startOf = (d: Detected): number => (d._tag === "Facet" ? d.facet.index.byteStart : d.index.byteStart)

/**
 * Turns detected spans into facets, resolving each distinct handle once through `resolve`; a
 * mention whose handle does not resolve is dropped.
 */
export const resolve = <E, R>(
  detected: ReadonlyArray<Detected>,
  resolveHandle: (handle: string) => Effect.Effect<Option.Option<string>, E, R>
): Effect.Effect<ReadonlyArray<Facet>, E, R> =>
  Effect.gen(function*() {
    const dids = new Map<string, Option.Option<string>>()
    const facets: Array<Facet> = []
    for (const item of detected) {
      if (item._tag === "Facet") {
        facets.push(item.facet)
        continue
      }
      let did = dids.get(item.handle)
      if (did === undefined) {
        did = yield* resolveHandle(item.handle)
        dids.set(item.handle, did)
      }
      if (Option.isSome(did)) {
        facets.push({ index: item.index, features: [{ $type: "app.bsky.richtext.facet#mention", did: did.value }] })
      }
    }
    return facets
  })
