/**
 * The blob-store contract against every store: the local disk always, and an S3 bucket on a real
 * S3-compatible server (s3rver, started here; the suite says why when it cannot start). Each S3
 * store gets its own prefix in the one bucket, so a store's listing is its own.
 */
import { describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import * as FileBlobStore from "../../src/media/FileBlobStore.js"
import * as S3BlobStore from "../../src/media/S3BlobStore.js"
import { blobStoreContract, type MakeStore } from "../contract/BlobStore.contract.js"
import { startS3Server } from "../support/S3TestServer.js"

/** Every file under `dir`, as `/`-separated paths relative to it. */
const listFiles = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await Fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => Path.relative(dir, Path.join(e.parentPath, e.name)).split(Path.sep).join("/"))
    .sort()
}

const fileStore: MakeStore = (options = {}) =>
  Effect.gen(function*() {
    const root = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "herald-blobs-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    const store = yield* FileBlobStore.make({ directory: root, ...options }).pipe(Effect.orDie)
    return { store, listBlobs: Effect.promise(() => listFiles(root)) }
  })

blobStoreContract("file", fileStore)

const s3 = await startS3Server()
if (!s3.available) console.warn(`[skip] S3 half of the blob-store contract skipped: ${s3.reason}`)
afterAll(() => (s3.available ? s3.server.close() : undefined))

describe.skipIf(!s3.available)("S3 bucket", () => {
  if (!s3.available) return
  const server = s3.server
  const s3Store: MakeStore = (options = {}) =>
    Effect.gen(function*() {
      const prefix = `contract-${randomUUID()}/`
      const settings: S3BlobStore.Options = {
        bucket: server.bucket,
        endpoint: server.endpoint,
        region: server.region,
        prefix,
        forcePathStyle: true,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: Redacted.make(server.secretAccessKey) },
        ...options
      }
      const store = yield* S3BlobStore.make(settings)
      const listBlobs = Effect.promise(async () => (await server.keys(prefix)).map((key) => key.slice(prefix.length)))
      return { store, listBlobs }
    })
  blobStoreContract("s3", s3Store)
})
