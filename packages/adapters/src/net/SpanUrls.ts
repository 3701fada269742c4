/**
 * URLs as spans may keep them: a platform's API path can hold a credential (Telegram's
 * `/bot<id>:<secret>/`, a Discord webhook's token), and query strings carry codes, tokens and
 * signatures. Spans keep the origin and the route's shape: query values and token-like path segments
 * are replaced, ids (a UUID, a numeric id) stay.
 */

export const redacted = "{redacted}"

/** A path segment that may be a credential: a `bot<id>:<secret>` token, or a long opaque value. */
const secretLike = (segment: string): boolean => segment.includes(":") || segment.length >= 40

/** The path with its credential-like segments replaced. */
export const scrubPath = (path: string): string =>
  path.split("/").map((segment) => (secretLike(segment) ? redacted : segment)).join("/")

/** The query with every value replaced (the names stay). */
export const scrubQuery = (query: string): string =>
  query.split("&").filter((p) => p !== "").map((pair) => {
    const at = pair.indexOf("=")
    return at < 0 ? pair : `${pair.slice(0, at)}=${redacted}`
  }).join("&")

/** Origin, scrubbed path and scrubbed query; `{redacted}` when it does not parse. */
export const scrubUrl = (raw: string): string => {
  try {
    const url = new URL(raw)
    const query = scrubQuery(url.search.slice(1))
    return `${url.protocol}//${url.host}${scrubPath(url.pathname)}${query === "" ? "" : `?${query}`}`
  } catch {
    return redacted
  }
}
