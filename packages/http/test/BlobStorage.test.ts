/**
 * Which blob store a process runs with, from its environment: the S3 variables checked at start,
 * read into the store's options, and the store and link signer the media library then uses, against
 * a real S3-compatible server (s3rver).
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import { BlobStore } from "@herald/core/media/BlobStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { startS3Server } from "../../adapters/test/support/S3TestServer.js"
import * as BlobStorage from "../src/BlobStorage.js"
import * as Config from "../src/Config.js"
import * as Media from "../src/groups/Media.js"
import * as MediaServices from "../src/MediaServices.js"

describe("S3 settings at start", () => {
  it("names each wrong S3 variable, never printing the secret key", () => {
    expect(Config.problems({
      HERALD_S3_BUCKET: "my bucket",
      HERALD_S3_ENDPOINT: "minio:9000",
      HERALD_S3_REGION: "us east",
      HERALD_S3_PREFIX: "../media",
      HERALD_S3_FORCE_PATH_STYLE: "yes",
      HERALD_S3_LINKS: "public",
      HERALD_S3_SECRET_ACCESS_KEY: "wJalrXUtnFEMI-secret"
    })).toEqual([
      "HERALD_S3_BUCKET: expected a bucket name (letters, digits, '.', '-', '_'), got 'my bucket'",
      "HERALD_S3_ENDPOINT: expected an http(s) URL, got 'minio:9000'",
      "HERALD_S3_REGION: expected a region name such as us-east-1, got 'us east'",
      "HERALD_S3_PREFIX: expected key segments of letters, digits, '.', '_', '-' joined by '/', got '../media'",
      "HERALD_S3_FORCE_PATH_STYLE: expected true or false, got 'yes'",
      "HERALD_S3_LINKS: expected herald or presigned, got 'public'",
      "HERALD_S3_ACCESS_KEY_ID, HERALD_S3_SECRET_ACCESS_KEY: expected both or neither " +
      "(neither: the AWS SDK's own chain, e.g. AWS_ACCESS_KEY_ID or an instance role)"
    ])
    expect(Config.isSecret("HERALD_S3_SECRET_ACCESS_KEY")).toBe(true)
  })

  it("refuses S3 settings without a bucket (a misspelt HERALD_S3_BUCKET would silently keep media on disk)", () => {
    expect(Config.problems({ HERALD_S3_ENDPOINT: "https://s3.example", HERALD_S3_BUCKT: "media" })).toEqual([
      "HERALD_S3_BUCKET: expected a bucket name, since HERALD_S3_BUCKT, HERALD_S3_ENDPOINT are set"
    ])
  })

  it("takes a complete S3 configuration", () => {
    expect(Config.problems({
      HERALD_S3_BUCKET: "herald-media",
      HERALD_S3_ENDPOINT: "https://acc.r2.cloudflarestorage.com",
      HERALD_S3_REGION: "auto",
      HERALD_S3_PREFIX: "prod/media/",
      HERALD_S3_ACCESS_KEY_ID: "AKID",
      HERALD_S3_SECRET_ACCESS_KEY: "secret",
      HERALD_S3_FORCE_PATH_STYLE: "false",
      HERALD_S3_LINKS: "presigned"
    })).toEqual([])
  })
})

describe("the storage the environment selects", () => {
  it("is the data dir's media directory without HERALD_S3_BUCKET", () => {
    expect(BlobStorage.fromEnv({ HERALD_MEDIA_PUBLIC_URL: "https://h.example/media-public" }, "/var/herald")).toEqual({
      _tag: "File",
      directory: path.join("/var/herald", "media"),
      publicBaseUrl: "https://h.example/media-public"
    })
    expect(BlobStorage.fromEnv({ HERALD_S3_BUCKET: " " }, "/d")._tag).toBe("File")
  })

  it("is the bucket when HERALD_S3_BUCKET is set, with every S3 setting", () => {
    const storage = BlobStorage.fromEnv({
      HERALD_S3_BUCKET: "media",
      HERALD_S3_ENDPOINT: "http://minio:9000",
      HERALD_S3_REGION: "eu-1",
      HERALD_S3_PREFIX: "herald",
      HERALD_S3_ACCESS_KEY_ID: "AKID",
      HERALD_S3_SECRET_ACCESS_KEY: "s3cr3t",
      HERALD_S3_FORCE_PATH_STYLE: "TRUE",
      HERALD_S3_LINKS: "presigned"
    }, "/d")
    if (storage._tag !== "S3") throw new Error("expected the S3 store")
    const { credentials, ...rest } = storage.options
    expect(rest).toEqual({
      bucket: "media",
      endpoint: "http://minio:9000",
      region: "eu-1",
      prefix: "herald",
      forcePathStyle: true,
      links: "presigned",
      publicBaseUrl: undefined
    })
    expect(credentials?.accessKeyId).toBe("AKID")
    expect(Redacted.value(credentials!.secretAccessKey)).toBe("s3cr3t")
    expect(String(credentials!.secretAccessKey)).not.toContain("s3cr3t")
    const defaults = BlobStorage.fromEnv({ HERALD_S3_BUCKET: "media" }, "/d")
    expect(
      defaults._tag === "S3" && [defaults.options.links, defaults.options.forcePathStyle, defaults.options.credentials]
    )
      .toEqual(["herald", false, undefined])
  })
})

const s3 = await startS3Server()
if (!s3.available) console.warn(`[skip] the S3 half of BlobStorage.test.ts skipped: ${s3.reason}`)
afterAll(() => (s3.available ? s3.server.close() : undefined))

describe.skipIf(!s3.available)("the media library on a bucket", () => {
  if (!s3.available) return
  const server = s3.server
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-blob-storage-"))
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

  /** The blob store and link signer `herald serve` builds from `env`, and what they need. */
  const mediaLayer = (env: Record<string, string>) =>
    Layer.mergeAll(MediaServices.layerBlobStore({ dataDir, env }), MediaServices.layerLinkSigner(env)).pipe(
      Layer.provideMerge(
        CredentialCipher.layer({ dataDir, secret: Redacted.make("a-shared-secret-of-32-characters!") })
      ),
      Layer.provideMerge(NodeCrypto.layer)
    )

  const storeAndLink = (env: Record<string, string>) =>
    Effect.gen(function*() {
      const key = "org-1/medium-1"
      yield* (yield* BlobStore).put(key, Stream.make(new Uint8Array([0x89, 0x50, 0x4e, 0x47])), 100)
      return Option.getOrThrow(yield* Media.publicUrlOf(key, "image/png"))
    }).pipe(Effect.provide(mediaLayer(env)))

  it.live("with presigned links, media links are the bucket's own, served with the medium's type; nothing on disk", () =>
    Effect.gen(function*() {
      const link = yield* storeAndLink({ ...server.env("presigned"), HERALD_S3_LINKS: "presigned" })
      const url = new URL(link)
      expect(url.origin).toBe(server.endpoint)
      expect(url.pathname).toBe(`/${server.bucket}/presigned/org-1/medium-1`)
      expect(url.searchParams.get("X-Amz-Expires")).toBe("3600")
      expect(url.searchParams.has("signature")).toBe(false)
      const response = yield* Effect.promise(() => fetch(link))
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("image/png")
      expect(yield* Effect.promise(() => server.keys("presigned/"))).toEqual(["presigned/org-1/medium-1"])
      expect(fs.existsSync(path.join(dataDir, "media"))).toBe(false)
    }))

  it.live("with Herald's links, the bucket holds the bytes and the link is Herald's signed /media-public one", () =>
    Effect.gen(function*() {
      const link = yield* storeAndLink({
        ...server.env("herald-links"),
        HERALD_MEDIA_PUBLIC_URL: "https://herald.example/media-public"
      })
      expect(link).toMatch(
        /^https:\/\/herald\.example\/media-public\/org-1\/medium-1\?expires=\d+&signature=[0-9a-f]{64}$/
      )
      expect(yield* Effect.promise(() => server.keys("herald-links/"))).toEqual(["herald-links/org-1/medium-1"])
    }))
})
