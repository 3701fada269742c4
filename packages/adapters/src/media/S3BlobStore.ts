/**
 * The `BlobStore` port on S3-compatible object storage (AWS S3, Cloudflare R2, MinIO, Ceph RGW,
 * Backblaze B2): one object per key, under an optional prefix, in a bucket every Herald process
 * shares. A medium stored through one server is read by any other server or worker.
 *
 * `put` streams: the bytes go up as they arrive, in parts of `partSize` (a multipart upload; a blob
 * smaller than one part is a single PUT), so no more than a few parts are ever held in memory. The
 * chunk that would pass `maxBytes` fails the source, nothing more is pulled, and the multipart upload
 * is aborted. The store makes an object visible only once its upload completes, so a reader sees the
 * whole blob or none, and a failed put leaves an earlier object at the key as it was. A put
 * interrupted while its last request is already on the wire may still complete; its medium is then
 * pending and the housekeeping sweep removes the object with it.
 *
 * Reads are ranged GETs (`range`, `head`), so a chunked platform upload fetches one chunk at a time.
 *
 * Links: by default Herald signs them and serves the bytes through its `/media-public` route
 * (`publicBaseUrl`); with `links: "presigned"` the store signs GET URLs instead (SigV4 query
 * signing), and platforms fetch straight from the bucket.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandInput,
  HeadObjectCommand,
  S3Client
} from "@aws-sdk/client-s3"
import { Upload } from "@aws-sdk/lib-storage"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { PersistenceError } from "@herald/core/kernel/Errors"
import { BlobStore, BlobTooLarge } from "@herald/core/media/BlobStore"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Readable } from "node:stream"
import { urlPath, validateKey } from "./BlobKey.js"

export type LinkMode = "herald" | "presigned"

export interface Options {
  readonly bucket: string
  /** The service's URL (MinIO, R2, B2, Ceph); AWS S3 itself when absent. */
  readonly endpoint?: string | undefined
  /** `us-east-1` when absent (R2 takes `auto`). */
  readonly region?: string | undefined
  /** Prepended to every key, e.g. `herald/` (a `/` is added when missing). */
  readonly prefix?: string | undefined
  /** Static keys; absent, the SDK's default chain (AWS_* variables, profiles, instance roles). */
  readonly credentials?: {
    readonly accessKeyId: string
    readonly secretAccessKey: Redacted.Redacted<string>
  } | undefined
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO, Ceph). */
  readonly forcePathStyle?: boolean | undefined
  /** Who signs media links: Herald (`/media-public`, the default) or the store (presigned GETs). */
  readonly links?: LinkMode | undefined
  /** With `links: "herald"`: Herald's public media base, e.g. `https://herald.example.com/media-public`. */
  readonly publicBaseUrl?: string | undefined
  /** Bytes per part of a multipart upload; 5 MiB (the least S3 accepts) by default. */
  readonly partSize?: number | undefined
  /** Parts of one upload in flight at once; 2 by default. */
  readonly queueSize?: number | undefined
}

/** S3 refuses presigned URLs valid longer than a week. */
export const maxPresignedLifetime = Duration.days(7)

const minimumPartSize = 5 * 1024 * 1024

const persistence = (message: string) => (cause: unknown) => new PersistenceError({ message, cause })

const statusOf = (cause: unknown): number | undefined => {
  if (typeof cause !== "object" || cause === null || !("$metadata" in cause)) return undefined
  const metadata = cause.$metadata
  return typeof metadata === "object" && metadata !== null && "httpStatusCode" in metadata &&
      typeof metadata.httpStatusCode === "number"
    ? metadata.httpStatusCode
    : undefined
}

/** `herald/` from `herald`, `/herald/` or `herald/`; empty stays empty. */
export const normalizePrefix = (prefix: string | undefined): string => {
  const trimmed = (prefix ?? "").trim().replace(/^\/+/, "").replace(/\/+$/, "")
  return trimmed === "" ? "" : `${trimmed}/`
}

/**
 * The object's own (unsigned) URL: path style on the endpoint, else virtual-hosted; AWS's regional
 * endpoint when none is given.
 */
