/**
 * The embedding examples run: the Promise host and the node:http host as plain Node programs (the
 * compiled packages in dist/), the Effect host through tsx. Each uses its own SQLite data dir.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sourceNodeOptions } from "../support/HeraldBin.js"

const root = path.resolve(import.meta.dirname, "../..")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-examples-"))
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  fs.rmSync(work, { recursive: true, force: true })
})

// The plain Node examples run dist/: bring it up to date with the sources (incremental, quick when it
// is), with the `herald` command's bundle (`npm run build`).
beforeAll(() => {
  execFileSync("npm", ["run", "build"], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: "ignore"
  })
}, 240_000)

const plainNode = (dataDir: string) => ({ ...process.env, NODE_OPTIONS: "", HERALD_DATA_DIR: dataDir })

const waitFor = (read: () => string, pattern: RegExp, ms: number) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    const started = Date.now()
    const tick = () => {
      const found = pattern.exec(read())
      if (found) return resolve(found)
      if (Date.now() - started > ms) return reject(new Error(`no ${pattern} in:\n${read()}`))
      setTimeout(tick, 50)
    }
    tick()
  })

describe("embedding examples", () => {
  it("host-promise.mjs publishes a post and logs post.published", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["examples/host-promise.mjs"], {
      cwd: root,
      env: plainNode(path.join(work, "promise")),
      timeout: 60_000
    })
    const id = /created post ([0-9a-f-]{36})/.exec(stdout)?.[1]
    expect(id).toBeDefined()
    expect(stdout).toContain(`post.published ${id}`)
    expect(stdout).toContain("lookup failed: not_found")
  }, 90_000)

  it("host-effect.ts composes Herald.layer, publishes and follows the outbox", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["examples/host-effect.ts"], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: sourceNodeOptions, HERALD_DATA_DIR: path.join(work, "effect") },
      timeout: 60_000
    })
    const id = /created post ([0-9a-f-]{36})/.exec(stdout)?.[1]
    expect(id).toBeDefined()
    expect(stdout).toContain(`post.published ${id}`)
    expect(stdout).toContain("lookup failed: not_found")
  }, 90_000)

  it(
    "http-host.mjs: its own route publishes or schedules a post, its handler logs post.published, SIGTERM stops it",
    async () => {
      const child = spawn(process.execPath, ["examples/http-host.mjs"], {
        cwd: root,
        env: { ...plainNode(path.join(work, "http")), PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      children.push(child)
      let out = ""
      child.stdout.on("data", (c) => (out += c))
      child.stderr.on("data", (c) => (out += c))
      const port = (await waitFor(() => out, /listening on http:\/\/127\.0\.0\.1:(\d+)/, 60_000))[1]
      const post = (body: unknown) =>
        fetch(`http://127.0.0.1:${port}/announcements`, { method: "POST", body: JSON.stringify(body) })

      const now = await post({ text: "We are live" })
      expect(now.status).toBe(201)
      const published = (await now.json()) as { post_id: string }
      await waitFor(() => out, new RegExp(`post\\.published ${published.post_id}`), 30_000)

      const at = new Date(Date.now() + 3_600_000).toISOString()
      const later = await post({ text: "Soon", at })
      expect(later.status).toBe(201)
      expect(await later.json()).toMatchObject({ status: "scheduled" })

      // The catalogue's code and status reach the host's own error handling.
      const past = await post({ text: "Too late", at: "2001-01-01T00:00:00Z" })
      expect(past.status).toBe(400)
      expect(await past.json()).toMatchObject({ error: "past_schedule_time" })

      child.kill("SIGTERM")
      const code = await new Promise((resolve) => child.once("exit", (c) => resolve(c)))
      expect(code).toBe(0)
    },
    120_000
  )
})
