/**
 * `herald backup` and `herald restore` for the embedded store: one gzip'd tar file holding a
 * consistent snapshot of the SQLite database, the data dir's `secret.key` (platform credentials are
 * encrypted with it when HERALD_SECRET is not set), the sandbox's ledger, and the media files of the
 * file blob store. Postgres deployments use `pg_dump` instead (docs/operations.md).
 *
 * The snapshot is `VACUUM INTO` on a connection of its own beside the running server: one read
 * transaction, so the copy is the database as of one commit, while the server keeps writing (WAL).
 * The media files are copied after it, each opened once (a blob is written to a temporary file and
 * renamed into place, never changed in place), so every medium the snapshot knows is in the archive
 * unless it was deleted while the backup ran. The archive is written beside its destination and
 * renamed into place once complete and synced.
 *
 * A restore writes only into a missing or empty data dir, and only the names a backup holds: a
 * crafted archive can neither leave the data dir nor overwrite anything.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { validateKey } from "@herald/adapters/media/BlobKey"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as Migrations from "@herald/adapters/sql/Migrations"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as Fs from "node:fs/promises"
import * as path from "node:path"
import { pipeline } from "node:stream/promises"
import * as zlib from "node:zlib"
import * as tar from "tar-stream"
import * as BlobStorage from "./BlobStorage.js"

export class BackupError extends Data.TaggedError("BackupError")<{ readonly message: string }> {}

export const manifestName = "herald-backup.json"
const databaseName = "herald.db"
const ledgerName = "sandbox-ledger.jsonl"
const mediaDirectory = "media"

export const Manifest = Schema.Struct({
  format: Schema.Literal("herald-backup"),
  version: Schema.Literal(1),
  created_at: Schema.String,
  store: Schema.Literal("sqlite"),
  /** The newest migration applied to the snapshot. */
  migration: Schema.NullOr(Schema.String),
  /** Where the media were: files in the archive, or a bucket the archive does not hold. */
  media: Schema.Literal("files", "bucket"),
  media_files: Schema.Int,
  secret_key: Schema.Boolean
})
export type Manifest = typeof Manifest.Type

const fail = (message: string) => Effect.fail(new BackupError({ message }))

