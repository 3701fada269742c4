/**
 * `herald serve` built in the test's own process: the same layers the command launches (the store,
 * the listener on a free port, the engine's services and the dispatcher), on a temporary data dir
 * (SQLite) or a fresh Postgres database, with the bootstrap key. Faster than a child process, and
 * what the process records (Effect's metric registry, spans) is visible to the test. Environment
 * variables the layers read (`HERALD_METRICS_TOKEN`, ...) must be set before `start`.
 */
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as Admin from "@herald/http/Admin"
import * as Health from "@herald/http/groups/Health"
import * as RateLimit from "@herald/http/RateLimit"
import * as Server from "@herald/http/Server"
import * as Worker from "@herald/http/Worker"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase } from "../../packages/adapters/test/support/TestDatabases.js"

export interface Response {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

export type StoreServices = Layer.Layer.Success<ReturnType<typeof Server.services>>

export interface InProcessServer {
  readonly baseUrl: string
  readonly key: string
  readonly label: "sqlite" | "postgres"
  /** A request with the bootstrap key (`key: null` sends none), JSON body when given. */
  readonly request: (
    method: string,
    path: string,
    options?: { readonly body?: unknown; readonly key?: string | null; readonly headers?: Record<string, string> }
  ) => Promise<Response>
  /** Runs a program on the server's own store services. */
  readonly withStore: <A, E>(program: Effect.Effect<A, E, StoreServices>) => Promise<A>
  /** Stops the listener and the dispatcher, closes the store, removes the data dir. */
  readonly stop: () => Promise<void>
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const start = async (options: {
  readonly postgres?: boolean
  /** The dispatcher's longest sleep between looks at the store (default 100 ms). */
  readonly pollMillis?: number
  /** Platforms through the sandbox (the default), with one sandbox account per platform. */
  readonly sandbox?: boolean
  /** More layers for the engine (e.g. a tracer), provided to everything the server runs. */
  readonly around?: Layer.Layer<never>
} = {}): Promise<InProcessServer> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-inprocess-server-"))
  const pg = options.postgres === true ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const database = SqlDatabase.configFrom({ dataDir, databaseUrl: pg?.url })
  const sandbox = options.sandbox ?? true
  const services = Server.services({ database, rateLimits: RateLimit.defaults, dataDir, sandbox })
  // Warnings and errors only: the request and publish lines would bury the test's own output.
  const quiet = Logger.minimumLogLevel(LogLevel.Warning)
  const runtime = ManagedRuntime.make(Layer.provideMerge(services, Layer.merge(quiet, options.around ?? Layer.empty)))
  const boot = await runtime.runPromise(Admin.bootstrap)
  if (Option.isNone(boot)) throw new Error("a fresh store was expected")
  if (sandbox) await runtime.runPromise(Worker.sandboxBootstrap)
  let fiber: Fiber.RuntimeFiber<never, unknown> | undefined
  const port = await new Promise<number>((resolve, reject) => {
    const launched = Health.layerMarkShuttingDownOnRelease.pipe(
      Layer.provide(Worker.layer({ processKind: "serve", pollMillis: options.pollMillis ?? 100 })),
      Layer.provide(Server.listen({ port: 0, host: "127.0.0.1", onListening: (p) => Effect.sync(() => resolve(p)) })),
      Layer.provide(Worker.layerEngineServices({ sandbox })),
      Layer.provide(Health.layerShutdownState),
      Layer.launch
    )
    fiber = runtime.runFork(launched)
    fiber.addObserver((exit) => reject(new Error(`the server stopped: ${String(exit)}`)))
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const key = boot.value.token
  return {
    baseUrl,
    key,
    label: pg === undefined ? "sqlite" : "postgres",
    request: async (method, urlPath, opts = {}) => {
      const headers: Record<string, string> = { ...opts.headers }
      const apiKey = opts.key === undefined ? key : opts.key
      if (apiKey !== null) headers["authorization"] = `Bearer ${apiKey}`
      if (opts.body !== undefined) headers["content-type"] = "application/json"
      const response = await fetch(baseUrl + urlPath, {
        method,
        headers,
        ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) })
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, json: parse(text) }
    },
    withStore: (program) => runtime.runPromise(program),
    stop: async () => {
      if (fiber !== undefined) await runtime.runPromise(Fiber.interrupt(fiber))
      await runtime.dispose()
      if (pg !== undefined) await Effect.runPromise(pg.drop)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
