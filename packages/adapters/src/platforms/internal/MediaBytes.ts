/**
 * Media bytes as the platform clients send them: streamed request bodies (whole, a byte range, or a
 * multipart form around them) with their exact length, so that no publish path holds a whole medium
 * in memory. Each body re-reads the blob store when it is sent again (a retry, a fresh session).
 */
import * as HttpBody from "@effect/platform/HttpBody"
import type { MediaRef, PublishError } from "@herald/core/platforms/Platforms"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import * as Mp4 from "./Mp4.js"
import { collectBytes } from "./PlatformHttp.js"

/** Bytes `start` to `end` (exclusive) of a stream, holding at most one of its chunks; stops pulling at `end`. */
export const sliceStream = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  start: number,
  end: number
): Stream.Stream<Uint8Array, E> =>
  Stream.suspend(() => {
    let position = 0
    return bytes.pipe(
      Stream.takeWhile(() => position < end),
      Stream.map((chunk) => {
        const from = position
        position += chunk.byteLength
        const a = Math.max(start - from, 0)
        const b = Math.min(end - from, chunk.byteLength)
        return a < b ? chunk.subarray(a, b) : undefined
      }),
      Stream.filter((chunk): chunk is Uint8Array => chunk !== undefined)
    )
  })

/** Bytes `start` to `end` (exclusive) of a medium: read directly when the store can seek, else sliced. */
export const rangeOf = (media: MediaRef, start: number, end: number): Stream.Stream<Uint8Array, unknown> =>
  media.range !== undefined ? media.range(start, end) : sliceStream(media.bytes, start, end)

/** The whole medium as a request body of its known length. */
export const body = (media: MediaRef, contentType: string = media.mimeType): HttpBody.HttpBody =>
  HttpBody.stream(media.bytes, contentType, media.size)

/** Bytes `start` to `end` (exclusive) as a request body: one chunk of a chunked upload. */
export const rangeBody = (
  media: MediaRef,
  start: number,
  end: number,
  contentType: string = media.mimeType
): HttpBody.HttpBody => HttpBody.stream(rangeOf(media, start, end), contentType, end - start)

/** One part of a multipart form: a text field, or a file streamed with its exact size. */
export type Part =
  | { readonly _tag: "Field"; readonly name: string; readonly value: string }
  | {
    readonly _tag: "File"
    readonly name: string
    readonly filename: string
    readonly contentType: string
    readonly size: number
    readonly bytes: Stream.Stream<Uint8Array, unknown>
  }

export const field = (name: string, value: string): Part => ({ _tag: "Field", name, value })

export const file = (name: string, media: MediaRef, filename: string = media.filename): Part => ({
  _tag: "File",
  name,
  filename,
  contentType: media.mimeType,
  size: media.size,
  bytes: media.bytes
})

/** A byte range of a medium as a file part (X's APPEND segments). */
export const fileRange = (name: string, media: MediaRef, start: number, end: number, filename: string): Part => ({
  _tag: "File",
  name,
  filename,
  contentType: "application/octet-stream",
  size: end - start,
  bytes: rangeOf(media, start, end)
})

// As the WHATWG form encoder escapes names and filenames.
const quoted = (text: string): string => text.replace(/\r/g, "%0D").replace(/\n/g, "%0A").replace(/"/g, "%22")

/**
 * A `multipart/form-data` body that streams its files (the platform's `FormData` with `Blob`s would
 * need every file in memory), with the exact `Content-Length`.
 */
export const multipart = (parts: ReadonlyArray<Part>): HttpBody.HttpBody => {
  const encoder = new TextEncoder()
  const boundary = `----HeraldFormBoundary${randomBytes(12).toString("hex")}`
  const pieces: Array<Stream.Stream<Uint8Array, unknown>> = []
  let length = 0
  const text = (value: string) => {
    const bytes = encoder.encode(value)
    length += bytes.byteLength
    pieces.push(Stream.succeed(bytes))
  }
  for (const part of parts) {
    if (part._tag === "Field") {
      text(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"\r\n\r\n${part.value}\r\n`)
    } else {
      text(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"; ` +
          `filename="${quoted(part.filename)}"\r\nContent-Type: ${part.contentType}\r\n\r\n`
      )
      length += part.size
      pieces.push(part.bytes)
      text("\r\n")
    }
  }
  text(`--${boundary}--\r\n`)
  return HttpBody.stream(
    Stream.concatAll(Chunk.fromIterable(pieces)),
    `multipart/form-data; boundary=${boundary}`,
    length
  )
}

const maxBoxes = 4096
const maxMoovBytes = 64 * 1024 * 1024

/**
 * A video's display size and duration: the medium's own when known, else its `moov` box, found by
 * reading the top-level box headers as byte ranges (a `moov` after the media data is reached without
 * reading the data) and read alone.
 */
export const videoInfoOf = (media: MediaRef): Effect.Effect<Mp4.VideoInfo | undefined, PublishError> =>
  Effect.gen(function*() {
    if (media.width !== undefined && media.height !== undefined && media.durationMs !== undefined) {
      return { width: media.width, height: media.height, durationSeconds: media.durationMs / 1000 }
    }
    const label = `medium ${media.id}`
    let offset = 0
    for (let n = 0; n < maxBoxes && offset + 8 <= media.size; n++) {
      const header = yield* collectBytes(rangeOf(media, offset, Math.min(offset + 16, media.size)), label)
      if (header.byteLength < 8) return undefined
      const view = new DataView(header.buffer, header.byteOffset, header.byteLength)
      let size = view.getUint32(0)
      const type = String.fromCharCode(header[4]!, header[5]!, header[6]!, header[7]!)
      if (size === 1) {
        if (header.byteLength < 16) return undefined
        size = Number(view.getBigUint64(8))
      } else if (size === 0) {
        size = media.size - offset
      }
      if (size < 8) return undefined
      if (type === "moov") {
        if (size > maxMoovBytes) return undefined
        return Mp4.videoInfo(yield* collectBytes(rangeOf(media, offset, Math.min(offset + size, media.size)), label))
      }
      offset += size
    }
    return undefined
  })
