/**
 * The URL importer against loopback HTTP servers: bytes arrive as sent; without the private switch a
 * loopback URL is refused before any connection; a public-looking host whose DNS answer is private is
 * refused; a redirect to a refused address is refused; redirects are capped; the whole exchange is
 * time-capped; the body is pulled only as far as the consumer reads.
 */
import { describe, expect, it } from "@effect/vitest"
import type { UrlFetchError } from "@herald/core/media/MediaLibrary"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as UrlImporter from "../../src/media/UrlImporter.js"
import * as Fixtures from "../support/MediaFixtures.js"

type Handler = (req: Http.IncomingMessage, res: Http.ServerResponse) => void

const withServer = <A, E>(handler: Handler, use: (base: string, hits: Array<string>) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.async<{ server: Http.Server; hits: Array<string> }>((resume) => {
      const hits: Array<string> = []
      const server = Http.createServer((req, res) => {
        hits.push(req.url ?? "")
        handler(req, res)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, hits })))
    }),
    ({ hits, server }) => use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const collect = (stream: Stream.Stream<Uint8Array, UrlFetchError>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(Chunk.toArray(chunks)))

const failureOf = <A>(exit: Exit.Exit<A, UrlFetchError>): UrlFetchError => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${String(exit)}`)
  return exit.cause.error
}

const open = UrlImporter.make({ allowPrivate: true })

describe("UrlImporter", () => {
  it.live("fetches the bytes with type, length and filename (Content-Disposition, else the path)", () => {
    const png = Fixtures.png(7, 7)
    return withServer((req, res) => {
      if (req.url === "/named") res.setHeader("content-disposition", "attachment; filename=\"holiday.png\"")
      res.writeHead(200, { "content-type": "image/png", "content-length": String(png.length) })
      res.end(png)
    }, (base) =>
      Effect.gen(function*() {
        const fetched = yield* Effect.scoped(Effect.flatMap(open.fetch(`${base}/pics/cat.png?x=1`), (f) =>
          Effect.map(collect(f.body), (bytes) => ({ ...f, bytes }))))
        expect(fetched.bytes.equals(Buffer.from(png))).toBe(true)
        expect(fetched.contentType).toEqual(Option.some("image/png"))
        expect(fetched.contentLength).toEqual(Option.some(png.length))
        expect(fetched.filename).toEqual(Option.some("cat.png"))
        const named = yield* Effect.scoped(open.fetch(`${base}/named`))
        expect(named.filename).toEqual(Option.some("holiday.png"))
      }))
  })

  it.live("without the switch, loopback is refused before any connection", () =>
    withServer((_req, res) => res.end("x"), (base, hits) =>
      Effect.gen(function*() {
        const refused = UrlImporter.make({ allowPrivate: false })
        const exit = yield* Effect.exit(Effect.scoped(refused.fetch(`${base}/a.png`)))
        expect(failureOf(exit).reason).toBe("refused")
        expect(hits).toEqual([])
      })))

  it.live("a host name resolving to a private address is refused", () =>
    Effect.gen(function*() {
      const importer = UrlImporter.make({
        allowPrivate: false,
        resolve: () => Promise.resolve([{ address: "10.0.0.7", family: 4 }])
      })
      const failure = failureOf(yield* Effect.exit(Effect.scoped(importer.fetch("https://cdn.example.com/a.png"))))
      expect(failure.reason).toBe("refused")
      expect(failure.message).toContain("cdn.example.com")
      const metadata = UrlImporter.make({ allowPrivate: true })
      const exit = yield* Effect.exit(Effect.scoped(metadata.fetch("http://169.254.169.254/latest/meta-data")))
      expect(failureOf(exit).reason).toBe("refused")
    }))

  it.live("every redirect hop is checked: a redirect to a refused address is refused", () =>
    withServer((req, res) => {
      if (req.url === "/to-metadata") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" })
        return res.end()
      }
      if (req.url === "/hop") {
        res.writeHead(301, { location: "/final.png" })
        return res.end()
      }
      res.writeHead(200, { "content-type": "image/png" })
      res.end(Fixtures.png(2, 2))
    }, (base, hits) =>
      Effect.gen(function*() {
        const followed = yield* Effect.scoped(Effect.flatMap(open.fetch(`${base}/hop`), (f) => collect(f.body)))
        expect(followed.equals(Buffer.from(Fixtures.png(2, 2)))).toBe(true)
        expect(hits).toEqual(["/hop", "/final.png"])
        const exit = yield* Effect.exit(Effect.scoped(open.fetch(`${base}/to-metadata`)))
        expect(failureOf(exit).reason).toBe("refused")
      })))

  it.live("redirects are capped; 0 follows none", () =>
    withServer((req, res) => {
      const n = Number(req.url?.slice(1) ?? "0")
      res.writeHead(302, { location: `/${n + 1}` })
      res.end()
    }, (base, hits) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Effect.scoped(open.fetch(`${base}/0`)))
        expect(failureOf(exit)).toMatchObject({ reason: "http_status", message: "more than 5 redirects" })
        expect(hits).toHaveLength(6)
        const none = UrlImporter.make({ allowPrivate: true, maxRedirects: 0 })
        expect(failureOf(yield* Effect.exit(Effect.scoped(none.fetch(`${base}/0`)))).reason).toBe("http_status")
      })))

  it.live("a non-2xx answer is http_status; a hanging body hits the time cap", () =>
    withServer((req, res) => {
      if (req.url === "/missing") {
        res.writeHead(404)
        return res.end()
      }
      res.writeHead(200, { "content-type": "image/png" })
      res.write(Fixtures.png(2, 2).subarray(0, 10)) // and never ends
    }, (base) =>
      Effect.gen(function*() {
        const missing = failureOf(yield* Effect.exit(Effect.scoped(open.fetch(`${base}/missing`))))
        expect(missing).toMatchObject({ reason: "http_status", message: "127.0.0.1 answered HTTP 404" })
        const quick = UrlImporter.make({ allowPrivate: true, timeout: "300 millis" })
        const exit = yield* Effect.exit(
          Effect.scoped(Effect.flatMap(quick.fetch(`${base}/slow`), (f) => collect(f.body)))
        )
        expect(failureOf(exit).reason).toBe("timeout")
      })))

  it.live("the body is pulled only as far as it is read (a 50 MB answer, 1 MB taken)", () => {
    const chunk = Buffer.alloc(64 * 1024, 7)
    let written = 0
    return withServer((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4" })
      const pump = () => {
        while (written < 50 * 1024 * 1024) {
          written += chunk.length
          if (!res.write(chunk)) return res.once("drain", pump)
        }
        res.end()
      }
      pump()
    }, (base) =>
      Effect.gen(function*() {
        const taken = yield* Effect.scoped(Effect.flatMap(open.fetch(`${base}/big.mp4`), (f) =>
          f.body.pipe(
            Stream.runFoldWhile(0, (n) => n < 1024 * 1024, (n, bytes) => n + bytes.length)
          )))
        expect(taken).toBeGreaterThanOrEqual(1024 * 1024)
        // Socket buffers hold a few MB at most; the server never got to write the 50 MB.
        expect(written).toBeLessThan(20 * 1024 * 1024)
      }))
  })
})
