/**
 * The media file generators, for the repo-level suites. They live in the adapters package's test
 * support so that package's own tests can use them too (a package's tests cannot reach outside it).
 *
 * Also here: `herald serve --sandbox` as a child process with a sandbox journal (one JSON line per
 * publish call, with the size and SHA-256 of every medium the sandbox read through the blob store).
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase } from "../../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "./HeraldServer.js"

export * from "../../packages/adapters/test/support/MediaFixtures.js"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: {
    readonly data: Record<string, unknown> & { readonly id: string }
    readonly error: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
  }
}

export interface SandboxServer {
  readonly baseUrl: string
  readonly key: string
  readonly dataDir: string
  readonly journal: string
  readonly request: (method: string, p: string, body?: unknown, key?: string | null) => Promise<Answer>
  /** Sends raw bytes (the upload URL needs no key). */
  readonly put: (url: string, bytes: Uint8Array | ReadableStream<Uint8Array>, contentType?: string) => Promise<Answer>
  readonly journalLines: () => ReadonlyArray<Record<string, unknown>>
  readonly cli: (args: ReadonlyArray<string>) => Promise<HeraldServer.CliResult>
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const parse = (text: string): Answer["json"] => {
  try {
    return JSON.parse(text) as Answer["json"]
  } catch {
    return { data: { id: "" }, error: { code: "", message: text } }
  }
}

export interface SandboxServerOptions {
  /** On a fresh Postgres database (dropped at stop). */
  readonly postgres?: boolean
  /** On this Postgres database, shared with other processes (left as it is at stop). */
  readonly databaseUrl?: string
  /** The API key, for a store another server bootstrapped (then none is printed). */
  readonly key?: string
  readonly env?: Record<string, string>
}

export const startSandboxServer = async (options: SandboxServerOptions = {}): Promise<SandboxServer> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-media-"))
  const journal = path.join(dataDir, "sandbox.jsonl")
  const db = options.postgres === true ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const databaseUrl = options.databaseUrl ?? db?.url
  const storeArgs = ["--data-dir", dataDir, ...(databaseUrl === undefined ? [] : ["--database-url", databaseUrl])]
  const child = spawn(process.execPath, [HeraldServer.bin, "serve", "--port", "0", "--sandbox", ...storeArgs], {
    env: {
      ...process.env,
      PORT: "",
      HERALD_DATA_DIR: "",
      HERALD_DATABASE_URL: "",
      HERALD_RATE_LIMIT_PER_MINUTE: "100000",
      HERALD_RATE_LIMIT_PER_HOUR: "100000",
      HERALD_SANDBOX_JOURNAL: journal,
      ...options.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const { key, port } = await new Promise<{ key: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const key = options.key ?? /HERALD_API_KEY=(pe_live_[0-9a-f]{32})/.exec(output)?.[1]
      const port = /Herald listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]
      if (key !== undefined && port !== undefined) {
        clearTimeout(timer)
        resolve({ key, port: Number(port) })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => reject(new Error(`exited ${code}:\n${output}`)))
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const request = async (method: string, p: string, body?: unknown, apiKey: string | null = key): Promise<Answer> => {
    const headers: Record<string, string> = {}
    if (apiKey !== null) headers["authorization"] = `Bearer ${apiKey}`
    if (body !== undefined) headers["content-type"] = "application/json"
    const r = await fetch(baseUrl + p, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await r.text()
    return { status: r.status, headers: r.headers, text, json: parse(text) }
  }
  const put = async (url: string, bytes: Uint8Array | ReadableStream<Uint8Array>, contentType?: string) => {
    const init: RequestInit & { duplex?: "half" } = {
      method: "PUT",
      headers: contentType === undefined ? {} : { "content-type": contentType },
      body: bytes as NonNullable<RequestInit["body"]>
    }
    if (!(bytes instanceof Uint8Array)) init.duplex = "half"
    const r = await fetch(url, init)
    const text = await r.text()
    return { status: r.status, headers: r.headers, text, json: parse(text) }
  }
  const journalLines = () =>
    fs.existsSync(journal)
      ? fs.readFileSync(journal, "utf8").split("\n").filter((l) => l !== "").map((l) =>
        JSON.parse(l) as Record<string, unknown>
      )
      : []
  const cli = (args: ReadonlyArray<string>) => HeraldServer.herald([...args, ...storeArgs])
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGTERM")
      await exited
    }
    if (db !== undefined) await Effect.runPromise(db.drop)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return { baseUrl, key, dataDir, journal, request, put, journalLines, cli, output: () => output, stop }
}
