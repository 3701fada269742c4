/**
 * Media on a shared S3 bucket, as on separate machines: two `herald serve` processes and a
 * `herald worker`, each with its own data dir, on one Postgres and one bucket (a real S3-compatible
 * server started here). A medium uploaded through server A is published by the worker while A is
 * down (the worker reads the bytes from the bucket, never from A's disk), and a signed media link A
 * issued is served by server B.
 */
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startS3Server } from "../../packages/adapters/test/support/S3TestServer.js"
import { createFreshPgDatabase, probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as W from "../engine/WorkerProcesses.js"
import * as Fixtures from "../support/MediaFixtures.js"

const pg = await probePostgres
const s3 = await startS3Server()
const skipReason = !pg.available ? pg.reason : !s3.available ? s3.reason : undefined
if (skipReason !== undefined) console.warn(`[skip] media on a shared bucket: ${skipReason}`)
afterAll(() => (s3.available ? s3.server.close() : undefined))

/** Polls until `read` answers something, for at most `seconds`. */
const eventually = async <A>(what: string, seconds: number, read: () => A | undefined): Promise<A> => {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const value = read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe.skipIf(skipReason !== undefined)("media on a shared bucket", () => {
  it("uploaded through A, published by a worker while A is down; A's signed link served by B", async () => {
    if (!s3.available) return
    const db = await Effect.runPromise(createFreshPgDatabase())
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-shared-bucket-"))
    const env = {
      ...s3.server.env(`shared-${crypto.randomUUID()}`),
      // Every process signs and opens with the same root key: credentials, upload tokens, media links.
      HERALD_SECRET: crypto.randomBytes(32).toString("hex"),
      HERALD_MEDIA_PUBLIC_URL: "https://media.herald.test/media-public"
    }
    const workerJournal = path.join(work, "worker.jsonl")
    // The worker starts beside A (it claims nothing until the post is due).
    const [a, worker] = await Promise.all([
      Fixtures.startSandboxServer({ databaseUrl: db.url, env }),
      Promise.resolve(W.spawnWorker({
        database: { url: db.url },
        journal: workerJournal,
        args: ["--data-dir", path.join(work, "worker"), "--poll-ms", "100"],
        env
      }))
    ])
    let b: Fixtures.SandboxServer | undefined
    try {
      const png = Fixtures.png(64, 48)
      const presigned = await a.request("POST", "/api/v1/media/upload", {
        filename: "photo.png",
        content_type: "image/png",
        file_size: png.length
      })
      expect(presigned.status, presigned.text).toBe(201)
      const mediaId = presigned.json.data.id
      expect((await a.put(String(presigned.json.data["upload_url"]), png, "image/png")).status).toBe(200)
      const ready = await a.request("POST", `/api/v1/media/${mediaId}/complete`)
      expect(ready.status, ready.text).toBe(200)
      const link = String(ready.json.data["public_url"])
      expect(link).toMatch(/^https:\/\/media\.herald\.test\/media-public\/.+\?expires=\d+&signature=[0-9a-f]{64}$/)
      // The bytes are in the bucket, not on A's disk.
      expect(fs.existsSync(path.join(a.dataDir, "media"))).toBe(false)

      const accounts = (await a.request("GET", "/api/v1/accounts")).json.data["accounts"] as ReadonlyArray<
        { readonly id: number; readonly platform: string }
      >
      const bluesky = accounts.find((account) => account.platform === "bluesky")!.id
      const due = Date.now() + 15_000
      const post = await a.request("POST", "/api/v1/posts", {
        content: "made on A, published by the worker",
        account_ids: [bluesky],
        media_ids: [mediaId],
        // Due well after A has stopped: A dispatches too, and a post A claimed before its SIGTERM
        // would be published by A's drain, not by the worker (a stop under load can take seconds).
        scheduled_for: new Date(due).toISOString()
      })
      expect(post.status, post.text).toBe(201)
      await a.stop()
      expect(Date.now(), "A stopped before the post was due").toBeLessThan(due)

      // The worker read the medium from the bucket (and made Bluesky's rendition of it there).
      const sent = await eventually("the worker's publish", 60, () => W.readJournal(workerJournal)[0]) as
        & W.JournalEntry
        & { readonly media?: ReadonlyArray<{ readonly id: string; readonly mimeType: string; readonly size: number }> }
      expect(sent.outcome).toBe("published")
      expect(sent.media?.map((m) => m.id)).toEqual([mediaId])
      expect(sent.media![0]!.size).toBeGreaterThan(0)

      // B starts only now: a server dispatches too, and this publish is the worker's.
      b = await Fixtures.startSandboxServer({ databaseUrl: db.url, key: a.key, env })
      const served = await fetch(link.replace("https://media.herald.test", b.baseUrl))
      expect(served.status).toBe(200)
      expect(served.headers.get("content-type")).toBe("image/png")
      expect(Buffer.compare(Buffer.from(await served.arrayBuffer()), Buffer.from(png))).toBe(0)
      const view = await b.request("GET", `/api/v1/posts/${post.json.data.id}`)
      expect(view.json.data["status"]).toBe("published")
    } finally {
      await Promise.all([
        a.stop(),
        b?.stop(),
        (async () => {
          worker.child.kill("SIGTERM")
          await worker.exited
        })()
      ])
      await Effect.runPromise(db.drop)
      fs.rmSync(work, { recursive: true, force: true })
    }
  }, 120_000)
})
