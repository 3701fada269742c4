/**
 * What `herald serve` writes to disk is its owner's alone: started fresh under the default umask
 * (022), the data dir and every directory under it are 0700, and the SQLite database (with its WAL
 * files), the key file and stored media are 0600. A database left readable by others by an earlier
 * version is narrowed to 0600 on the next start.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/MediaFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const root = path.resolve(path.dirname(HeraldServer.bin), "../../..")

interface Started {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly key: string | undefined
}

/** `herald serve` on a free port through `sh`, with umask 022 as a login shell would have it. */
const serve = (dataDir: string): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", [
      "-c",
      "umask 022; exec \"$0\" \"$@\"",
      process.execPath,
      HeraldServer.bin,
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir
    ], {
      cwd: root,
      env: { ...process.env, PORT: "", HERALD_DATA_DIR: "", HERALD_DATABASE_URL: "", HERALD_SECRET: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const timer = setTimeout(() => reject(new Error(`herald serve did not start within 60 s:\n${output}`)), 60_000)
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const port = /Herald listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]
      if (port !== undefined) {
        clearTimeout(timer)
        resolve({
          child,
          baseUrl: `http://127.0.0.1:${port}`,
          key: /HERALD_API_KEY=(pe_live_[0-9a-f]{32})/.exec(output)?.[1]
        })
      }
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`herald serve exited with ${code}:\n${output}`))
    })
  })

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill("SIGTERM")
  await exited
}

/** Every path under `dir` (itself included) with its permission bits, as octal text. */
const modesUnder = (dir: string): Record<string, string> => {
  const out: Record<string, string> = { ".": (fs.statSync(dir).mode & 0o777).toString(8) }
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name)
    out[path.relative(dir, full)] = (fs.statSync(full).mode & 0o777).toString(8)
  }
  return out
}

describe("files of a fresh start under umask 022", () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "herald-modes-"))
  const dataDir = path.join(parent, "not-yet", "data")
  const running: Array<ChildProcess> = []

  afterAll(async () => {
    for (const child of running) await stop(child)
    fs.rmSync(parent, { recursive: true, force: true })
  })

  it("the data dir and media/ are 0700; herald.db, its WAL, secret.key and an uploaded medium are 0600", async () => {
    const server = await serve(dataDir)
    running.push(server.child)
    expect(server.key).toBeDefined()
    // Store a medium: presign, then the signed PUT.
    const bytes = Fixtures.png(8, 8)
    const presign = await fetch(`${server.baseUrl}/api/v1/media/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ filename: "a.png", content_type: "image/png", file_size: bytes.length })
    })
    const uploadUrl = ((await presign.json()) as { data: { upload_url: string } }).data.upload_url
    const put = await fetch(uploadUrl, { method: "PUT", headers: { "content-type": "image/png" }, body: bytes })
    expect(put.status, await put.text()).toBe(200)

    const modes = modesUnder(dataDir)
    expect(modes["."]).toBe("700")
    expect(modes["herald.db"]).toBe("600")
    expect(modes["secret.key"]).toBe("600")
    expect(modes["media"]).toBe("700")
    expect(Object.keys(modes)).toContain("herald.db-wal")
    const media = Object.keys(modes).filter((p) => p.startsWith(`media${path.sep}`))
    expect(media.some((p) => fs.statSync(path.join(dataDir, p)).isFile())).toBe(true)
    for (const [file, mode] of Object.entries(modes)) {
      const isDir = fs.statSync(path.join(dataDir, file)).isDirectory()
      expect([file, mode]).toEqual([file, isDir ? "700" : "600"])
    }
    await stop(server.child)
  }, 120_000)

  it("a database left readable by others is narrowed to 0600 on the next start", async () => {
    fs.chmodSync(path.join(dataDir, "herald.db"), 0o644)
    const server = await serve(dataDir)
    running.push(server.child)
    expect((fs.statSync(path.join(dataDir, "herald.db")).mode & 0o777).toString(8)).toBe("600")
    await stop(server.child)
  }, 120_000)
})
