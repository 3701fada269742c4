/**
 * POST /posts requests per second over real HTTP: a `herald serve --sandbox` process on SQLite, and
 * concurrent keep-alive clients in this process creating drafts that target one account. Drafts are
 * validated, hashed and stored (post, targets, outbox) like any post, but publish nothing and are not
 * counted against the posting allowances (100 scheduled posts a minute), which would otherwise
 * answer 429 long before the server is busy.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

export type Result =
  | { readonly _tag: "Skipped"; readonly reason: string }
  | {
    readonly _tag: "Done"
    readonly requests: number
    readonly connections: number
    readonly seconds: number
    readonly p50: number
    readonly p99: number
  }

const repoRoot = path.resolve(import.meta.dirname, "..")

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const run = async (options: { readonly dataDir: string; readonly requests: number }): Promise<Result> => {
  fs.mkdirSync(options.dataDir, { recursive: true })
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [path.join(repoRoot, "packages/http/bin/herald.mjs"), "serve", "--sandbox", "--port", String(port)],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        HERALD_DATA_DIR: options.dataDir,
        HERALD_DATABASE_URL: "",
        HERALD_RATE_LIMIT_PER_MINUTE: "100000000",
        HERALD_RATE_LIMIT_PER_HOUR: "100000000"
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  child.stdout.on("data", (c) => (output += String(c)))
  child.stderr.on("data", (c) => (output = (output + String(c)).slice(-20_000)))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  try {
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline && !output.includes("listening on")) await sleep(100)
    const key = /HERALD_API_KEY=(\S+)/.exec(output)?.[1]
    if (key === undefined) return { _tag: "Skipped", reason: `server did not start:\n${output.slice(-2000)}` }
    const base = `http://127.0.0.1:${port}/api/v1`
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
    const accounts = await fetch(`${base}/accounts`, { headers }).then((r) => r.json()) as {
      data: { accounts: Array<{ id: number; platform: string }> }
    }
    const target = accounts.data.accounts.find((a) => a.platform === "telegram")?.id
    if (target === undefined) return { _tag: "Skipped", reason: "no sandbox account to post to" }
    const body = (i: number) => JSON.stringify({ content: `bench post ${i} ${Date.now()}`, account_ids: [target], draft: true })
    const probe = await fetch(`${base}/posts`, { method: "POST", headers, body: body(-1) })
    if (probe.status === 404) return { _tag: "Skipped", reason: "the server has no POST /posts endpoint yet" }
    if (probe.status >= 300) {
      return { _tag: "Skipped", reason: `POST /posts answered ${probe.status}: ${(await probe.text()).slice(0, 300)}` }
    }
    const connections = 16
    const latencies: Array<number> = []
    const failures = new Map<number, number>()
    let firstFailure = ""
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: connections }, async () => {
      while (next < options.requests) {
        const i = next++
        const t = performance.now()
        const response = await fetch(`${base}/posts`, { method: "POST", headers, body: body(i) })
        const text = await response.text()
        latencies.push(performance.now() - t)
        if (response.status >= 300) {
          failures.set(response.status, (failures.get(response.status) ?? 0) + 1)
          if (firstFailure === "") firstFailure = text.slice(0, 300)
        }
      }
    }))
    const seconds = (performance.now() - started) / 1000
    if (failures.size > 0) {
      return {
        _tag: "Skipped",
        reason: `non-2xx answers: ${JSON.stringify(Object.fromEntries(failures))}, first: ${firstFailure}`
      }
    }
    latencies.sort((a, b) => a - b)
    return {
      _tag: "Done",
      requests: options.requests,
      connections,
      seconds,
      p50: latencies[Math.floor(latencies.length * 0.5)]!,
      p99: latencies[Math.floor(latencies.length * 0.99)]!
    }
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}
