/**
 * Bluesky rich-text facets (platform reference §2), after `bluesky-social/atproto`
 * `packages/api/src/rich-text/detection.ts`: links, mentions and hashtags found in the text, with
 * their spans as UTF-8 byte offsets (byteStart inclusive, byteEnd exclusive).
 *
 * Mentions are detected with the handle and resolved to a DID afterwards; an unresolved mention
 * is dropped.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

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

/**
 * Top-level domains a bare domain or a handle may end in. atproto checks the full IANA list (the
 * `tlds` package, not a dependency here); this approximation takes every two-letter country code
 * and the generic TLDs in common use.
 */
const genericTlds = new Set(
  ("com net org edu gov mil int info biz name pro aero coop museum mobi asia tel travel jobs cat xxx post " +
    "app dev io ai page blog art news social online site website tech store shop xyz club live life world " +
    "space today email cloud digital network media studio design agency company solutions services systems " +
    "software host link click zone one top icu vip win fun work city global group team center academy " +
    "community foundation institute university school education science bio eco green energy health care " +
    "law legal finance money bank capital fund pub bar cafe restaurant wine beer pizza food games game " +
    "gg fm tv me co chat wiki photo photos pics video movie film music band radio events tickets travel " +
    "tours holiday house home land estate realty rentals garden farm pet dog cat fashion style beauty " +
    "fit fitness yoga run bike golf football soccer tennis rocks ninja guru expert review reviews plus " +
    "systems tools codes engineering build builders construction partners ventures consulting management " +
    "marketing training report press foo moe lol wtf boo day zip mov meme nyc london berlin paris tokyo " +
    "test bsky")
    .split(/\s+/)
    .filter((t) => /^[a-z]+$/.test(t))
)

export const isValidDomain = (domain: string): boolean => {
  const labels = domain.toLowerCase().split(".")
  if (labels.length < 2 || labels.some((l) => l.length === 0)) return false
  const tld = labels[labels.length - 1]!
  if (/^[a-z]{2}$/.test(tld)) return true
  if (/^xn--[a-z0-9-]+$/.test(tld)) return true
  return genericTlds.has(tld)
}

const mentionRegex = /(^|\s|\()(@)([a-zA-Z0-9.-]+)(\b)/g
const urlRegex = /(^|\s|\()((https?:\/\/[\S]+)|((?<domain>[a-z][a-z0-9]*(\.[a-z0-9]+)+)[\S]*))/gim
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

  for (const match of text.matchAll(urlRegex)) {
    const raw = match[2]!
    let uri = raw
    if (!/^https?:\/\//i.test(uri)) {
      const domain = match.groups?.["domain"]
      if (domain === undefined || !isValidDomain(domain)) continue
      uri = `https://${uri}`
    }
    const start = text.indexOf(raw, match.index)
    let end = start + raw.length
    if (/[.,;!?]$/.test(uri)) {
      uri = uri.slice(0, -1)
      end--
    }
    if (/[)]$/.test(uri) && !uri.includes("(")) {
      uri = uri.slice(0, -1)
      end--
    }
    found.push({
      _tag: "Facet",
      facet: { index: slice(start, end), features: [{ $type: "app.bsky.richtext.facet#link", uri }] }
    })
  }

  for (const match of text.matchAll(tagRegex)) {
    const captured = match[1]!
    const tag = captured.trim().replace(trailingPunctuation, "")
    if (tag.length <= 1 || tag.length > 66) continue
    const start = match.index + match[0].length - captured.length
    found.push({
      _tag: "Facet",
      facet: { index: slice(start, start + tag.length), features: [{ $type: "app.bsky.richtext.facet#tag", tag: tag.slice(1) }] }
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