const failure = (what: string) => (cause: unknown) =>
  new BackupError({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}` })

const exists = (file: string): Promise<boolean> => Fs.access(file).then(() => true, () => false)

/** Every regular file under `root` (relative, `/`-separated) but a blob store's temporary files. */
const mediaFiles = async (root: string): Promise<ReadonlyArray<string>> => {
  if (!(await exists(root))) return []
  const entries = await Fs.readdir(root, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith(".tmp-"))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .sort()
}

/** Adds one file to the archive under `name`, streamed; false when it vanished before it was opened. */
const addFile = async (pack: tar.Pack, file: string, name: string): Promise<boolean> => {
  let handle: Fs.FileHandle
  try {
    handle = await Fs.open(file, "r")
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return false
    throw cause
  }
  try {
    const stat = await handle.stat()
    await new Promise<void>((resolve, reject) => {
      const entry = pack.entry(
        { name, size: stat.size, mode: 0o600, mtime: stat.mtime },
        (error) => error ? reject(error) : resolve()
      )
      const write = async () => {
        if (stat.size > 0) {
          for await (const chunk of handle.createReadStream({ start: 0, end: stat.size - 1, autoClose: false })) {
            if (!entry.write(chunk)) await new Promise<void>((drained) => entry.once("drain", () => drained()))
          }
        }
        entry.end(null)
      }
      write().catch(reject)
    })
    return true
  } finally {
    await handle.close()
  }
}

export interface BackupSummary {
  readonly file: string
  readonly manifest: Manifest
}

/**
 * Writes the backup of the SQLite store in `database` (and of `dataDir`) to `to`, which must not exist.
 * `env` tells where the media are (a bucket is not copied).
 */
export const backup = (options: {
  readonly database: SqlDatabase.DatabaseConfig
  readonly dataDir: string
  readonly to: string
  readonly env: Readonly<Record<string, string | undefined>>
}): Effect.Effect<BackupSummary, BackupError> =>
  Effect.gen(function*() {
    const { database, dataDir } = options
    if (database._tag !== "Sqlite") {
      return yield* fail(
        "herald backup copies the embedded SQLite store; back up Postgres with pg_dump (docs/operations.md, Backups)"
      )
    }
    if (!(yield* Effect.promise(() => exists(database.filename)))) {
      return yield* fail(`no Herald store at ${database.filename}`)
    }
    const to = path.resolve(options.to)
    if (yield* Effect.promise(() => exists(to))) return yield* fail(`${to} exists; a backup never replaces a file`)
    const directory = path.dirname(to)
    const stamp = randomBytes(6).toString("hex")
    const snapshot = path.join(directory, `.${path.basename(to)}.${stamp}.db`)
    const partial = path.join(directory, `.${path.basename(to)}.${stamp}.partial`)
    const cleanUp = Effect.promise(() =>
      Promise.all([snapshot, `${snapshot}-wal`, `${snapshot}-shm`, partial].map((file) => Fs.rm(file, { force: true })))
    )

    return yield* Effect.gen(function*() {
      const createdAt = new Date()
      // A connection of its own, without migrations: a backup never changes the store it copies.
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`VACUUM INTO ${snapshot}`).pipe(
        Effect.provide(SqlDatabase.layerClient(database)),
        Effect.scoped,
        Effect.mapError(failure("the store could not be copied"))
      )
      const migration = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const ok = yield* sql<{ readonly quick_check: string }>`PRAGMA quick_check`
        if (ok[0]?.quick_check !== "ok") return yield* fail(`the copy of the store is damaged: ${ok[0]?.quick_check}`)
        const rows = yield* sql<{ readonly migration_id: number; readonly name: string }>`
          SELECT migration_id, name FROM ${sql(Migrations.table)} ORDER BY migration_id DESC LIMIT 1`
        return rows[0] === undefined ? null : Migrations.label(Number(rows[0].migration_id), rows[0].name)
      }).pipe(
        Effect.provide(SqlDatabase.layerClient({ _tag: "Sqlite", filename: snapshot })),
        Effect.scoped,
        Effect.catchTag("SqlError", (e) => Effect.fail(failure("the copy of the store could not be read")(e)))
      )

      const storage = BlobStorage.fromEnv(options.env, dataDir)
      const media = storage._tag === "File" ? yield* Effect.promise(() => mediaFiles(storage.directory)) : []
      const secretKey = path.join(dataDir, CredentialCipher.keyFileName)
      const hasSecretKey = yield* Effect.promise(() => exists(secretKey))
      const ledger = path.join(dataDir, ledgerName)

      const manifest: Manifest = {
        format: "herald-backup",
        version: 1,
        created_at: createdAt.toISOString(),
        store: "sqlite",
        migration,
        media: storage._tag === "File" ? "files" : "bucket",
        media_files: media.length,
        secret_key: hasSecretKey
      }

      yield* Effect.tryPromise({
        try: async () => {
          const pack = tar.pack()
          const out = fs.createWriteStream(partial, { mode: 0o600, flags: "wx" })
          const written = pipeline(pack, zlib.createGzip(), out)
          const feed = async () => {
            const json = JSON.stringify(manifest, null, 2) + "\n"
            pack.entry({ name: manifestName, mode: 0o600, mtime: createdAt }, json)
            await addFile(pack, snapshot, databaseName)
            if (hasSecretKey) await addFile(pack, secretKey, CredentialCipher.keyFileName)
            await addFile(pack, ledger, ledgerName)
            if (storage._tag === "File") {
              for (const key of media) {
                await addFile(pack, path.join(storage.directory, key), `${mediaDirectory}/${key}`)
              }
            }
            pack.finalize()
          }
          await Promise.all([
            written,
            feed().catch((cause) => {
              pack.destroy(cause)
              throw cause
            })
          ])
          const handle = await Fs.open(partial, "r")
          await handle.sync().finally(() => handle.close())
          await Fs.rename(partial, to)
        },
        catch: failure("the backup could not be written")
      })
      return { file: to, manifest }
    }).pipe(Effect.ensuring(cleanUp))
  })

export interface RestoreSummary {
  readonly manifest: Manifest
  readonly mediaFiles: number
  /** Migrations the next `herald serve` applies (the backup came from an older Herald). */
  readonly pending: ReadonlyArray<string>
}

/** A name the archive may hold: the data dir's own files, and media under valid blob keys. */
const allowed = (name: string): boolean =>
  name === databaseName || name === CredentialCipher.keyFileName || name === ledgerName ||
  (name.startsWith(`${mediaDirectory}/`) && validateKey(name.slice(mediaDirectory.length + 1)) === undefined)

/** Restores the backup `from` into `dataDir`, which must be missing or empty. */
export const restore = (options: {
  readonly from: string
  readonly dataDir: string
}): Effect.Effect<RestoreSummary, BackupError> =>
  Effect.gen(function*() {
    const dataDir = path.resolve(options.dataDir)
    const present = yield* Effect.promise(() => Fs.readdir(dataDir).catch(() => undefined))
    if (present !== undefined && present.length > 0) {
      return yield* fail(`${dataDir} is not empty; restore only into a new or empty data dir`)
    }
    if (!(yield* Effect.promise(() => exists(options.from)))) return yield* fail(`no backup at ${options.from}`)
    yield* Effect.tryPromise({
      try: () => Fs.mkdir(dataDir, { recursive: true, mode: 0o700 }),
      catch: failure("the data dir could not be created")
    })

    const extracted = yield* Effect.tryPromise({
      try: () => extractInto(options.from, dataDir),
      catch: failure(`${options.from} could not be restored`)
    }).pipe(
      // Nothing half-restored is left: the data dir was empty.
      Effect.tapError(() => Effect.promise(() => emptyDirectory(dataDir)))
    )

    const pending = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ok = yield* sql<{ readonly quick_check: string }>`PRAGMA quick_check`
      if (ok[0]?.quick_check !== "ok") return yield* fail(`the restored store is damaged: ${ok[0]?.quick_check}`)
      return (yield* Migrations.check).pending
    }).pipe(
      Effect.provide(SqlDatabase.layerClient({ _tag: "Sqlite", filename: path.join(dataDir, databaseName) })),
      Effect.scoped,
      Effect.catchTags({
        SqlError: (e) => Effect.fail(failure("the restored store could not be read")(e)),
        MigrationError: (e) => Effect.fail(failure("the restored store could not be read")(e))
      })
    )
    return { manifest: extracted.manifest, mediaFiles: extracted.mediaCount, pending }
  })

/** Why an archive is refused, as opposed to a failure to read it. */
class Refusal extends Error {}

/** Writes the archive's files into `dataDir`, refusing any name a backup does not hold. */
const extractInto = async (from: string, dataDir: string): Promise<{ manifest: Manifest; mediaCount: number }> => {
  const extract = tar.extract()
  // Settles with the reading's own failure (not gzip, cut short), and never rejects unobserved.
  const source = pipeline(fs.createReadStream(from), zlib.createGunzip(), extract).then(
    () => undefined,
    (cause: unknown) => cause ?? new Error("unreadable")
  )
  let manifest: Manifest | undefined
  let mediaCount = 0
  const seen = new Set<string>()
  const readEntries = async () => {
    for await (const entry of extract) {
      const name = entry.header.name
      if (manifest === undefined) {
        if (name !== manifestName) throw new Refusal(`not a Herald backup (it starts with ${JSON.stringify(name)})`)
        const text = (await readAll(entry)).toString("utf8")
        try {
          manifest = Schema.decodeUnknownSync(Manifest)(JSON.parse(text))
        } catch {
          throw new Refusal("not a Herald backup this version reads (its manifest)")
        }
        continue
      }
      if (entry.header.type !== "file" || !allowed(name) || seen.has(name)) {
        throw new Refusal(`unexpected entry ${JSON.stringify(name)}`)
      }
      seen.add(name)
      const target = path.join(dataDir, ...name.split("/"))
      await Fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
      const handle = await Fs.open(target, "wx", 0o600)
      try {
        for await (const chunk of entry) await handle.write(chunk as Uint8Array)
      } finally {
        await handle.close()
      }
      if (name.startsWith(`${mediaDirectory}/`)) mediaCount++
    }
  }
  try {
    await readEntries()
  } catch (cause) {
    extract.destroy()
    const unreadable = await source
    throw cause instanceof Refusal ? cause : unreadable ?? cause
  }
  const unreadable = await source
  if (unreadable !== undefined) throw unreadable
  if (manifest === undefined) throw new Refusal("the archive is empty")
  if (!seen.has(databaseName)) throw new Refusal("the archive holds no store")
  return { manifest, mediaCount }
}

/** The manifest is small (a few hundred bytes); a larger first entry is not a manifest. */
const readAll = async (entry: AsyncIterable<unknown>): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of entry) {
    const bytes = chunk as Buffer
    size += bytes.length
    if (size > 64 * 1024) throw new Refusal("not a Herald backup (its manifest is too large)")
    chunks.push(bytes)
  }
  return Buffer.concat(chunks)
}

const emptyDirectory = async (dir: string): Promise<void> => {
  for (const name of await Fs.readdir(dir).catch(() => [])) {
    await Fs.rm(path.join(dir, name), { recursive: true, force: true })
  }
}
