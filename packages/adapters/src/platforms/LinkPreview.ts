/**
 * The link preview of a post whose text carries a link and no media: the page's title, description and
 * image, for the platforms whose API takes the card from the client rather than reading the page
 * itself (Bluesky's `app.bsky.embed.external`, LinkedIn's `content.article`). The link is the text's
 * first (`internal/Links`, the same finder Bluesky's facets use).
 *
 * The page and its image are read through a `UrlFetcher` (the media importer's, behind the same
 * address guard), each with a byte cap and the whole card under one time cap. A card is a nicety:
 * anything that goes wrong gives no card (or no thumbnail), never a failed post.
 */
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Links from "./internal/Links.js"

/** At most this much of the page is read (the `<head>` is near the top). */
export const maxPageBytes = 512 * 1024
/** Page and thumbnail together. */
export const defaultTimeout = Duration.seconds(8)
export const maxTitle = 300
export const maxDescription = 1000

/** What thumbnail a platform takes. */
export interface ThumbRules {
  /** Larger images leave the card without a thumbnail. */
  readonly maxBytes: number
  /** MIME types the platform takes for it. */
  readonly types: ReadonlyArray<string>
}

export interface PageCard {
  readonly title: string
  readonly description: string
  /** Absolute http(s) URL of the page's image, if it names one. */
  readonly image: Option.Option<string>
}

export interface LinkCard {
  readonly uri: string
  readonly title: string
  readonly description: string
  readonly thumb: Option.Option<{ readonly bytes: Uint8Array; readonly mimeType: string }>
}

const entities: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " }

const decode = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#")) {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return entities[name.toLowerCase()] ?? whole
  }).replace(/\s+/g, " ").trim()

const attribute = (tag: string, name: string): string | undefined => {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag)
  return match === null ? undefined : match[1] ?? match[2] ?? match[3]
}

/** The page's Open Graph title, description and image (else `<title>` and `meta name=description`). */
export const parsePage = (html: string, pageUrl: string): PageCard => {
  const metas = new Map<string, string>()
  for (const match of html.matchAll(/<meta\b[^>]*>/gi)) {
    const key = (attribute(match[0], "property") ?? attribute(match[0], "name"))?.toLowerCase()
    const content = attribute(match[0], "content")
    if (key !== undefined && content !== undefined && !metas.has(key)) metas.set(key, decode(content))
  }
  const titleTag = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]
  const title = metas.get("og:title") ?? metas.get("twitter:title") ?? (titleTag === undefined ? "" : decode(titleTag))
  const description = metas.get("og:description") ?? metas.get("twitter:description") ?? metas.get("description") ?? ""
  const rawImage = metas.get("og:image") ?? metas.get("og:image:url") ?? metas.get("twitter:image")
  let image = Option.none<string>()
  if (rawImage !== undefined && rawImage !== "") {
    try {
      const url = new URL(rawImage, pageUrl)
      if (url.protocol === "https:" || url.protocol === "http:") image = Option.some(url.toString())
    } catch {
      // an unusable image URL: no thumbnail
    }
  }
  return { title: title.slice(0, maxTitle), description: description.slice(0, maxDescription), image }
}

/** Reads at most `cap` bytes; `none` when the body is longer and `whole` is asked for. */
const readCapped = (body: Stream.Stream<Uint8Array, unknown>, cap: number, whole: boolean) =>
  Effect.gen(function*() {
    const chunks = yield* Stream.runFoldWhile(
      body,
      { parts: [] as Array<Uint8Array>, size: 0 },
      (acc) => acc.size <= cap,
      (acc, chunk) => ({ parts: [...acc.parts, chunk], size: acc.size + chunk.length })
    )
    if (whole && chunks.size > cap) return Option.none<Uint8Array>()
    const out = new Uint8Array(Math.min(chunks.size, cap))
    let offset = 0
    for (const part of chunks.parts) {
      const take = part.subarray(0, out.length - offset)
      out.set(take, offset)
      offset += take.length
      if (offset >= out.length) break
    }
    return Option.some(out)
  })

const mimeOf = (contentType: Option.Option<string>): string =>
  Option.getOrElse(contentType, () => "").split(";")[0]!.trim().toLowerCase()

/**
 * Fetches the card of `uri`: its page (HTML only) and, when it names one, its image (a type `thumb`
 * allows, within its byte cap). `none` when the page cannot be read or says nothing.
 */
export const fetchCard = (
  fetcher: UrlFetcher["Type"],
  uri: string,
  options: { readonly label: string; readonly thumb: ThumbRules; readonly timeout?: Duration.DurationInput }
): Effect.Effect<Option.Option<LinkCard>> =>
  Effect.gen(function*() {
    const page = yield* fetcher.fetch(uri)
    const pageType = mimeOf(page.contentType)
    if (pageType !== "text/html" && pageType !== "application/xhtml+xml") return Option.none()
    const html = new TextDecoder().decode(Option.getOrThrow(yield* readCapped(page.body, maxPageBytes, false)))
    const card = parsePage(html, uri)
    if (card.title === "" && card.description === "") return Option.none()
    const thumb = Option.isNone(card.image)
      ? Option.none()
      : yield* fetchThumb(fetcher, card.image.value, options.thumb)
    return Option.some({ uri, title: card.title, description: card.description, thumb })
  }).pipe(
    Effect.scoped,
    Effect.timeout(options.timeout ?? defaultTimeout),
    Effect.catchAllCause((cause) =>
      Effect.logDebug(`${options.label}: no link preview`, cause).pipe(Effect.as(Option.none<LinkCard>()))
    )
  )

const fetchThumb = (fetcher: UrlFetcher["Type"], url: string, rules: ThumbRules) =>
  Effect.gen(function*() {
    const image = yield* fetcher.fetch(url)
    const mimeType = mimeOf(image.contentType)
    if (!rules.types.includes(mimeType)) return Option.none()
    if (Option.isSome(image.contentLength) && image.contentLength.value > rules.maxBytes) return Option.none()
    const bytes = yield* readCapped(image.body, rules.maxBytes, true)
    return Option.map(bytes, (b) => ({ bytes: b, mimeType }))
  }).pipe(
    Effect.scoped,
    Effect.orElseSucceed(() => Option.none<{ readonly bytes: Uint8Array; readonly mimeType: string }>())
  )

/** The card of the first link of `text`; `none` when the text has no link or its page gives no card. */
export const ofText = (
  fetcher: UrlFetcher["Type"],
  text: string,
  options: { readonly label: string; readonly thumb: ThumbRules; readonly timeout?: Duration.DurationInput }
): Effect.Effect<Option.Option<LinkCard>> => {
  const link = Links.first(text)
  return link === undefined ? Effect.succeed(Option.none()) : fetchCard(fetcher, link, options)
}
