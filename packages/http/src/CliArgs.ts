/**
 * The `herald` command's arguments: the usage text, the options, and the settings every subcommand
 * reads (the data dir and database, from flags or their environment variables).
 */
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import { parseArgs } from "node:util"
import * as LogSink from "./LogSink.js"

export const usage = `Usage:
  herald serve [--port N] [--host H] [--data-dir DIR] [--database-url URL] [--sandbox]
  herald worker [--sandbox] [--batch-size N] [--concurrency N] [--lease-seconds N] [--poll-ms N]
  herald migrate [--check]                  (--check: list what would be applied, change nothing)
  herald backup --to FILE                   (SQLite: store, secret.key, media files; while serving)
  herald restore --from FILE                (into a new or empty --data-dir)
  herald keys create [--org ID] [--scopes read,write,ai] [--accounts 1,2] [--expires ISO] [--name N]
  herald keys list [--org ID]
  herald keys revoke ID
  herald orgs create NAME [--plan P] [--status S]
  herald orgs list
  herald orgs set-plan ID PLAN [--status S]
  herald users create EMAIL [--role owner|admin|member] [--org ID] [--name N]
  herald users list [--org ID]
  herald users set-role USER ROLE          (USER: an id or an email)
  herald users reset-password USER
  herald device approve CODE [--org ID]
  herald device deny CODE
  herald queue set [--org ID] --timezone ZONE --slots "mon-fri 09:00,12:30;sat 10:00"
  herald queue show [--org ID]

Every command also takes --data-dir DIR (env HERALD_DATA_DIR, default ./.herald) and
--database-url URL (env HERALD_DATABASE_URL; a postgres:// URL, else SQLite in the data dir).
serve also reads PORT (default 8080), HERALD_HOST (default 127.0.0.1),
HERALD_RATE_LIMIT_PER_MINUTE (default 60) and HERALD_RATE_LIMIT_PER_HOUR (default 1000).`

export class UsageError extends Error {}

const options = {
  port: { type: "string" },
  host: { type: "string" },
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
  sandbox: { type: "boolean" },
  "batch-size": { type: "string" },
  concurrency: { type: "string" },
  "lease-seconds": { type: "string" },
  "poll-ms": { type: "string" },
  org: { type: "string" },
  scopes: { type: "string" },
  accounts: { type: "string" },
  expires: { type: "string" },
  name: { type: "string" },
  plan: { type: "string" },
  status: { type: "string" },
  timezone: { type: "string" },
  slots: { type: "string" },
  role: { type: "string" },
  to: { type: "string" },
  from: { type: "string" },
  check: { type: "boolean" },
  help: { type: "boolean", short: "h" }
} as const

export type Values = ReturnType<typeof parse>["values"]

export const parse = (argv: ReadonlyArray<string>) =>
  parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })

export const env = (name: string): string | undefined => {
  const value = process.env[name]
  return value === undefined || value === "" ? undefined : value
}

export const positiveInt = (raw: string, what: string): number => {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`${what} must be a non-negative integer: ${raw}`)
  return n
}

export const dataDir = (values: Values): string => values["data-dir"] ?? env("HERALD_DATA_DIR") ?? ".herald"

export const databaseConfig = (values: Values): SqlDatabase.DatabaseConfig =>
  SqlDatabase.configFrom({
    dataDir: dataDir(values),
    databaseUrl: values["database-url"] ?? env("HERALD_DATABASE_URL"),
    sqliteReaders: sqliteReaders()
  })

/** `HERALD_SQLITE_READERS`: threads running SQLite reads off the event loop (0: none). */
const sqliteReaders = (): number | undefined => {
  const raw = env("HERALD_SQLITE_READERS")
  return raw === undefined ? undefined : positiveInt(raw, "HERALD_SQLITE_READERS")
}

export const oneOf = <const A extends ReadonlyArray<string>>(allowed: A, raw: string, what: string): A[number] => {
  if (!allowed.includes(raw)) throw new UsageError(`${what} must be one of ${allowed.join(", ")}: ${raw}`)
  return raw
}

export const list = (raw: string): Array<string> => raw.split(",").map((s) => s.trim()).filter((s) => s !== "")

/**
 * Logs go to stderr, so stdout carries only what a command prints (a key, an id): logfmt, or JSON with
 * HERALD_LOG_FORMAT=json, one line per entry, written in batches once per turn of the event loop
 * (LogSink.ts).
 */
export const quietLogger = LogSink.layerFromEnv
