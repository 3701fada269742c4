/**
 * What is the S3 store's own (the contract in BlobStores.test.ts covers what every store does): the
 * S3 operations it uses, its prefix, and the presigned links, all against a real S3-compatible
 * server (s3rver) that checks signatures and expiry.
 */
import { describe, expect, it } from "@effect/vitest"
import { PersistenceError } from "@herald/core/kernel/Errors"
import { BlobStore } from "@herald/core/media/BlobStore"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inspect } from "node:util"
import { afterAll } from "vitest"
import * as S3BlobStore from "../../src/media/S3BlobStore.js"
import { bytesOf, chunked, collect, failureOf, MiB } from "../contract/BlobStore.contract.js"
import { startS3Server } from "../support/S3TestServer.js"

describe("S3BlobStore without a server", () => {
  it("normalizes the prefix to segments ending in /", () => {
    expect(["", "  ", "/", "herald", "/herald/", "herald//", "a/b"].map(S3BlobStore.normalizePrefix)).toEqual([
      "",
      "",
      "",
      "herald/",
      "herald/",
      "herald/",
      "a/b/"
    ])
  })

  it.scoped("publicUrl is Herald's media base, or with presigned links the object's own address", () =>
    Effect.gen(function*() {
      const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: Redacted.make("wJalrXUtnFEMI") }
      const herald = yield* S3BlobStore.make({
        bucket: "media",
        credentials,
        publicBaseUrl: "https://h.example/media-public"
      })
      expect(herald.publicUrl("org/a b")).toEqual(Option.none())
      expect(herald.publicUrl("org/x.png")).toEqual(Option.some("https://h.example/media-public/org/x.png"))
      const aws = yield* S3BlobStore.make({
        bucket: "media",
        region: "eu-west-1",
        prefix: "h",
        links: "presigned",
        credentials
      })
      expect(aws.publicUrl("org/x.png")).toEqual(Option.some("https://media.s3.eu-west-1.amazonaws.com/h/org/x.png"))
      const pathStyle = yield* S3BlobStore.make({
        bucket: "media",
        endpoint: "http://minio.internal:9000",
        forcePathStyle: true,
        links: "presigned",
        credentials
      })
      expect(pathStyle.publicUrl("org/x.png")).toEqual(Option.some("http://minio.internal:9000/media/org/x.png"))
      const virtual = yield* S3BlobStore.make({
        bucket: "media",
        endpoint: "https://acc.r2.cloudflarestorage.com",
        region: "auto",
        links: "presigned",
        credentials
      })
      expect(virtual.publicUrl("org/x.png")).toEqual(
        Option.some("https://media.acc.r2.cloudflarestorage.com/org/x.png")
      )
    }))
})

const s3 = await startS3Server()
if (!s3.available) console.warn(`[skip] S3BlobStore tests skipped: ${s3.reason}`)
afterAll(() => (s3.available ? s3.server.close() : undefined))

