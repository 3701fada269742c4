/**
 * Group commit keeps SQLite's promise: a `POST /posts` answered 201 is in the file even when the
 * server is killed with SIGKILL the moment the answer arrives. Concurrent creates are sent so that
 * they share commits; the server is killed on the first answer, and every post answered before the
 * kill is found by another connection that reopens the file.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { bin } from "../support/HeraldServer.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const post = (port: number, key: string, body: string) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port,
      path: "/api/v1/posts",
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body)
      }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

describe("group commit survives SIGKILL", () => {
  it("every post answered 201 before a SIGKILL is in the reopened SQLite file", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-kill-"))
    dirs.push(dir)
    const child = spawn(process.execPath, [bin, "serve", "--sandbox", "--port", "0", "--data-dir", dir], {
      env: {
        ...process.env,
        PORT: "",
        HERALD_DATA_DIR: "",
        HERALD_DATABASE_URL: "",
        HERALD_RATE_LIMIT_PER_MINUTE: "100000"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
    try {
      let output = ""
      child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")))
      const { port, key } = await new Promise<{ port: number; key: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000)
        child.stdout.on("data", (c: Buffer) => {
          output += c.toString("utf8")
          const found = /Herald listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]
          const printed = /HERALD_API_KEY=(pe_live_[0-9a-f]{32})/.exec(output)?.[1]
          if (found !== undefined && printed !== undefined) {
            clearTimeout(timer)
            resolve({ port: Number(found), key: printed })
          }
        })
      })
      const accounts = await fetch(`http://127.0.0.1:${port}/api/v1/accounts`, {
        headers: { authorization: `Bearer ${key}` }
      }).then((r) => r.json()) as { data: { accounts: Array<{ id: number; platform: string }> } }
      const target = accounts.data.accounts.find((a) => a.platform === "telegram")!.id

      const answered: Array<string> = []
      let killed = false
      const sends = Array.from(
        { length: 24 },
        (_, i) =>
          post(port, key, JSON.stringify({ content: `kill test ${i}`, account_ids: [target], draft: true })).then(
            (res) => {
              if (killed) return
              expect(res.status).toBe(201)
              answered.push((JSON.parse(res.text) as { data: { id: string } }).data.id)
              // Killed on the spot once a few answers are in: later members of the same groups are mid-commit.
              if (answered.length >= 3) {
                killed = true
                child.kill("SIGKILL")
              }
            },
            () => undefined // connections cut by the kill
          )
      )
      await Promise.all(sends)
      await exited
      expect(child.signalCode).toBe("SIGKILL")
      expect(answered.length).toBeGreaterThanOrEqual(3)

      const found = await Effect.runPromise(Effect.scoped(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ id: string }>`SELECT id FROM posts WHERE ${sql.in("id", answered)}`
        ).pipe(
          Effect.provide(SqlDatabase.layerClient({ _tag: "Sqlite", filename: path.join(dir, "herald.db") }))
        )
      ))
      expect(found.map((r) => r.id).sort()).toEqual([...answered].sort())
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    }
  }, 120_000)
})
