/**
 * A real S3-compatible server for tests: s3rver (`@20minutes/s3rver` from npm, pure JavaScript), on
 * a free loopback port, storing under a fresh temporary directory, with one bucket. It verifies
 * SigV4 signatures (request headers and presigned query strings, with their expiry) against its own
 * key pair, `S3RVER`/`S3RVER`. Every request it receives is recorded (method and URL), so a test can
 * see which S3 operations a store used. Where it cannot start, `startS3Server` answers the reason
 * instead, which suites print when they skip.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** The part of s3rver's API used here (it ships no types). */
interface S3rver {
  readonly configureBuckets: () => Promise<void>
  readonly callback: () => http.RequestListener
  readonly store: {
    readonly listObjects: (
      bucket: string,
      options: { readonly prefix: string }
    ) => Promise<{ readonly objects: ReadonlyArray<{ readonly key: string }> }>
  }
}

type S3rverClass = new(options: {
  readonly directory: string
  readonly silent: boolean
  readonly configureBuckets: ReadonlyArray<{ readonly name: string; readonly configs: ReadonlyArray<string> }>
}) => S3rver

export interface S3Request {
  readonly method: string
  readonly url: string
}

export interface S3TestServer {
  readonly endpoint: string
  readonly bucket: string
  readonly region: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** Every request so far, in arrival order. */
  readonly requests: ReadonlyArray<S3Request>
  /**
   * The keys of the objects in the bucket under `prefix`, sorted, read from the server's own store
   * (s3rver miscomputes the SigV4 signature of path-style bucket requests such as ListObjectsV2).
   */
  readonly keys: (prefix: string) => Promise<ReadonlyArray<string>>
  /** The environment a Herald process needs to use this server's bucket (path style, under `prefix`). */
  readonly env: (prefix: string) => Record<string, string>
  readonly close: () => Promise<void>
}

export type S3ServerStart =
  | { readonly available: true; readonly server: S3TestServer }
  | { readonly available: false; readonly reason: string }

export const startS3Server = async (bucket = "herald-test"): Promise<S3ServerStart> => {
  let directory: string | undefined
  try {
    const S3rver = createRequire(import.meta.url)("@20minutes/s3rver") as S3rverClass
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "herald-s3-"))
    const s3rver = new S3rver({ directory, silent: true, configureBuckets: [{ name: bucket, configs: [] }] })
    await s3rver.configureBuckets()
    const requests: Array<S3Request> = []
    const handle = s3rver.callback()
    const server = http.createServer((request, response) => {
      requests.push({ method: request.method ?? "", url: request.url ?? "" })
      handle(request, response)
    })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => resolve())
    })
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const dir = directory
    return {
      available: true,
      server: {
        endpoint,
        bucket,
        region: "us-east-1",
        accessKeyId: "S3RVER",
        secretAccessKey: "S3RVER",
        requests,
        keys: async (prefix) => (await s3rver.store.listObjects(bucket, { prefix })).objects.map((o) => o.key).sort(),
        env: (prefix) => ({
          HERALD_S3_BUCKET: bucket,
          HERALD_S3_ENDPOINT: endpoint,
          HERALD_S3_REGION: "us-east-1",
          HERALD_S3_PREFIX: prefix,
          HERALD_S3_ACCESS_KEY_ID: "S3RVER",
          HERALD_S3_SECRET_ACCESS_KEY: "S3RVER",
          HERALD_S3_FORCE_PATH_STYLE: "true"
        }),
        close: async () => {
          server.closeAllConnections()
          await new Promise<void>((resolve) => server.close(() => resolve()))
          fs.rmSync(dir, { recursive: true, force: true })
        }
      }
    }
  } catch (error) {
    if (directory !== undefined) fs.rmSync(directory, { recursive: true, force: true })
    return { available: false, reason: `the S3 test server (s3rver) did not start: ${String(error)}` }
  }
}
