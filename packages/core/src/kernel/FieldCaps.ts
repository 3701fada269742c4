/**
 * Caps on the size of request fields, applied when a body is decoded, before any other work: far
 * above every platform's limit (the longest caption anywhere is Facebook's 63,206 characters), so they
 * never refuse a real post, only input whose size alone would make the work behind it costly (a 10 MB
 * draft was stored). A capped field over its cap is a `validation_error` that names the cap and never
 * quotes the value.
 */
import * as Schema from "effect/Schema"

/** Post text: `content`, `platform_content.*.content`, `threadPosts[].content` (UTF-16 units). */
export const maxContent = 100_000

/** Short identifiers and labels: `idempotency_key`, a webhook's `name`, a filename. */
export const maxLabel = 255

/** A timestamp or time-zone name. */
export const maxInstant = 100

/** A URL. */
export const maxUrl = 2_048

/** The parts of a thread (`threadPosts`). */
export const maxThreadPosts = 100

const tooLongMessage = (max: number) => `At most ${max} characters`

/** A string of at most `max` UTF-16 units (checked in constant time). */
export const cappedString = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => tooLongMessage(max) }))

/** The issues of a list of texts over `maxContent`, at `[index, ...path]`. */
export const contentIssues = (
  items: ReadonlyArray<{ readonly key: PropertyKey; readonly text: string; readonly field: string }>
): ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> =>
  items.filter((item) => item.text.length > maxContent).map((item) => ({
    path: [item.key, item.field],
    message: tooLongMessage(maxContent)
  }))
