/**
 * The `herald` command. Every subcommand reads its store from --data-dir / --database-url (or
 * HERALD_DATA_DIR / HERALD_DATABASE_URL); the default is SQLite in ./.herald.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type { MigrationError } from "@effect/sql/Migrator"
import type { SqlError } from "@effect/sql/SqlError"
import * as Migrations from "@herald/adapters/sql/Migrations"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as Admin from "./Admin.js"
import * as Backup from "./Backup.js"
import { adminCommand, runAdmin, setPasswordLink } from "./CliAdmin.js"
import {
  databaseConfig,
  dataDir,
  env,
  parse,
  positiveInt,
  quietLogger,
  usage,
  UsageError,
  type Values
} from "./CliArgs.js"
import * as Config from "./Config.js"
import * as Health from "./groups/Health.js"
import * as LogSink from "./LogSink.js"
import * as OtlpTracing from "./OtlpTracing.js"
import * as RateLimit from "./RateLimit.js"
import * as Server from "./Server.js"
import * as Worker from "./Worker.js"

const rateLimits = (): RateLimit.Limits => ({
  perMinute: positiveInt(
    env("HERALD_RATE_LIMIT_PER_MINUTE") ?? String(RateLimit.defaults.perMinute),
    "HERALD_RATE_LIMIT_PER_MINUTE"
  ),
  perHour: positiveInt(
    env("HERALD_RATE_LIMIT_PER_HOUR") ?? String(RateLimit.defaults.perHour),
    "HERALD_RATE_LIMIT_PER_HOUR"
  )
})

/** Runs an operations command (no store services, no migrations); failures are one `herald:` line. */
const runOperation = (
  program: Effect.Effect<number, Backup.BackupError | SqlError | MigrationError>
): Promise<number> =>
  Effect.runPromiseExit(program.pipe(Effect.provide(quietLogger), Logger.withMinimumLogLevel(LogLevel.Warning)))
    .then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
      process.stderr.write(
        `herald: ${failure instanceof Backup.BackupError ? failure.message : Cause.pretty(exit.cause)}\n`
      )
      return 1
    })

const backupCommand = (values: Values) => {
  if (values.to === undefined) throw new UsageError("backup needs --to FILE")
  const to = values.to
  return runOperation(Effect.gen(function*() {
    const { file, manifest } = yield* Backup.backup({
      database: databaseConfig(values),
      dataDir: dataDir(values),
      to,
      env: process.env
    })
    yield* Console.error(
      `herald: backup of the store as of ${manifest.created_at} (migration ${manifest.migration ?? "none"}), ` +
        (manifest.media === "files"
          ? `${manifest.media_files} media files`
          : "media not included (they are in the bucket)") +
        (manifest.secret_key ? ", secret.key" : "")
    )
    if (env("HERALD_SECRET") !== undefined) {
      yield* Console.error(
        "herald: credentials are encrypted with HERALD_SECRET: keep it with the backup, apart from it"
      )
    }
    yield* Console.log(file)
    return 0
  }))
}

const restoreCommand = (values: Values) => {
  if (values.from === undefined) throw new UsageError("restore needs --from FILE")
  if ((values["database-url"] ?? env("HERALD_DATABASE_URL")) !== undefined) {
    throw new UsageError("restore writes the SQLite store of a data dir; restore Postgres with pg_restore or psql")
  }
  const from = values.from
  return runOperation(Effect.gen(function*() {
    const restored = yield* Backup.restore({ from, dataDir: dataDir(values) })
    yield* Console.error(
      `herald: restored the store as of ${restored.manifest.created_at} into ${dataDir(values)}, ` +
        `${restored.mediaFiles} media files${restored.manifest.secret_key ? ", secret.key" : ""}` +
        (restored.pending.length === 0 ? "" : `; the next start applies ${restored.pending.length} migrations`)
    )
    return 0
  }))
}

/**
 * `herald migrate --check`: the migrations this build would apply (stdout, one per line), without
 * applying any, nor creating a store that is not there. Exit 0 when none, 3 when some would be.
 */
const migrateCheck = (values: Values) => {
  const database = databaseConfig(values)
  return runOperation(Effect.gen(function*() {
    const missing = database._tag === "Sqlite" && !fs.existsSync(database.filename)
    const check = missing
      ? { pending: (yield* Migrations.loader).map(([id, name]) => Migrations.label(id, name)), unknown: [] }
      : yield* Migrations.check.pipe(Effect.provide(SqlDatabase.layerClient(database)), Effect.scoped)
    for (const migration of check.pending) yield* Console.log(migration)
    if (check.unknown.length > 0) {
      yield* Console.error(
        `herald: the store has migrations this build does not know (a newer Herald applied them): ${
          check.unknown.join(", ")
        }`
      )
    }
    yield* Console.error(
      check.pending.length === 0
        ? "herald: nothing to apply"
        : `herald: ${check.pending.length} migrations would be applied${missing ? " (there is no store yet)" : ""}`
    )
    return check.pending.length === 0 ? 0 : 3
  }))
}

