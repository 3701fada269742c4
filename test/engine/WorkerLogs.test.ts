/**
 * `herald worker` logs as `herald serve` does: logfmt lines on stderr through the batching sink
 * (`LogSink`), stdout left empty. The default pretty logger wrote every line synchronously through
 * `console.log` on stdout, a sixth of a worker's CPU while it drained a backlog.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as W from "./WorkerProcesses.js"

const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-worker-logs-"))
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

const startLine = async (env: NodeJS.ProcessEnv) => {
  const { args, command } = W.workerCommand()
  const child = spawn(command, [...args, "--sandbox", "--data-dir", work], {
    cwd: W.repoRoot,
    env: { ...process.env, HERALD_DATABASE_URL: "", HERALD_DATA_DIR: "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += String(chunk)))
  child.stderr.on("data", (chunk) => (stderr += String(chunk)))
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
  const deadline = Date.now() + 50_000
  while (!stderr.includes("Dispatcher started") && !stdout.includes("Dispatcher started") && Date.now() < deadline) {
    if (child.exitCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill("SIGTERM")
  expect(await exited).toBe(0)
  expect(stdout).toBe("")
  return stderr.split("\n").find((line) => line.includes("Dispatcher started"))
}

describe("herald worker logs", () => {
  it("writes logfmt lines to stderr and nothing to stdout", async () => {
    const started = await startLine({ HERALD_LOG_LEVEL: "" })
    expect(started).toMatch(/^timestamp=\S+ level=INFO fiber=#\d+ message="Dispatcher started \(worker [^)]+\)"/)
  }, 60_000)

  // Supervisors (and the test helpers, which run workers at HERALD_LOG_LEVEL=warning) see it start.
  it("writes its start line at every HERALD_LOG_LEVEL", async () => {
    const started = await startLine({ HERALD_LOG_LEVEL: "error" })
    expect(started).toMatch(/^timestamp=\S+ level=INFO fiber=#\d+ message="Dispatcher started \(worker [^)]+\)"/)
  }, 60_000)
})
