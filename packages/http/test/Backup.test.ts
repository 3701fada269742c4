/**
 * `herald backup` and `herald restore` in-process: what an archive holds, what a restore writes, and
 * everything either refuses. (The backup under a create load of a running server is
 * test/conformance/Backup.test.ts.)
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pipeline } from "node:stream/promises"
import * as zlib from "node:zlib"
import * as tar from "tar-stream"
import { afterAll } from "vitest"
import * as Backup from "../src/Backup.js"

const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-backup-"))
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))
let counter = 0
const fresh = (name: string) => path.join(work, `${name}-${++counter}`)

/** Every file under `dir` (relative, sorted), with its bytes. */
const filesOf = (dir: string): Record<string, string> =>
  Object.fromEntries(
    fs.readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => {
        const file = path.join(e.parentPath, e.name)
        return [path.relative(dir, file), fs.readFileSync(file).toString("base64")] as const
      })
      .sort(([a], [b]) => a.localeCompare(b))
  )

/** A data dir as `herald serve` leaves it: a migrated store with a row, the key file, blobs, a ledger. */
const givenDataDir = Effect.gen(function*() {
  const dataDir = fresh("data")
  yield* Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => Effect.zipRight(sql`CREATE TABLE backup_probe (note TEXT)`, sql`INSERT INTO backup_probe VALUES ('kept')`)
  ).pipe(
    Effect.provide(SqlDatabase.layer({ _tag: "Sqlite", filename: path.join(dataDir, "herald.db") })),
    Effect.scoped,
    Effect.orDie
  )
  fs.writeFileSync(path.join(dataDir, "secret.key"), "ab".repeat(32) + "\n", { mode: 0o600 })
  fs.writeFileSync(path.join(dataDir, "sandbox-ledger.jsonl"), "{\"platform\":\"x\"}\n")
  fs.mkdirSync(path.join(dataDir, "media", "org-1", "m-1.renditions"), { recursive: true })
  fs.writeFileSync(path.join(dataDir, "media", "org-1", "m-1"), Buffer.from([1, 2, 3]))
  fs.writeFileSync(path.join(dataDir, "media", "org-1", "m-1.renditions", "x.jpg"), Buffer.from([4, 5]))
  fs.writeFileSync(path.join(dataDir, "media", "org-1", "empty"), Buffer.alloc(0))
  // A write in progress: never part of a backup.
  fs.writeFileSync(path.join(dataDir, "media", "org-1", ".tmp-0a1b"), Buffer.from([9]))
  return dataDir
})

const sqlite = (dataDir: string): SqlDatabase.DatabaseConfig => ({
  _tag: "Sqlite",
  filename: path.join(dataDir, "herald.db")
})

