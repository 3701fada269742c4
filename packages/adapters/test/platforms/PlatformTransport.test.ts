import { describe, expect, it } from "@effect/vitest"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as MediaBytes from "../../src/platforms/internal/MediaBytes.js"
import * as PlatformTransport from "../../src/platforms/PlatformTransport.js"
import * as FakeServer from "./fakes/FakeServer.js"
import { bytesOf, media } from "./fixtures.js"

const video = media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(70_000, 3) })

/** A streamed upload (a byte range and a multipart form around a file, as the clients send them). */
const upload = (url: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const range = yield* client.execute(
      HttpClientRequest.put(`${url}/range`).pipe(HttpClientRequest.setBody(MediaBytes.rangeBody(video, 1000, 41_000)))
    )
    const form = yield* client.execute(
      HttpClientRequest.post(`${url}/form`).pipe(
        HttpClientRequest.setBody(MediaBytes.multipart([MediaBytes.field("a", "1"), MediaBytes.file("file", video)]))
      )
    )
    return [range.status, form.status]
  })

describe("the platform transport", () => {
  it.scopedLive("sends streamed bodies with their Content-Length, which the fakes require", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.scoped(() => ({ status: 200, body: {} }))
      const statuses = yield* upload(server.url).pipe(Effect.provide(PlatformTransport.layer))
      expect(statuses).toEqual([200, 200])
      expect(server.violations).toEqual([])
      expect(server.requests[0]!.headers["content-length"]).toBe("40000")
      expect(server.requests[0]!.body.byteLength).toBe(40_000)
      expect(Number(server.requests[1]!.headers["content-length"])).toBe(server.requests[1]!.body.byteLength)
      expect(server.requests[1]!.headers["transfer-encoding"]).toBeUndefined()
    }))

  it.scopedLive("the fetch-based client drops the length and goes chunked: every fake refuses that", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.scoped(() => ({ status: 200, body: {} }))
      const statuses = yield* upload(server.url).pipe(Effect.provide(FetchHttpClient.layer))
      expect(statuses).toEqual([400, 400])
      const violations = server.takeViolations()
      expect(violations.map((v) => v.path)).toEqual(["/range", "/form"])
      expect(violations[0]!.problems.join(" ")).toContain("Transfer-Encoding: chunked")
    }))

  it("a declared length that differs from the bytes received is a violation", () => {
    expect(FakeServer.contentLengthProblems({ "content-length": "10" }, 9)).toEqual([
      "Content-Length 10 but 9 bytes received"
    ])
    expect(FakeServer.contentLengthProblems({}, 5)).toEqual(["no Content-Length on a body of 5 bytes"])
    expect(FakeServer.contentLengthProblems({ "content-length": "5" }, 5)).toEqual([])
  })
})