describe.skipIf(!s3.available)("S3BlobStore on an S3-compatible server", () => {
  if (!s3.available) return
  const server = s3.server
  const settings = (overrides: Partial<S3BlobStore.Options> = {}): S3BlobStore.Options => ({
    bucket: server.bucket,
    endpoint: server.endpoint,
    region: server.region,
    prefix: `s3-${randomUUID()}`,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: Redacted.make(server.secretAccessKey) },
    ...overrides
  })
  const requestsUnder = (prefix: string) =>
    server.requests
      .filter((r) => r.url.startsWith(`/${server.bucket}/${prefix}/`))
      .map((r) => `${r.method} ${r.url.replace(/uploadId=[0-9a-f]+/, "uploadId=U").replace(/[?&]x-id=[A-Za-z]+/, "")}`)

  it.live("a blob larger than one part goes up as a multipart upload, a smaller one in one PUT", () =>
    Effect.gen(function*() {
      const options = settings()
      const store = yield* S3BlobStore.make(options)
      yield* store.put("org/small.jpg", chunked(bytesOf(300_000), 64 * 1024), 20 * MiB)
      expect(requestsUnder(options.prefix!)).toEqual([`PUT /${server.bucket}/${options.prefix}/org/small.jpg`])
      yield* store.put("org/large.mp4", chunked(bytesOf(6 * MiB), 256 * 1024), 20 * MiB)
      const key = `/${server.bucket}/${options.prefix}/org/large.mp4`
      const [create, ...rest] = requestsUnder(options.prefix!).slice(1)
      expect(create).toBe(`POST ${key}?uploads=`)
      // Two parts, sent side by side (in either order), then the completion.
      expect(rest.slice(0, -1).sort()).toEqual([
        `PUT ${key}?partNumber=1&uploadId=U`,
        `PUT ${key}?partNumber=2&uploadId=U`
      ])
      expect(rest.at(-1)).toBe(`POST ${key}?uploadId=U`)
      // Reads by range ask the server for that range only.
      yield* collect(store.range("org/large.mp4", 100, 200))
      expect(requestsUnder(options.prefix!).at(-1)).toBe(`GET ${key}`)
    }).pipe(Effect.scoped))

  it.live("keeps every object under the prefix, through its layer", () =>
    Effect.gen(function*() {
      const prefix = `/tenant-${randomUUID()}/`
      const options = settings({ prefix })
      yield* Effect.flatMap(BlobStore, (blobs) => blobs.put("org/a.png", Stream.make(new Uint8Array(5)), 10)).pipe(
        Effect.provide(S3BlobStore.layer(options))
      )
      expect(yield* Effect.promise(() => server.keys(prefix.slice(1)))).toEqual([`${prefix.slice(1)}org/a.png`])
    }))

  it.live("presigned links are fetched without credentials, with the content type and ranges; altered or expired ones are refused", () =>
    Effect.gen(function*() {
      const store = yield* S3BlobStore.make(settings({ links: "presigned" }))
      const data = bytesOf(70_000)
      yield* store.put("org/photo", chunked(data, 10_000), MiB)
      const link = yield* store.presignedUrl("org/photo", { lifetime: Duration.minutes(5), contentType: "image/jpeg" })
      expect(Option.isSome(link)).toBe(true)
      const url = Option.getOrThrow(link)
      expect(url).not.toContain(server.secretAccessKey + "&")
      const whole = yield* Effect.promise(() => fetch(url))
      expect(whole.status).toBe(200)
      expect(whole.headers.get("content-type")).toBe("image/jpeg")
      expect(Buffer.compare(Buffer.from(yield* Effect.promise(() => whole.arrayBuffer())), Buffer.from(data))).toBe(0)
      const ranged = yield* Effect.promise(() => fetch(url, { headers: { range: "bytes=10-19" } }))
      expect(ranged.status).toBe(206)
      expect(new Uint8Array(yield* Effect.promise(() => ranged.arrayBuffer()))).toEqual(data.subarray(10, 20))
      const altered = url.replace("org/photo", "org/other")
      expect((yield* Effect.promise(() => fetch(altered))).status).toBe(403)
      expect((yield* Effect.promise(() => fetch(url.replace(/X-Amz-Expires=\d+/, "X-Amz-Expires=604800")))).status)
        .toBe(403)
      // A week at most: S3 refuses longer.
      const long = Option.getOrThrow(yield* store.presignedUrl("org/photo", { lifetime: Duration.days(30) }))
      expect(new URL(long).searchParams.get("X-Amz-Expires")).toBe("604800")
      const short = Option.getOrThrow(yield* store.presignedUrl("org/photo", { lifetime: Duration.seconds(1) }))
      expect((yield* Effect.promise(() => fetch(short))).status).toBe(200)
      const refused = yield* Effect.promise(async () => {
        const deadline = Date.now() + 15_000
        while (Date.now() < deadline) {
          const response = await fetch(short)
          const body = await response.text()
          if (response.status === 403) return body
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
        return "still served"
      })
      expect(refused).toContain("Request has expired")
    }).pipe(Effect.scoped))

  it.live("a store the server refuses fails with a PersistenceError that never shows the secret", () =>
    Effect.gen(function*() {
      const secret = `not-the-secret-${randomUUID()}`
      const store = yield* S3BlobStore.make(
        settings({ credentials: { accessKeyId: server.accessKeyId, secretAccessKey: Redacted.make(secret) } })
      )
      const failures = [
        failureOf(yield* Effect.exit(store.put("org/a", Stream.make(new Uint8Array(3)), 10))),
        failureOf(yield* Effect.exit(collect(store.get("org/a")))),
        failureOf(yield* Effect.exit(store.exists("org/a")))
      ]
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(PersistenceError)
        expect(inspect(failure, { depth: 8 })).not.toContain(secret)
      }
    }).pipe(Effect.scoped))
})
