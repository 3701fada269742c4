/**
 * A large video goes out through the sandbox and through chunked protocols on
 * loopback while the process's memory stays bounded far below the file's size. The file is sparse
 * (a real MP4: ftyp, a 256 MiB mdat of zeros that takes no disk, then moov), so it is cheap to make.
 * The meter is shown to notice a whole read, so a path that collects the file fails the test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { MediaId } from "@herald/core/kernel/Ids"
import type { MediaRef } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import * as Fs from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import * as FileBlobStore from "../../src/media/FileBlobStore.js"
import * as MediaBytes from "../../src/platforms/internal/MediaBytes.js"
import { collectBytes } from "../../src/platforms/internal/PlatformHttp.js"
import * as Sandbox from "../../src/platforms/Sandbox.js"
import * as X from "../../src/platforms/X.js"
import * as YouTube from "../../src/platforms/YouTube.js"
import { part, request } from "../platforms/fixtures.js"
import { movie } from "../support/MediaFixtures.js"

const MiB = 1024 * 1024
const mediaDataBytes = 256 * MiB
/** Growth of heapUsed + arrayBuffers allowed while a publish runs: generous, and far below the file. */
const bound = 64 * MiB

const key = "org/large.mp4"

/** ftyp, a sparse mdat of `mediaDataBytes` zeros, then moov (a recorder without fast start). */
const writeLargeMovie = async (path: string): Promise<{ readonly size: number }> => {
  const small = movie({ width: 1080, height: 1920, durationMs: 60_000, mediaDataFirst: 0 })
  const view = new DataView(small.buffer, small.byteOffset, small.byteLength)
  const ftypLength = view.getUint32(0)
  const moov = small.subarray(ftypLength + 8)
  const header = new Uint8Array(8)
  new DataView(header.buffer).setUint32(0, 8 + mediaDataBytes)
  header.set([0x6d, 0x64, 0x61, 0x74], 4) // "mdat"
  const handle = await Fs.open(path, "w")
  try {
    await handle.write(small.subarray(0, ftypLength), 0, ftypLength, 0)
    await handle.write(header, 0, 8, ftypLength)
    await handle.write(moov, 0, moov.length, ftypLength + 8 + mediaDataBytes)
  } finally {
    await handle.close()
  }
  return { size: ftypLength + 8 + mediaDataBytes + moov.length }
}

const sha256Of = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = createHash("sha256")
    createReadStream(path).on("data", (c) => hash.update(c)).on("end", () => resolve(hash.digest("hex"))).on(
      "error",
      reject
    )
  })

const footprint = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

// Full collections on demand (below), so that the meter sees what is held rather than garbage.
v8.setFlagsFromString("--expose-gc")
const collectGarbage = vm.runInNewContext("gc") as () => void

/**
 * Runs `effect` while watching memory (heapUsed + arrayBuffers) every 5 ms; answers its result and the
 * peak growth of live memory over the start. Whenever the figure has grown a quarter bound since the
 * last look (or half a second passed) it is read again after a full collection, and only those
 * readings count: garbage not yet swept is left out, what is still held is not.
 */
const metered = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    collectGarbage()
    const start = footprint()
    let peak = start
    let threshold = start + bound / 4
    let last = Date.now()
    const sample = (force: boolean) => {
      if (!force && footprint() <= threshold && Date.now() - last < 500) return
      collectGarbage()
      const now = footprint()
      peak = Math.max(peak, now)
      threshold = now + bound / 4
      last = Date.now()
    }
    const timer = setInterval(() => sample(false), 5)
    const result = yield* effect.pipe(Effect.ensuring(Effect.sync(() => clearInterval(timer))))
    sample(true)
    const growth = peak - start
    console.log(
      `memory growth ${(growth / MiB).toFixed(1)} MiB (bound ${bound / MiB} MiB, file ${mediaDataBytes / MiB} MiB)`
    )
    return { result, growth }
  })

