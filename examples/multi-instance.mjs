/**
 * Multi-instance walkthrough: two `herald serve` and two `herald worker` processes on one Postgres
 * database. It migrates, starts them, publishes posts through both servers, waits until every post is
 * published (each destination sent exactly once, whichever process claimed it), and stops them all
 * with SIGTERM.
 *
 *   HERALD_DATABASE_URL=postgres://postgres@127.0.0.1:5432/herald node examples/multi-instance.mjs
 *
 * Use a database of its own: the first server bootstraps an organization when the store is empty.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const url = process.env.HERALD_DATABASE_URL
if (!url) {
  console.error("Set HERALD_DATABASE_URL to a Postgres database of its own")
  process.exit(2)
}
const bin = fileURLToPath(new URL("../packages/http/bin/herald.mjs", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-walkthrough-"))
const posts = Number(process.env.POSTS ?? "6")
// One credentials key for every process (each would otherwise generate its own in its data dir).
const env = {
  ...process.env,
  HERALD_DATABASE_URL: url,
  HERALD_SECRET: process.env.HERALD_SECRET ?? "walkthrough-secret"
}

const processes = []
const start = (name, args) => {
  const journal = path.join(dir, `${name}.jsonl`)
  const child = spawn(process.execPath, [bin, ...args, "--data-dir", path.join(dir, name)], {
    env: { ...env, HERALD_SANDBOX_JOURNAL: journal, HERALD_SANDBOX_LATENCY_MS: "200" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const proc = { name, child, journal, output: "" }
  child.stdout.on("data", (c) => (proc.output += c))
  child.stderr.on("data", (c) => (proc.output += c))
  processes.push(proc)
  return proc
}
const waitFor = async (proc, pattern) => {
  for (let i = 0; i < 1200; i++) {
    const found = pattern.exec(proc.output)
    if (found) return found
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited:\n${proc.output}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${proc.name}: no ${pattern}:\n${proc.output}`)
}
const sends = (proc) =>
  fs.existsSync(proc.journal) ? fs.readFileSync(proc.journal, "utf8").trim().split("\n").filter(Boolean).length : 0

try {
  // 1. The first server migrates, bootstraps the organization and its key, and connects sandbox accounts.
  const serveA = start("serve-a", ["serve", "--port", "0", "--sandbox"])
  const key = (await waitFor(serveA, /HERALD_API_KEY=(pe_live_[0-9a-f]{32})/))[1]
  const portA = (await waitFor(serveA, /listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]
  // 2. A second server and two workers on the same database.
  const serveB = start("serve-b", ["serve", "--port", "0", "--sandbox"])
  const portB = (await waitFor(serveB, /listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]
  const workers = [start("worker-1", ["worker", "--sandbox"]), start("worker-2", ["worker", "--sandbox"])]
  for (const w of workers) await waitFor(w, /Dispatcher started/)
  console.log(`servers on ${portA} and ${portB}, 2 workers`)

  const api = async (port, method, urlPath, body) => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {})
    })
    return { status: response.status, body: await response.json() }
  }

  // 3. Publish through both servers; read back through the other one.
  const ids = []
  for (let i = 0; i < posts; i++) {
    const port = i % 2 === 0 ? portA : portB
    const created = await api(port, "POST", "/posts", { content: `Walkthrough post ${i + 1}`, account_ids: [1] })
    if (created.status !== 201) throw new Error(`POST /posts: ${JSON.stringify(created.body)}`)
    ids.push(created.body.data.id)
  }
  for (const [i, id] of ids.entries()) {
    const port = i % 2 === 0 ? portB : portA
    for (let tries = 0;; tries++) {
      const got = await api(port, "GET", `/posts/${id}`)
      if (got.body.data.status === "published") break
      if (tries > 600) throw new Error(`post ${id} is ${got.body.data.status}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const perProcess = processes.map((p) => `${p.name}=${sends(p)}`).join(" ")
  const total = processes.reduce((n, p) => n + sends(p), 0)
  console.log(`published ${ids.length} posts; sends per process: ${perProcess}; total sends ${total}`)
} finally {
  // 4. Stop everything gracefully.
  const codes = await Promise.all(
    processes.map((p) =>
      p.child.exitCode !== null ? Promise.resolve(p.child.exitCode) : new Promise((resolve) => {
        p.child.once("exit", (code) => resolve(code))
        p.child.kill("SIGTERM")
      })
    )
  )
  console.log(`stopped: ${processes.map((p, i) => `${p.name}=${codes[i]}`).join(" ")}`)
  fs.rmSync(dir, { recursive: true, force: true })
}
