/**
 * The conformance suite's server: the real `herald serve` as a child process, on a free port, with a
 * temporary data dir (SQLite) or a fresh Postgres database. It parses the printed port and the
 * bootstrap key, sends requests over loopback, runs the `herald` command against the same store,
 * and can seed the store directly (accounts have no create endpoint).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as ApiKey from "@herald/core/access/ApiKey"
import * as Organization from "@herald/core/access/Organization"
import { AccountId } from "@herald/core/kernel/Ids"
import * as Admin from "@herald/http/Admin"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as StoreFaults from "@herald/adapters/sql/StoreFaults"
import * as Server from "@herald/http/Server"
import * as RateLimit from "@herald/http/RateLimit"
import { createFreshPgDatabase } from "../../packages/adapters/test/support/TestDatabases.js"
import { bin } from "./HeraldBin.js"
import type * as Layer from "effect/Layer"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
export { bin }

export interface Response {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body; undefined when it is not JSON. */
  readonly json: unknown
}

export interface RequestOptions {
  /** The API key; defaults to the bootstrap key. `null` sends no Authorization header. */
  readonly key?: string | null
  readonly body?: unknown
  /** A body sent as is (for malformed JSON). */
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface KeyOptions {
  readonly org?: string
  readonly scopes?: ReadonlyArray<string>
  readonly accounts?: ReadonlyArray<number>
  readonly expires?: string
  readonly name?: string
}

export interface OrgOptions {
  readonly name: string
  readonly plan?: string
  readonly status?: string
}

export type StoreServices = Layer.Layer.Success<ReturnType<typeof Server.services>>

export interface HeraldServer {
  readonly baseUrl: string
  readonly port: number
  /** The server process's id (to read its memory from /proc). */
  readonly pid: number
  /** The key printed on first start. */
  readonly key: string
  /** The organization created on first start; keys are created for it unless told otherwise. */
  readonly orgId: string
  readonly storeArgs: ReadonlyArray<string>
  readonly label: "sqlite" | "postgres"
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<Response>
  readonly cli: (args: ReadonlyArray<string>) => Promise<CliResult>
  /** What `herald keys create` does, run in-process against the same store; returns the key. */
  readonly createKey: (options?: KeyOptions) => Promise<string>
  /** What `herald orgs create` does, run in-process against the same store; returns the organization's id. */
  readonly createOrg: (options: OrgOptions) => Promise<string>
  /** Runs a program against the server's store, from this process. */
  readonly withStore: <A, E>(program: Effect.Effect<A, E, StoreServices>) => Promise<A>
  /** Everything the server wrote to stdout and stderr so far. */
  readonly output: () => string
  /** What the server wrote to stderr (its log lines) so far. */
  readonly errors: () => string
  /** SIGTERM, then removes the data dir (and drops the Postgres database); resolves with the exit code. */
  readonly stop: () => Promise<number | null>
}

export interface StartOptions {
  readonly env?: Record<string, string>
  /** Runs on a fresh Postgres database instead of SQLite. */
  readonly postgres?: boolean
  /**
   * With `postgres`: the server reaches Postgres through this port on 127.0.0.1 (a proxy the test
   * controls, to cut the database off); the test's own store access goes direct.
   */
  readonly postgresVia?: number
  /** More `herald serve` arguments, e.g. `--sandbox`. */
  readonly args?: ReadonlyArray<string>
}

const runCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const isJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Runs `herald` with the given arguments (no server), e.g. against a data dir of one's own. */
export const herald = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => runCli(args, env)

export const start = async (options: StartOptions = {}): Promise<HeraldServer> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-conformance-"))
  const pg = options.postgres === true ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const serverPgUrl = pg === undefined || options.postgresVia === undefined
    ? pg?.url
    : Object.assign(new URL(pg.url), { hostname: "127.0.0.1", port: String(options.postgresVia) }).toString()
  const storeArgs = ["--data-dir", dataDir, ...(serverPgUrl === undefined ? [] : ["--database-url", serverPgUrl])]
  const database = SqlDatabase.configFrom({ dataDir, databaseUrl: pg?.url })
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...(options.args ?? []), ...storeArgs], {
    cwd: root,
    env: { ...process.env, PORT: "", HERALD_DATA_DIR: "", HERALD_DATABASE_URL: "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  let errors = ""
  const started = new Promise<{ port: number; key: string }>((resolve, reject) => {
    let key: string | undefined
    const timer = setTimeout(() => reject(new Error(`herald serve did not start within 60 s:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      key ??= /HERALD_API_KEY=(pe_live_[0-9a-f]{32})/.exec(output)?.[1]
      const port = /Herald listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]
      if (port !== undefined) {
        clearTimeout(timer)
        if (key === undefined) reject(new Error(`no bootstrap key printed:\n${output}`))
        else resolve({ port: Number(port), key })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      errors += chunk.toString("utf8")
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`herald serve exited with ${code}:\n${output}`))
    })
  })
  const { key, port } = await started
  const baseUrl = `http://127.0.0.1:${port}`

  const request = async (method: string, urlPath: string, opts: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...opts.headers }
    const apiKey = opts.key === undefined ? key : opts.key
    if (apiKey !== null) headers["authorization"] = `Bearer ${apiKey}`
    let body: string | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) body = JSON.stringify(opts.body)
    if (body !== undefined) headers["content-type"] ??= "application/json"
    const response = await fetch(baseUrl + urlPath, { method, headers, ...(body === undefined ? {} : { body }) })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, json: isJson(text) }
  }

  const cli = (args: ReadonlyArray<string>) => runCli([...args, ...storeArgs])

  const me = await request("GET", "/api/v1/me")
  const orgId = (me.json as { data?: { organization?: { id?: string } } } | undefined)?.data?.organization?.id
  if (me.status !== 200 || orgId === undefined) throw new Error(`GET /api/v1/me with the bootstrap key: ${me.text}`)

  // The test writes the SQLite file from a second connection beside the running server. A deferred
  // transaction whose snapshot went stale while it waited for the write lock fails at once with
  // SQLITE_BUSY (the busy timeout does not cover it), so the whole program is tried again.
  const withStore = <A, E>(program: Effect.Effect<A, E, StoreServices>): Promise<A> =>
    Effect.runPromise(
      Effect.scoped(
        program.pipe(Effect.provide(Server.services({ database, rateLimits: RateLimit.defaults, dataDir })))
      ).pipe(
        Effect.retry({ while: StoreFaults.isStoreUnavailable, schedule: Schedule.spaced("50 millis"), times: 10 })
      )
    )

  // What `herald keys create` runs once it has parsed its arguments, run here against the same store:
  // a process per key cost a second or more each, and the command itself is tested in Cli.test.ts.
  const createKey = async (opts: KeyOptions = {}): Promise<string> => {
    const expiresAt = opts.expires === undefined ? undefined : DateTime.make(opts.expires)
    if (expiresAt !== undefined && Option.isNone(expiresAt)) throw new Error(`not an ISO instant: ${opts.expires}`)
    const created = await withStore(Effect.gen(function*() {
      const org = yield* Admin.resolveOrganization(opts.org ?? orgId)
      return yield* Admin.createKey({
        organizationId: org.id,
        name: opts.name,
        scopes: opts.scopes === undefined
          ? undefined
          : Schema.decodeUnknownSync(Schema.Array(ApiKey.Scope))(opts.scopes),
        accountIds: opts.accounts === undefined
          ? undefined
          : Schema.decodeUnknownSync(Schema.Array(AccountId))(opts.accounts),
        expiresAt: expiresAt === undefined ? undefined : DateTime.toUtc(expiresAt.value)
      })
    }))
    return created.token
  }

  // `herald orgs create` likewise (the command is tested in Cli.test.ts): a process per organization
  // cost about 3.5 s each on a slow machine.
  const createOrg = async (opts: OrgOptions): Promise<string> => {
    const org = await withStore(Admin.createOrganization({
      name: opts.name,
      plan: opts.plan === undefined ? undefined : Schema.decodeUnknownSync(Organization.Plan)(opts.plan),
      status: opts.status === undefined
        ? undefined
        : Schema.decodeUnknownSync(Organization.SubscriptionStatus)(opts.status)
    }))
    return org.id
  }

  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGTERM")
      await exited
    }
    if (pg !== undefined) await Effect.runPromise(pg.drop)
    fs.rmSync(dataDir, { recursive: true, force: true })
    return child.exitCode
  }

  return {
    baseUrl,
    port,
    pid: child.pid!,
    key,
    orgId,
    storeArgs,
    label: pg === undefined ? "sqlite" : "postgres",
    request,
    cli,
    createKey,
    createOrg,
    withStore,
    output: () => output,
    errors: () => errors,
    stop
  }
}