const messageOf = <A>(exit: Exit.Exit<A, Backup.BackupError>): string => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a BackupError, got ${String(exit.cause)}`)
  return failure.message
}

/** An archive of the given entries (a valid manifest first unless `manifest` is false). */
const archive = async (
  entries: ReadonlyArray<{ readonly name: string; readonly body?: string; readonly type?: "symlink" | "file" }>,
  manifest = true
): Promise<string> => {
  const file = fresh("crafted") + ".tar.gz"
  const pack = tar.pack()
  const written = pipeline(pack, zlib.createGzip(), fs.createWriteStream(file))
  if (manifest) {
    pack.entry(
      { name: Backup.manifestName },
      JSON.stringify({
        format: "herald-backup",
        version: 1,
        created_at: new Date().toISOString(),
        store: "sqlite",
        migration: null,
        media: "files",
        media_files: 0,
        secret_key: false
      })
    )
  }
  for (const entry of entries) {
    if (entry.type === "symlink") pack.entry({ name: entry.name, type: "symlink", linkname: "/etc/passwd" })
    else pack.entry({ name: entry.name }, entry.body ?? "x")
  }
  pack.finalize()
  await written
  return file
}

describe("herald backup", () => {
  it.effect("archives the store, secret.key, the ledger and the media files, and restores them as they were", () =>
    Effect.gen(function*() {
      const dataDir = yield* givenDataDir
      const to = fresh("backup") + ".tar.gz"
      const { file, manifest } = yield* Backup.backup({ database: sqlite(dataDir), dataDir, to, env: {} })
      expect(file).toBe(to)
      expect(fs.statSync(to).mode & 0o777).toBe(0o600)
      expect(manifest).toMatchObject({
        format: "herald-backup",
        version: 1,
        store: "sqlite",
        media: "files",
        media_files: 3,
        secret_key: true
      })
      expect(manifest.migration).toMatch(/^\d{4}_[a-z_]+$/)
      // Nothing of the work files is left beside the archive.
      expect(fs.readdirSync(path.dirname(to)).filter((name) => name.startsWith(`.${path.basename(to)}`))).toEqual([])

      const restoredDir = fresh("restored")
      const restored = yield* Backup.restore({ from: to, dataDir: restoredDir })
      expect(restored).toEqual({ manifest, mediaFiles: 3, pending: [] })
      const before = filesOf(dataDir)
      const after = filesOf(restoredDir)
      delete before["herald.db"]
      delete before[path.join("media", "org-1", ".tmp-0a1b")]
      for (const name of ["herald.db-wal", "herald.db-shm"]) delete before[name]
      expect(Object.keys(after).sort()).toEqual([...Object.keys(before), "herald.db"].sort())
      for (const [name, bytes] of Object.entries(before)) expect(after[name]).toBe(bytes)
      expect(fs.statSync(path.join(restoredDir, "secret.key")).mode & 0o777).toBe(0o600)
      const rows = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ note: string }>`SELECT note FROM backup_probe`
      ).pipe(
        Effect.provide(SqlDatabase.layerClient(sqlite(restoredDir))),
        Effect.scoped,
        Effect.orDie
      )
      expect(rows).toEqual([{ note: "kept" }])
    }))

  it.effect("leaves media in a bucket out, and says so", () =>
    Effect.gen(function*() {
      const dataDir = yield* givenDataDir
      const to = fresh("bucket") + ".tar.gz"
      const { manifest } = yield* Backup.backup({
        database: sqlite(dataDir),
        dataDir,
        to,
        env: { HERALD_S3_BUCKET: "media" }
      })
      expect(manifest).toMatchObject({ media: "bucket", media_files: 0 })
      const restoredDir = fresh("restored")
      expect((yield* Backup.restore({ from: to, dataDir: restoredDir })).mediaFiles).toBe(0)
      expect(fs.existsSync(path.join(restoredDir, "media"))).toBe(false)
    }))

  it.effect("refuses Postgres, a missing store and an existing destination, leaving nothing behind", () =>
    Effect.gen(function*() {
      const dataDir = yield* givenDataDir
      const postgres = yield* Effect.exit(Backup.backup({
        database: { _tag: "Postgres", url: "postgres://db.example/herald" },
        dataDir,
        to: fresh("pg"),
        env: {}
      }))
      expect(messageOf(postgres)).toMatch(/pg_dump/)
      const missing = yield* Effect.exit(
        Backup.backup({ database: sqlite(fresh("none")), dataDir, to: fresh("x"), env: {} })
      )
      expect(messageOf(missing)).toMatch(/^no Herald store at /)
      const existing = fresh("existing")
      fs.writeFileSync(existing, "an earlier backup")
      const again = yield* Effect.exit(Backup.backup({ database: sqlite(dataDir), dataDir, to: existing, env: {} }))
      expect(messageOf(again)).toMatch(/exists; a backup never replaces a file$/)
      expect(fs.readFileSync(existing, "utf8")).toBe("an earlier backup")
      expect(fs.readdirSync(work).filter((name) => name.startsWith("."))).toEqual([])
    }))
})

describe("herald restore", () => {
  it.effect("writes only into a new or empty data dir", () =>
    Effect.gen(function*() {
      const dataDir = yield* givenDataDir
      const to = fresh("backup") + ".tar.gz"
      yield* Backup.backup({ database: sqlite(dataDir), dataDir, to, env: {} })
      const occupied = fresh("occupied")
      fs.mkdirSync(occupied)
      fs.writeFileSync(path.join(occupied, "notes.txt"), "mine")
      expect(messageOf(yield* Effect.exit(Backup.restore({ from: to, dataDir: occupied })))).toMatch(/is not empty/)
      expect(filesOf(occupied)).toEqual({ "notes.txt": Buffer.from("mine").toString("base64") })
      const empty = fresh("empty")
      fs.mkdirSync(empty)
      expect((yield* Backup.restore({ from: to, dataDir: empty })).mediaFiles).toBe(3)
    }))

  it.effect("refuses an archive with a name outside the data dir, a link, or an unknown file, and writes nothing", () =>
    Effect.gen(function*() {
      const crafted = [
        [{ name: "herald.db" }, { name: "../escape" }],
        [{ name: "media/../../escape" }],
        [{ name: "/etc/cron.d/herald" }],
        [{ name: "media/org/.tmp-1" }],
        [{ name: "notes.txt" }],
        [{ name: "media/org/link", type: "symlink" as const }],
        [{ name: "herald.db" }, { name: "herald.db" }]
      ]
      for (const entries of crafted) {
        const from = yield* Effect.promise(() => archive(entries))
        const dataDir = fresh("target")
        const exit = yield* Effect.exit(Backup.restore({ from, dataDir }))
        expect(messageOf(exit)).toMatch(/unexpected entry/)
        expect(filesOf(dataDir)).toEqual({})
      }
      expect(fs.existsSync(path.join(work, "escape"))).toBe(false)
    }))

  it.effect("refuses what is not a Herald backup, or holds no store", () =>
    Effect.gen(function*() {
      const foreign = yield* Effect.promise(() => archive([{ name: "herald.db" }], false))
      expect(messageOf(yield* Effect.exit(Backup.restore({ from: foreign, dataDir: fresh("t") })))).toMatch(
        /not a Herald backup/
      )
      const storeless = yield* Effect.promise(() => archive([{ name: "secret.key" }]))
      const dataDir = fresh("t")
      expect(messageOf(yield* Effect.exit(Backup.restore({ from: storeless, dataDir })))).toMatch(/holds no store/)
      expect(filesOf(dataDir)).toEqual({})
      const text = fresh("plain")
      fs.writeFileSync(text, "not gzip")
      expect(messageOf(yield* Effect.exit(Backup.restore({ from: text, dataDir: fresh("t") })))).toMatch(
        /could not be restored/
      )
    }))
})