const serve = (values: Values): void => {
  const port = positiveInt(values.port ?? env("PORT") ?? "8080", "port")
  const host = values.host ?? env("HERALD_HOST") ?? "127.0.0.1"
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host
  const limits = rateLimits()
  const program = Effect.gen(function*() {
    const boot = yield* Admin.bootstrap
    if (Option.isSome(boot)) {
      const { organization, token } = boot.value
      yield* Console.log(
        `Herald: first start on an empty store. Created organization "${organization.name}" ` +
          `(${organization.id}), on a ${Admin.defaultTrialDays}-day trial.\n` +
          `Herald: its API key, shown only this once (keep it; the store holds only its hash):\n` +
          `HERALD_API_KEY=${token}`
      )
    }
    if (values.sandbox === true) yield* Worker.sandboxBootstrap
    // Built in this order, released in the reverse: on SIGTERM readiness turns 503 first, then the
    // dispatcher drains while the listener still answers, then the listener closes.
    return yield* Layer.launch(Health.layerMarkShuttingDownOnRelease.pipe(
      Layer.provide(Worker.layer({ processKind: "serve", ...workerOptions(values) })),
      Layer.provide(Server.listen({
        port,
        host,
        onListening: (real) =>
          Effect.zipRight(
            Console.log(`Herald listening on http://${shownHost}:${real}`),
            Option.match(boot, {
              onNone: () => Effect.void,
              onSome: ({ owner, passwordToken }) =>
                Console.log(
                  `Herald: the owner (${owner.email}) sets a dashboard password within 24 hours at:\n` +
                    `HERALD_OWNER_LINK=${
                      setPasswordLink(env("HERALD_PUBLIC_URL") ?? `http://${shownHost}:${real}`, passwordToken)
                    }`
                )
            })
          )
      })),
      Layer.provide(Worker.layerEngineServices({
        sandbox: values.sandbox === true,
        sandboxLedger: Worker.defaultSandboxLedger(databaseConfig(values), dataDir(values))
      })),
      Layer.provide(Health.layerShutdownState)
    ))
  }).pipe(
    Effect.provide(Server.services({
      database: databaseConfig(values),
      rateLimits: limits,
      dataDir: dataDir(values),
      sandbox: values.sandbox === true
    })),
    // Traces exported over OTLP when the OTEL_* variables ask for it; flushed when the process stops.
    Effect.provide(OtlpTracing.layerFromEnv),
    Effect.provide(quietLogger)
  )
  boundShutdown()
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

/**
 * On SIGTERM/SIGINT the runtime stops gracefully (no new claims; the publishes in flight finish). If
 * that takes longer than HERALD_SHUTDOWN_TIMEOUT_SECONDS (default 30), the process exits 1 anyway: its
 * claims are released when their lease ends, as for a crashed worker.
 */
const boundShutdown = (): void => {
  const raw = Number(env("HERALD_SHUTDOWN_TIMEOUT_SECONDS") ?? "30")
  const seconds = Number.isFinite(raw) && raw > 0 ? raw : 30
  const arm = () => {
    setTimeout(() => {
      LogSink.stderr().flush()
      process.stderr.write(
        `herald: still stopping after ${seconds} s; exiting (in-flight claims expire with their lease)\n`
      )
      process.exit(1)
    }, seconds * 1000).unref()
  }
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

/** The dispatcher's flags (`serve` and `worker`). */
const workerOptions = (values: Values): Worker.WorkerOptions => {
  const flag = (name: "batch-size" | "concurrency" | "lease-seconds" | "poll-ms") => {
    const raw = values[name]
    if (raw === undefined) return undefined
    const n = positiveInt(raw, `--${name}`)
    if (n === 0) throw new UsageError(`--${name} must be positive`)
    return n
  }
  const [batchSize, concurrency, leaseSeconds, pollMillis] = [
    flag("batch-size"),
    flag("concurrency"),
    flag("lease-seconds"),
    flag("poll-ms")
  ]
  return {
    ...(batchSize === undefined ? {} : { batchSize }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(leaseSeconds === undefined ? {} : { leaseSeconds }),
    ...(pollMillis === undefined ? {} : { pollMillis })
  }
}

/** `herald worker`: the dispatcher alone, on the same store as the servers. */
const worker = (values: Values): void => {
  boundShutdown()
  NodeRuntime.runMain(
    Worker.run({
      database: databaseConfig(values),
      sandbox: values.sandbox === true,
      worker: workerOptions(values),
      dataDir: dataDir(values),
      logLevel: Worker.logLevelFrom(process.env.HERALD_LOG_LEVEL)
    }),
    { disablePrettyLogger: true }
  )
}

/**
 * The start-up gate of `serve` and `worker` (see Config.ts): one line per wrong variable on stderr.
 * A variable its flag overrides (PORT and --port, ...) is not read, so it is not checked.
 */
const configurationValid = (values: Values): boolean => {
  const overridden: Record<string, string | undefined> = {
    PORT: values.port,
    HERALD_HOST: values.host,
    HERALD_DATABASE_URL: values["database-url"]
  }
  const read = Object.fromEntries(Object.entries(process.env).filter(([name]) => overridden[name] === undefined))
  const lines = Config.problems(read)
  for (const line of lines) process.stderr.write(`${line}\n`)
  return lines.length === 0
}

/** Runs the command; resolves with the exit code (serve keeps the process running instead). */
export const main = async (argv: ReadonlyArray<string>): Promise<number | "running"> => {
  try {
    const { positionals, values } = parse(argv)
    const [command, sub, ...rest] = positionals
    if (values.help === true || command === undefined) {
      process.stdout.write(usage + "\n")
      return command === undefined && values.help !== true ? 2 : 0
    }
    switch (command) {
      case "serve":
        if (!configurationValid(values)) return 2
        serve(values)
        return "running"
      case "worker":
        if (!configurationValid(values)) return 2
        worker(values)
        return "running"
      case "migrate":
        if (values.check === true) return await migrateCheck(values)
        return await runAdmin(values, Console.error("herald: migrations applied"))
      case "backup":
        return await backupCommand(values)
      case "restore":
        return await restoreCommand(values)
      default: {
        const admin = adminCommand(command, sub, rest, values)
        if (admin !== undefined) return await admin
      }
    }
    throw new UsageError(`unknown command: ${positionals.join(" ")}`)
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && "code" in error)) {
      process.stderr.write(`herald: ${error.message}\n\n${usage}\n`)
      return 2
    }
    throw error
  }
}
