/**
 * `herald backup` beside a running `herald serve` (SQLite) under a create load, `herald restore` of
 * that backup into a new data dir, and `herald migrate --check` on the restored store and on a data
 * dir with no store.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HeraldServer from "../support/HeraldServer.js"
import * as Fixtures from "../support/MediaFixtures.js"

const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-backup-conformance-"))
let server: HeraldServer.HeraldServer

beforeAll(async () => {
  server = await HeraldServer.start({
    args: ["--sandbox"],
    env: { HERALD_RATE_LIMIT_PER_MINUTE: "1000000", HERALD_RATE_LIMIT_PER_HOUR: "1000000" }
  })
}, 120_000)

afterAll(async () => {
  await server?.stop()
  fs.rmSync(work, { recursive: true, force: true })
})

const readStore = <A>(dataDir: string, query: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, query).pipe(
      Effect.provide(SqlDatabase.layerClient({ _tag: "Sqlite", filename: path.join(dataDir, "herald.db") })),
      Effect.scoped,
      Effect.orDie
    )
  )

describe("herald backup and restore", () => {
  it(
    "a backup taken under a running create load restores every post answered 201 before it began, with media and key",
    async () => {
      const png = Fixtures.png(32, 24)
      const presigned = await server.request("POST", "/api/v1/media/upload", {
        body: { filename: "kept.png", content_type: "image/png", file_size: png.length }
      })
      const media = (presigned.json as { data: { id: string; upload_url: string } }).data
      expect(
        (await fetch(media.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body: png })).status
      )
        .toBe(200)
      expect((await server.request("POST", `/api/v1/media/${media.id}/complete`)).status).toBe(200)
      const accounts = (await server.request("GET", "/api/v1/accounts")).json as {
        data: { accounts: Array<{ id: number }> }
      }
      const account = accounts.data.accounts[0]!.id

      // The load: four clients creating posts back to back until told to stop; each 201 is noted with
      // the instant its answer arrived. Drafts, which no posting allowance limits (20 immediate
      // publishes a minute would stop the load within a second).
      const answered: Array<{ readonly id: string; readonly at: number }> = []
      let running = true
      const client = async (n: number) => {
        for (let i = 0; running; i++) {
          const created = await server.request("POST", "/api/v1/posts", {
            body: { content: `load ${n}-${i}`, account_ids: [account], draft: true }
          })
          if (created.status === 201) {
            answered.push({
              id: (created.json as { data: { id: string } }).data.id,
              at: Date.now()
            })
          }
        }
      }
      const load = Promise.all([0, 1, 2, 3].map(client))
      while (answered.length < 20) await new Promise((resolve) => setTimeout(resolve, 20))

      const file = path.join(work, "herald.tar.gz")
      const began = Date.now()
      const backup = await server.cli(["backup", "--to", file])
      const ended = Date.now()
      running = false
      await load
      expect(backup.code, backup.stderr).toBe(0)
      expect(backup.stdout.trim()).toBe(file)
      expect(backup.stderr).toMatch(/herald: backup of the store as of .* 1 media files, secret\.key/)
      const before = answered.filter((a) => a.at < began).map((a) => a.id)
      // The load really ran while the backup was taken.
      expect(answered.filter((a) => a.at >= began && a.at <= ended).length).toBeGreaterThan(0)

      const restoredDir = path.join(work, "restored")
      const restore = await HeraldServer.herald(["restore", "--from", file, "--data-dir", restoredDir], {
        HERALD_DATA_DIR: "",
        HERALD_DATABASE_URL: ""
      })
      expect(restore.code, restore.stderr).toBe(0)
      expect(restore.stderr).toMatch(/herald: restored the store as of .*, 1 media files, secret\.key/)

      const restored = new Set(
        await readStore(
          restoredDir,
          (sql) => Effect.map(sql<{ id: string }>`SELECT id FROM posts`, (rows) => rows.map((r) => r.id))
        )
      )
      expect(before.length).toBeGreaterThan(0)
      expect(before.filter((id) => !restored.has(id))).toEqual([])
      const orgDir = fs.readdirSync(path.join(restoredDir, "media"))
      expect(orgDir).toHaveLength(1)
      expect(fs.readFileSync(path.join(restoredDir, "media", orgDir[0]!, media.id))).toEqual(Buffer.from(png))
      expect(fs.readFileSync(path.join(restoredDir, "secret.key"))).toEqual(
        fs.readFileSync(path.join(server.storeArgs[1]!, "secret.key"))
      )

      const check = await HeraldServer.herald(["migrate", "--check", "--data-dir", restoredDir], {
        HERALD_DATABASE_URL: ""
      })
      expect([check.code, check.stdout, check.stderr]).toEqual([0, "", "herald: nothing to apply\n"])
    },
    180_000
  )

  it("migrate --check on a data dir with no store lists every migration and creates nothing", async () => {
    const empty = path.join(work, "nothing-here")
    const check = await HeraldServer.herald(["migrate", "--check", "--data-dir", empty], { HERALD_DATABASE_URL: "" })
    expect(check.code).toBe(3)
    const lines = check.stdout.trim().split("\n")
    expect(lines[0]).toBe("0001_foundation")
    expect(lines.every((line) => /^\d{4}_[a-z0-9_]+$/.test(line))).toBe(true)
    expect(check.stderr).toBe(`herald: ${lines.length} migrations would be applied (there is no store yet)\n`)
    expect(fs.existsSync(empty)).toBe(false)
  }, 60_000)
})