const fixture = Effect.gen(function*() {
  const directory = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "herald-streamed-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  const blobs = yield* FileBlobStore.make({ directory })
  yield* Effect.promise(() => Fs.mkdir(Path.join(directory, "org"), { recursive: true }))
  const path = Path.join(directory, key)
  const { size } = yield* Effect.promise(() => writeLargeMovie(path))
  const sha256 = yield* Effect.promise(() => sha256Of(path))
  // As the dispatcher's media path hands it to clients: streamed, with byte ranges.
  const ref: MediaRef = {
    id: MediaId.make("00000000-0000-4000-8000-00000000abcd"),
    mimeType: "video/mp4",
    kind: "video",
    size,
    filename: "large.mp4",
    bytes: blobs.get(key),
    range: (start, end) => blobs.range(key, start, end),
    publicUrl: Option.none()
  }
  return { ref, sha256, size }
})

/** A loopback server that handles one request at a time and never keeps a body past its request. */
const loopback = (handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => handle(req, Buffer.concat(chunks), res))
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({
            url: `http://127.0.0.1:${port}`,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          })
        })
      })
    ),
    (server) => Effect.promise(() => server.close())
  )

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

describe("a large video is published as a stream", () => {
  it.scoped(
    "the meter notices a whole read: collecting the file grows memory past the bound",
    () =>
      Effect.gen(function*() {
        const { ref, size } = yield* fixture
        const { growth, result } = yield* metered(collectBytes(ref.bytes, "large"))
        expect(result.byteLength).toBe(size)
        expect(growth).toBeGreaterThan(bound)
      }),
    { timeout: 120_000 }
  )

  it.scoped(
    "through the sandbox: every byte is read (size and SHA-256 journaled), memory stays bounded",
    () =>
      Effect.gen(function*() {
        const { ref, sha256, size } = yield* fixture
        const sent: Array<Sandbox.SandboxSend> = []
        const client = Sandbox.make("tiktok", { onSend: (s) => Effect.sync(() => sent.push(s)) })
        const { growth } = yield* metered(
          client.publish(request({ platform: "tiktok", credentials: {}, main: part("big", [ref]) }))
        )
        expect(sent[0]?.media).toEqual([{ id: ref.id, mimeType: "video/mp4", size, sha256 }])
        expect(growth).toBeLessThan(bound)
      }),
    { timeout: 120_000 }
  )

  it.scoped(
    "through YouTube's resumable protocol: 2 MiB ranges, the bytes arrive whole, memory stays bounded",
    () =>
      Effect.gen(function*() {
        const { ref, sha256, size } = yield* fixture
        const hash = createHash("sha256")
        let received = 0
        let puts = 0
        const server = yield* loopback((req, body, res) => {
          if (req.method === "POST") {
            return json(res, 200, {}, { location: `http://${req.headers.host}/session/1` })
          }
          const range = /bytes (\d+)-(\d+)\/(\d+)/.exec(String(req.headers["content-range"]))
          if (req.method !== "PUT" || range === null || Number(range[1]) !== received) return json(res, 400, {})
          puts++
          hash.update(body)
          received += body.length
          if (received < size) {
            res.writeHead(308, { range: `bytes=0-${received - 1}` })
            return res.end()
          }
          return json(res, 200, { id: "vid1", status: { uploadStatus: "uploaded", privacyStatus: "public" } })
        })
        const client = yield* YouTube.make({ apiUrl: server.url, chunkSize: 2 * MiB }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const { growth, result } = yield* metered(
          client.publish(request({ platform: "youtube", credentials: { access_token: "t" }, main: part("big", [ref]) }))
        )
        expect(received).toBe(size)
        expect(hash.digest("hex")).toBe(sha256)
        expect(puts).toBe(Math.ceil(size / (2 * MiB)))
        // A vertical minute-long video is a Short: its moov (after the 256 MiB mdat) was read by ranges.
        expect(result.platformPostUrl).toBe("https://youtube.com/shorts/vid1")
        expect(growth).toBeLessThan(bound)
      }),
    { timeout: 180_000 }
  )

  it.scoped(
    "through X's chunked APPEND (multipart segments streamed from byte ranges), memory stays bounded",
    () =>
      Effect.gen(function*() {
        const { ref, sha256, size } = yield* fixture
        const hash = createHash("sha256")
        let received = 0
        let segments = 0
        let fault: string | undefined
        const server = yield* loopback((req, body, res) => {
          const path = new URL(req.url ?? "/", "http://x").pathname
          if (path === "/2/media/upload/initialize") return json(res, 200, { data: { id: "77" } })
          if (path === "/2/media/upload/77/append") {
            void new Request("http://fake.invalid/", {
              method: "POST",
              headers: { "content-type": String(req.headers["content-type"]) },
              body
            }).formData().then(async (form) => {
              const index = form.get("segment_index")
              const media = form.get("media")
              if (index !== String(segments) || media === null || typeof media === "string") fault = `segment ${index}`
              else {
                const bytes = new Uint8Array(await media.arrayBuffer())
                hash.update(bytes)
                received += bytes.length
                segments++
              }
              res.writeHead(204)
              res.end()
            })
            return
          }
          if (path === "/2/media/upload/77/finalize") return json(res, 200, { data: { id: "77" } })
          if (path === "/2/tweets") return json(res, 201, { data: { id: "900" } })
          return json(res, 404, {})
        })
        const chunkSize = MiB
        const client = yield* X.make({ apiUrl: server.url, chunkSize }).pipe(Effect.provide(FetchHttpClient.layer))
        const { growth, result } = yield* metered(
          client.publish(
            request({ platform: "x", credentials: { access_token: "t", username: "u" }, main: part("big", [ref]) })
          )
        )
        expect(fault).toBeUndefined()
        expect(result.platformPostId).toBe("900")
        expect(segments).toBe(Math.ceil(size / chunkSize))
        expect(received).toBe(size)
        expect(hash.digest("hex")).toBe(sha256)
        expect(growth).toBeLessThan(bound)
      }),
    { timeout: 180_000 }
  )
})

describe("MediaBytes", () => {
  it.effect("sliceStream takes bytes start..end across chunk borders and stops pulling after end", () =>
    Effect.gen(function*() {
      let pulled = 0
      const source = Stream.range(0, 9).pipe(
        Stream.map((i) => Uint8Array.from([i * 3, i * 3 + 1, i * 3 + 2])),
        Stream.tap(() => Effect.sync(() => pulled++))
      )
      const out = yield* collectBytes(MediaBytes.sliceStream(source, 4, 11), "s")
      expect([...out]).toEqual([4, 5, 6, 7, 8, 9, 10])
      expect(pulled).toBeLessThanOrEqual(5)
    }))

  it.effect("multipart streams fields and files that a standard form parser reads back, with the exact length", () =>
    Effect.gen(function*() {
      const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => i % 251)
      const ref: MediaRef = {
        id: MediaId.make("00000000-0000-4000-8000-000000000001"),
        mimeType: "image/png",
        kind: "image",
        size: bytes.length,
        filename: "a \"quoted\" name.png",
        bytes: Stream.make(bytes.subarray(0, 1000), bytes.subarray(1000)),
        publicUrl: Option.none()
      }
      const body = MediaBytes.multipart([MediaBytes.field("caption", "héllo"), MediaBytes.file("file", ref)])
      if (body._tag !== "Stream") return expect.fail("a streamed body")
      const raw = yield* collectBytes(body.stream, "form")
      expect(body.contentLength).toBe(raw.length)
      const form = yield* Effect.promise(() =>
        new Request("http://fake.invalid/", {
          method: "POST",
          headers: { "content-type": body.contentType },
          body: raw
        })
          .formData()
      )
      expect(form.get("caption")).toBe("héllo")
      const file = form.get("file") as File
      // Quotes are escaped on the wire as browsers do, and read back as they were.
      expect(file.name).toBe("a \"quoted\" name.png")
      expect(file.type).toBe("image/png")
      expect(new Uint8Array(yield* Effect.promise(() => file.arrayBuffer()))).toEqual(bytes)
    }))
})
