/**
 * The keys every blob store accepts: `/`-separated segments of letters, digits, `.`, `_` and `-`,
 * none starting with `.`. One rule for every store, so a key valid on the local disk is valid in a
 * bucket and the other way round, and a key can never leave the store's directory or prefix.
 */
import * as Data from "effect/Data"
import * as Path from "node:path"

/** A key the store refuses: empty, absolute, with `..`, `.`-prefixed or unusual segments, or NUL. */
export class InvalidBlobKey extends Data.TaggedError("InvalidBlobKey")<{ readonly reason: string }> {
  override get message() {
    return `invalid blob key: ${this.reason}`
  }
}

export const maxKeyLength = 512

const segmentPattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

/**
 * Keys are `/`-separated segments of letters, digits, `.`, `_` and `-`. A segment may not start with
 * `.` (which rules out `.` and `..`, and keeps keys apart from the file store's `.tmp-*` files).
 * Anything else (absolute paths, backslashes, NUL, empty segments) is refused.
 */
export const validateKey = (key: string): InvalidBlobKey | undefined => {
  if (key.length === 0) return new InvalidBlobKey({ reason: "empty" })
  if (key.length > maxKeyLength) return new InvalidBlobKey({ reason: `longer than ${maxKeyLength} characters` })
  if (key.includes("\0")) return new InvalidBlobKey({ reason: "contains NUL" })
  if (key.startsWith("/") || Path.isAbsolute(key)) return new InvalidBlobKey({ reason: "absolute path" })
  for (const segment of key.split("/")) {
    if (segment === "..") return new InvalidBlobKey({ reason: "contains .." })
    if (!segmentPattern.test(segment)) return new InvalidBlobKey({ reason: "unexpected segment or character" })
  }
  return undefined
}

/** The URL path of a valid key: each segment percent-encoded, joined by `/`. */
export const urlPath = (key: string): string => key.split("/").map(encodeURIComponent).join("/")