const objectUrl = (options: Options, objectKey: string): string => {
  const region = options.region ?? "us-east-1"
  const endpoint = new URL(options.endpoint ?? `https://s3.${region}.amazonaws.com`)
  const base = endpoint.href.replace(/\/+$/, "")
  if (options.forcePathStyle === true) return `${base}/${encodeURIComponent(options.bucket)}/${urlPath(objectKey)}`
  return `${endpoint.protocol}//${options.bucket}.${endpoint.host}${endpoint.pathname.replace(/\/+$/, "")}/${
    urlPath(objectKey)
  }`
}

/** The SDK client for `options`; checksums only where S3 requires them (every compatible service takes that). */
export const makeClient = (options: Options): S3Client =>
  new S3Client({
    region: options.region ?? "us-east-1",
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle === true,
    ...(options.credentials === undefined ? {} : {
      credentials: {
        accessKeyId: options.credentials.accessKeyId,
        secretAccessKey: Redacted.value(options.credentials.secretAccessKey)
      }
    }),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    // A store that does not answer the connection within 5 s fails the request (then retried by the SDK).
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 }
  })

export const make = (options: Options): Effect.Effect<BlobStore["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* Effect.acquireRelease(Effect.sync(() => makeClient(options)), (c) =>
      Effect.sync(() => c.destroy()))
    const bucket = options.bucket
    const prefix = normalizePrefix(options.prefix)
    const partSize = Math.max(minimumPartSize, options.partSize ?? minimumPartSize)
    const queueSize = Math.max(1, options.queueSize ?? 2)
    const links: LinkMode = options.links ?? "herald"
    const base = options.publicBaseUrl?.replace(/\/+$/, "")

    const objectKeyOf = (key: string): Effect.Effect<string, PersistenceError> => {
      const invalid = validateKey(key)
      return invalid === undefined
        ? Effect.succeed(prefix + key)
        : Effect.fail(new PersistenceError({ message: invalid.message, cause: invalid }))
    }

    /** The object's bytes (a range of them), streamed; an unsatisfiable range (past the end) is empty. */
    const read = (key: string, range: string | undefined): Stream.Stream<Uint8Array, PersistenceError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const objectKey = yield* objectKeyOf(key)
        const input: GetObjectCommandInput = {
          Bucket: bucket,
          Key: objectKey,
          ...(range === undefined ? {} : { Range: range })
        }
        const output = yield* Effect.tryPromise({
          try: (signal) =>
            client.send(new GetObjectCommand(input), { abortSignal: signal }),
          catch: (cause) => cause
        }).pipe(
          Effect.map(Option.some),
          Effect.catchAll((cause) =>
            range !== undefined && statusOf(cause) === 416
              ? Effect.succeed(Option.none())
              : Effect.fail(new PersistenceError({ message: "blob store: read failed", cause }))
          )
        )
        if (Option.isNone(output)) return Stream.empty
        const body = output.value.Body
        if (!(body instanceof Readable)) {
          return yield* Effect.fail(new PersistenceError({ message: "blob store: read failed", cause: "no body" }))
        }
        return NodeStream.fromReadable<PersistenceError, Uint8Array>(() => body, persistence("blob store: read failed"))
      }))

    const put = <E>(
      key: string,
      bytes: Stream.Stream<Uint8Array, E>,
      maxBytes: number
    ): Effect.Effect<{ readonly size: number }, E | BlobTooLarge | PersistenceError> =>
      Effect.gen(function*() {
        const objectKey = yield* objectKeyOf(key)
        let size = 0
        // The source's own failure (or the cap), told apart from the store's once the upload fails.
        let refused: Option.Option<E | BlobTooLarge> = Option.none()
        const counted = bytes.pipe(
          Stream.mapEffect((chunk): Effect.Effect<Uint8Array, BlobTooLarge> => {
            if (size + chunk.length > maxBytes) return Effect.fail(new BlobTooLarge({ maxBytes }))
            size += chunk.length
            return Effect.succeed(chunk)
          }),
          Stream.tapError((error) => Effect.sync(() => (refused = Option.some(error))))
        )
        const body = yield* NodeStream.toReadable(counted)
        const upload = new Upload({
          client,
          params: { Bucket: bucket, Key: objectKey, Body: body },
          partSize,
          queueSize,
          leavePartsOnError: false
        })
        yield* Effect.tryPromise({
          try: (signal) => {
            signal.addEventListener("abort", () => {
              body.destroy()
              void upload.abort()
            })
            return upload.done()
          },
          catch: (cause) => cause
        }).pipe(
          Effect.ensuring(Effect.sync(() => body.destroy())),
          Effect.catchAll((cause): Effect.Effect<never, E | BlobTooLarge | PersistenceError> =>
            Option.isSome(refused)
              ? Effect.fail(refused.value)
              : Effect.fail(new PersistenceError({ message: "blob store: write failed", cause }))
          )
        )
        return { size }
      }).pipe(Effect.withSpan("S3BlobStore.put"))

    const get = (key: string) => read(key, undefined)

    const range = (key: string, start: number, end: number): Stream.Stream<Uint8Array, PersistenceError> =>
      !(end > start) || start < 0
        ? Stream.empty
        : read(key, `bytes=${Math.floor(start)}-${Math.ceil(end) - 1}`)

    const head = (key: string, n: number): Effect.Effect<Uint8Array, PersistenceError> =>
      Effect.gen(function*() {
        yield* objectKeyOf(key)
        if (!(n > 0)) return new Uint8Array(0)
        const parts = yield* Stream.runCollect(read(key, `bytes=0-${Math.floor(n) - 1}`))
        return new Uint8Array(Buffer.concat(Chunk.toReadonlyArray(parts)))
      })

    const exists = (key: string): Effect.Effect<boolean, PersistenceError> =>
      Effect.flatMap(objectKeyOf(key), (objectKey) =>
        Effect.tryPromise({
          try: (signal) =>
            client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey }), { abortSignal: signal }),
          catch: (cause) => cause
        }).pipe(
          Effect.as(true),
          Effect.catchAll((cause) =>
            statusOf(cause) === 404
              ? Effect.succeed(false)
              : Effect.fail(new PersistenceError({ message: "blob store: stat failed", cause }))
          )
        ))

    const remove = (key: string): Effect.Effect<void, PersistenceError> =>
      Effect.flatMap(objectKeyOf(key), (objectKey) =>
        Effect.tryPromise({
          try: (signal) =>
            client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey }), { abortSignal: signal }),
          catch: persistence("blob store: delete failed")
        }).pipe(Effect.asVoid))

    const publicUrl = (key: string): Option.Option<string> => {
      if (validateKey(key) !== undefined) return Option.none()
      if (links === "presigned") return Option.some(objectUrl(options, prefix + key))
      return base === undefined ? Option.none() : Option.some(`${base}/${urlPath(key)}`)
    }

    const presignedUrl = (
      key: string,
      link: { readonly lifetime: Duration.Duration; readonly contentType?: string | undefined }
    ): Effect.Effect<Option.Option<string>, PersistenceError> =>
      links !== "presigned"
        ? Effect.as(objectKeyOf(key), Option.none())
        : Effect.flatMap(objectKeyOf(key), (objectKey) =>
          Effect.tryPromise({
            try: () =>
              getSignedUrl(
                client,
                new GetObjectCommand({
                  Bucket: bucket,
                  Key: objectKey,
                  ...(link.contentType === undefined ? {} : { ResponseContentType: link.contentType })
                }),
                { expiresIn: Math.ceil(Duration.toSeconds(Duration.min(link.lifetime, maxPresignedLifetime))) }
              ),
            catch: persistence("blob store: cannot sign a link")
          }).pipe(Effect.map(Option.some)))

    return BlobStore.of({ put, get, range, head, exists, delete: remove, publicUrl, presignedUrl })
  })

export const layer = (options: Options): Layer.Layer<BlobStore> => Layer.scoped(BlobStore, make(options))
