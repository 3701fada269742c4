/**
 * Where a process keeps media bytes, from its environment: an S3-compatible bucket when
 * `HERALD_S3_BUCKET` is set (every server and worker on it then sees every upload), else files under
 * `<data-dir>/media`. The S3 client (the AWS SDK) is loaded only when a bucket is configured, so a
 * process on the local disk never pays for it at start.
 */
import type * as S3BlobStore from "@herald/adapters/media/S3BlobStore"
import * as FileBlobStore from "@herald/adapters/media/FileBlobStore"
import type { BlobStore } from "@herald/core/media/BlobStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Path from "node:path"

type Env = Readonly<Record<string, string | undefined>>

/** Who signs the media links platforms fetch: Herald (`/media-public`) or the bucket (presigned GETs). */
export const linkModes = ["herald", "presigned"] as const

export type Storage =
  | { readonly _tag: "File"; readonly directory: string; readonly publicBaseUrl: string | undefined }
  | { readonly _tag: "S3"; readonly options: S3BlobStore.Options }

const read = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/**
 * The storage the environment describes. The values are checked at start (Config.ts); here a value
 * out of shape falls back to its default, as every setting does.
 */
export const fromEnv = (env: Env, dataDir: string): Storage => {
  const publicBaseUrl = read(env, "HERALD_MEDIA_PUBLIC_URL")
  const bucket = read(env, "HERALD_S3_BUCKET")
  if (bucket === undefined) return { _tag: "File", directory: Path.join(dataDir, "media"), publicBaseUrl }
  const accessKeyId = read(env, "HERALD_S3_ACCESS_KEY_ID")
  const secretAccessKey = read(env, "HERALD_S3_SECRET_ACCESS_KEY")
  return {
    _tag: "S3",
    options: {
      bucket,
      endpoint: read(env, "HERALD_S3_ENDPOINT"),
      region: read(env, "HERALD_S3_REGION"),
      prefix: read(env, "HERALD_S3_PREFIX"),
      credentials: accessKeyId === undefined || secretAccessKey === undefined
        ? undefined
        : { accessKeyId, secretAccessKey: Redacted.make(secretAccessKey) },
      forcePathStyle: read(env, "HERALD_S3_FORCE_PATH_STYLE")?.toLowerCase() === "true",
      links: read(env, "HERALD_S3_LINKS")?.toLowerCase() === "presigned" ? "presigned" : "herald",
      publicBaseUrl
    }
  }
}

/** Whether links are signed by the store itself (so Herald needs no public media origin for them). */
export const presignsLinks = (env: Env): boolean =>
  read(env, "HERALD_S3_BUCKET") !== undefined && read(env, "HERALD_S3_LINKS")?.toLowerCase() === "presigned"

export const layer = (storage: Storage): Layer.Layer<BlobStore> =>
  storage._tag === "File"
    ? FileBlobStore.layer({
      directory: storage.directory,
      ...(storage.publicBaseUrl === undefined ? {} : { publicBaseUrl: storage.publicBaseUrl })
    }).pipe(Layer.orDie)
    : Layer.unwrapEffect(
      Effect.promise(() => import("@herald/adapters/media/S3BlobStore")).pipe(
        Effect.map((S3) => S3.layer(storage.options))
      )
    )
