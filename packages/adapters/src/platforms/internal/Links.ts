/**
 * The links a post's text carries, found the way Bluesky's own client finds them
 * (`bluesky-social/atproto` `packages/api/src/rich-text/detection.ts`): `http(s)://` URLs, and bare
 * domains (`example.com/path`) whose top-level domain is a real one, read as `https://`. Trailing
 * punctuation (`.`, `,`, `;`, `!`, `?`, and a `)` without its `(`) is left out of the link.
 *
 * Shared by Bluesky's rich-text facets and by the link previews of Bluesky, LinkedIn and Threads, so
 * a link is the same link on every platform.
 */

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

/** One link in a text: the URL it opens, and where it stands (UTF-16 indexes, `end` exclusive). */
export interface Link {
  readonly uri: string
  readonly start: number
  readonly end: number
}

const urlRegex = /(^|\s|\()((https?:\/\/[\S]+)|((?<domain>[a-z][a-z0-9]*(\.[a-z0-9]+)+)[\S]*))/gim

/** Every link of `text`, in order. */
export const find = (text: string): ReadonlyArray<Link> => {
  const found: Array<Link> = []
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
    found.push({ uri, start, end })
  }
  return found
}

/** The first link of `text`, if it has one: the one a link preview shows. */
export const first = (text: string): string | undefined => find(text)[0]?.uri
