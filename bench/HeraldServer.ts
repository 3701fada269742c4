/**
 * A `herald serve --sandbox` child process for benches: started on a free port in its own data dir
 * with the rate limits raised, its printed API key captured, its RSS readable from /proc.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

const repoRoot = path.resolve(import.meta.dirname, "..")

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

/** The newest modification time (ms) of any file under `dir`. */
const newestUnder = (dir: string): number => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

const freshRoots = new Set<string>()

/**
 * Refuses to bench a build older than the sources. The `herald` processes a bench starts run the CLI
 * bundle (`packages/http/dist/bin/herald.mjs`), and the in-process parts the compiled `dist/`, unless
 * Node runs the sources (`--conditions=herald-source` in `nodeOptions`, by default NODE_OPTIONS).
 * `tsc -b` alone rebuilds `dist/` but not the bundle, and a bench on a stale bundle measures the code
 * as it was, silently; `npm run build` makes both, the bundle last, so a bundle newer than every
 * source file means both are current.
 */
export const requireFreshBuild = (options: { readonly root?: string; readonly nodeOptions?: string } = {}): void => {
  const root = options.root ?? repoRoot
  if ((options.nodeOptions ?? process.env.NODE_OPTIONS ?? "").includes("herald-source") || freshRoots.has(root)) return
  const bundle = path.join(root, "packages/http/dist/bin/herald.mjs")
  const built = fs.existsSync(bundle) ? fs.statSync(bundle).mtimeMs : 0
  const stale = ["core", "adapters", "http"].find((pkg) => newestUnder(path.join(root, "packages", pkg, "src")) > built)
  if (stale !== undefined) {
    throw new Error(`packages/${stale}/src changed after the last build of ${root}: run \`npm run build\` first`)
  }
  freshRoots.add(root)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface HeraldServer {
  readonly child: ChildProcess
  readonly base: string
  readonly key: string
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/**
 * The sandbox's Telegram account (every bench's drafts target it), read through `GET /accounts`;
 * `text` is the answer as sent, for a peer seeded with the same accounts.
 */
export const draftAccount = async (
  base: string,
  key: string
): Promise<{ readonly id: number; readonly text: string }> => {
  const text = await (await fetch(`${base}/accounts`, { headers: { authorization: `Bearer ${key}` } })).text()
  const accounts = JSON.parse(text) as { data: { accounts: Array<{ id: number; platform: string }> } }
  const id = accounts.data.accounts.find((a) => a.platform === "telegram")?.id
  if (id === undefined) throw new Error("no sandbox telegram account")
  return { id, text }
}

/** The body of the i-th draft a bench creates on `accountId` (the same for Herald and its peers). */
export const draftBody = (accountId: number) => (i: number): string =>
  JSON.stringify({ content: `bench post ${i}`, account_ids: [accountId], draft: true })

/** Resident set size of a process in MiB (Linux /proc), NaN when unreadable. */
export const rssMiB = (pid: number | undefined): number => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
    return kb / 1024
  } catch {
    return NaN
  }
}

export const start = async (options: {
  readonly dataDir: string
  readonly nodeArgs?: ReadonlyArray<string>
  readonly env?: Record<string, string>
  /** Another checkout's built CLI (an A/B against a baseline build); this one by default. */
  readonly repoRoot?: string
  /** The key of a data dir started before (a restarted sandbox prints none). */
  readonly key?: string
}): Promise<HeraldServer> => {
  const root = options.repoRoot ?? repoRoot
  requireFreshBuild({ root })
  fs.mkdirSync(options.dataDir, { recursive: true })
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [
      // BENCH_HERALD_NODE_ARGS: Node flags for every Herald server a bench starts (e.g. `--cpu-prof
      // --cpu-prof-dir=/tmp/p`, which NODE_OPTIONS does not allow), unless the bench passes its own.
      ...(options.nodeArgs ?? (process.env.BENCH_HERALD_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")),
      path.join(root, "packages/http/bin/herald.mjs"),
      "serve",
      "--sandbox",
      "--port",
      String(port)
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        HERALD_DATA_DIR: options.dataDir,
        HERALD_DATABASE_URL: "",
        HERALD_RATE_LIMIT_PER_MINUTE: "100000000",
        HERALD_RATE_LIMIT_PER_HOUR: "100000000",
        ...options.env
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  child.stdout!.on("data", (c) => (output = (output + String(c)).slice(-200_000)))
  child.stderr!.on("data", (c) => (output = (output + String(c)).slice(-200_000)))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM")
    await exited
  }
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline && !output.includes("listening on") && child.exitCode === null) await sleep(50)
  const key = options.key ?? /HERALD_API_KEY=(\S+)/.exec(output)?.[1]
  if (key === undefined) {
    await stop()
    throw new Error(`server did not start:\n${output.slice(-2000)}`)
  }
  return { child, base: `http://127.0.0.1:${port}/api/v1`, key, output: () => output, stop }
}

/**
 * A peer server for a side-by-side bench: `node <script> ...args` started with NODE_OPTIONS cleared,
 * ready once it prints "listening" (at most 20 s), its API base on 127.0.0.1:`port`.
 */
export const startPeer = async (options: {
  readonly script: string
  readonly args: ReadonlyArray<string>
  readonly port: number
  readonly env?: Record<string, string>
}) => {
  const child = spawn(process.execPath, [options.script, ...options.args], {
    env: { ...process.env, ...options.env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (c) => (output += String(c)))
  child.stderr!.on("data", (c) => (output += String(c)))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && !output.includes("listening") && child.exitCode === null) await sleep(20)
  if (!output.includes("listening")) throw new Error(`peer did not start:\n${output}`)
  return {
    child,
    base: `http://127.0.0.1:${options.port}/api/v1`,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}
