/**
 * The `herald` command. Every subcommand reads its store from --data-dir / --database-url (or
 * HERALD_DATA_DIR / HERALD_DATABASE_URL); the default is SQLite in ./.herald.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type { MigrationError } from "@effect/sql/Migrator"
import type { SqlError } from "@effect/sql/SqlError"
import * as Migrations from "@herald/adapters/sql/Migrations"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as ApiKey from "@herald/core/access/ApiKey"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { AccountId } from "@herald/core/kernel/Ids"
import * as Organization from "@herald/core/access/Organization"
import * as QueuePolicy from "@herald/core/workflow/QueuePolicy"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { UserStore } from "@herald/core/access/UserStore"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import { parseArgs } from "node:util"
import * as Admin from "./Admin.js"
import * as Backup from "./Backup.js"
import * as Config from "./Config.js"
import * as Health from "./groups/Health.js"
import * as LogSink from "./LogSink.js"
import * as OtlpTracing from "./OtlpTracing.js"
import * as RateLimit from "./RateLimit.js"
import * as Server from "./Server.js"
import * as Worker from "./Worker.js"

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

class UsageError extends Error {}

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

type Values = ReturnType<typeof parse>["values"]

const parse = (argv: ReadonlyArray<string>) =>
  parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })

const env = (name: string): string | undefined => {
  const value = process.env[name]
  return value === undefined || value === "" ? undefined : value
}

const positiveInt = (raw: string, what: string): number => {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`${what} must be a non-negative integer: ${raw}`)
  return n
}

const dataDir = (values: Values): string => values["data-dir"] ?? env("HERALD_DATA_DIR") ?? ".herald"

const databaseConfig = (values: Values): SqlDatabase.DatabaseConfig =>
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

const oneOf = <const A extends ReadonlyArray<string>>(allowed: A, raw: string, what: string): A[number] => {
  if (!allowed.includes(raw)) throw new UsageError(`${what} must be one of ${allowed.join(", ")}: ${raw}`)
  return raw
}

const plan = (raw: string) => oneOf(Organization.Plan.literals, raw, "plan")
const subscriptionStatus = (raw: string) => oneOf(Organization.SubscriptionStatus.literals, raw, "status")

const list = (raw: string): Array<string> => raw.split(",").map((s) => s.trim()).filter((s) => s !== "")

/**
 * Logs go to stderr, so stdout carries only what a command prints (a key, an id): logfmt, or JSON with
 * HERALD_LOG_FORMAT=json, one line per entry, written in batches once per turn of the event loop
 * (LogSink.ts).
 */
const quietLogger = LogSink.layerFromEnv

const iso = (value: Option.Option<DateTime.Utc>): string =>
  Option.match(value, { onNone: () => "-", onSome: DateTime.formatIso })

const keysCreate = (values: Values) => {
  const scopes = values.scopes === undefined
    ? undefined
    : list(values.scopes).map((s) => oneOf(ApiKey.Scope.literals, s, "scope"))
  const accountIds = values.accounts === undefined
    ? undefined
    : list(values.accounts).map((s) => {
      const n = Number(s)
      if (!Schema.is(AccountId)(n)) throw new UsageError(`account id must be a positive integer: ${s}`)
      return n
    })
  const expiresAt = values.expires === undefined ? undefined : Option.getOrUndefined(DateTime.make(values.expires))
  if (values.expires !== undefined && expiresAt === undefined) {
    throw new UsageError(`--expires must be an ISO 8601 instant: ${values.expires}`)
  }
  return Effect.gen(function*() {
    const org = yield* Admin.resolveOrganization(values.org)
    const { token } = yield* Admin.createKey({
      organizationId: org.id,
      name: values.name,
      scopes,
      accountIds,
      expiresAt: expiresAt === undefined ? undefined : DateTime.toUtc(expiresAt)
    })
    yield* Console.log(token)
  })
}

const keysList = (values: Values) =>
  Effect.gen(function*() {
    const orgId = values.org === undefined ? Option.none() : Option.some((yield* Admin.findOrganization(values.org)).id)
    const keys = yield* (yield* ApiKeyStore).list(orgId)
    const now = yield* DateTime.now
    for (const key of keys) {
      yield* Console.log([
        key.id,
        key.hint + "…",
        ApiKey.keyState(key, now),
        key.scopes.join(","),
        Option.match(key.accountIds, { onNone: () => "all-accounts", onSome: (ids) => `accounts:${ids.join(",")}` }),
        `expires:${iso(key.expiresAt)}`,
        `org:${key.organizationId}`,
        JSON.stringify(key.name)
      ].join("\t"))
    }
  })

const role = (raw: string) => oneOf(Organization.Role.literals, raw, "role")

/** Where a printed password link points: HERALD_PUBLIC_URL, else this host on PORT (8080). */
const linkBase = (): string => env("HERALD_PUBLIC_URL") ?? `http://127.0.0.1:${env("PORT") ?? "8080"}`

const printPasswordLink = (email: string, token: string) =>
  Effect.zipRight(
    Console.error(`herald: ${email} sets a password within 24 hours at the link below (shown once)`),
    Console.log(setPasswordLink(linkBase(), token))
  )

const usersList = (values: Values) =>
  Effect.gen(function*() {
    const orgId = values.org === undefined ? Option.none() : Option.some((yield* Admin.findOrganization(values.org)).id)
    for (const user of yield* (yield* UserStore).list(orgId)) {
      yield* Console.log(
        [user.id, user.email, user.role, `org:${user.organizationId}`, JSON.stringify(user.name)].join("\t")
      )
    }
  })

const orgsList = Effect.gen(function*() {
  for (const org of yield* (yield* OrganizationStore).list) {
    yield* Console.log(
      [org.id, org.plan, org.subscriptionStatus, `trial_ends:${iso(org.trialEndsAt)}`, JSON.stringify(org.name)].join(
        "\t"
      )
    )
  }
})

const queueShow = (values: Values) =>
  Effect.gen(function*() {
    const view = yield* Admin.showQueue(values.org)
    if (Option.isNone(view.queue)) {
      yield* Console.log("no queue (set one with: herald queue set --timezone ZONE --slots \"mon-fri 09:00\")")
      return
    }
    const queue = view.queue.value
    yield* Console.log(`timezone\t${queue.timezone}`)
    yield* Console.log(`slots\t${QueuePolicy.formatSlots(queue.openings) || "(none)"}`)
    for (const entry of view.forecast) {
      yield* Console.log(
        `next\t${entry.position}\t${DateTime.formatIsoOffset(entry.local)}\t${DateTime.formatIso(entry.occurrence.at)}`
      )
    }
  })

const runAdmin = <A, E>(
  values: Values,
  program: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof Server.services>>>
): Promise<number> =>
  Effect.runPromiseExit(
    program.pipe(
      Effect.provide(
        Server.services({ database: databaseConfig(values), rateLimits: RateLimit.defaults, dataDir: dataDir(values) })
      ),
      Effect.provide(quietLogger),
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  ).then((exit) => {
    if (Exit.isSuccess(exit)) return 0
    const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
    process.stderr.write(
      `herald: ${failure instanceof Admin.AdminError ? failure.message : Cause.pretty(exit.cause)}\n`
    )
    return 1
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

/** The dashboard page where a one-time token sets a password. */
export const setPasswordLink = (base: string, token: string): string =>
  `${base.replace(/\/+$/, "")}/set-password?token=${token}`

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
      case "keys":
        switch (sub) {
          case "create":
            return await runAdmin(values, keysCreate(values))
          case "list":
            return await runAdmin(values, keysList(values))
          case "revoke":
            if (rest[0] === undefined) throw new UsageError("keys revoke needs a key id")
            return await runAdmin(values, Effect.zipRight(Admin.revokeKey(rest[0]), Console.error("herald: revoked")))
        }
        break
      case "orgs":
        switch (sub) {
          case "create": {
            if (rest[0] === undefined) throw new UsageError("orgs create needs a NAME")
            const name = rest[0]
            return await runAdmin(
              values,
              Effect.flatMap(
                Admin.createOrganization({
                  name,
                  plan: values.plan === undefined ? undefined : plan(values.plan),
                  status: values.status === undefined ? undefined : subscriptionStatus(values.status)
                }),
                (org) => Console.log(org.id)
              )
            )
          }
          case "list":
            return await runAdmin(values, orgsList)
          case "set-plan": {
            const [id, planName] = rest
            if (id === undefined || planName === undefined) throw new UsageError("orgs set-plan needs ID and PLAN")
            const nextPlan = plan(planName)
            const nextStatus = values.status === undefined ? undefined : subscriptionStatus(values.status)
            return await runAdmin(
              values,
              Effect.flatMap(
                Admin.setPlan(id, nextPlan, nextStatus),
                (org) => Console.error(`herald: ${org.id} is on plan ${org.plan}, status ${org.subscriptionStatus}`)
              )
            )
          }
        }
        break
      case "users":
        switch (sub) {
          case "create": {
            if (rest[0] === undefined) throw new UsageError("users create needs an EMAIL")
            const input = {
              email: rest[0],
              role: values.role === undefined ? "member" as const : role(values.role),
              org: values.org,
              name: values.name
            }
            return await runAdmin(
              values,
              Effect.flatMap(
                Admin.createUser(input),
                ({ passwordToken, user }) =>
                  Effect.zipRight(
                    Console.error(`herald: created ${user.role} ${user.email} (${user.id})`),
                    printPasswordLink(user.email, passwordToken)
                  )
              )
            )
          }
          case "list":
            return await runAdmin(values, usersList(values))
          case "set-role": {
            const [who, roleName] = rest
            if (who === undefined || roleName === undefined) throw new UsageError("users set-role needs USER and ROLE")
            const next = role(roleName)
            return await runAdmin(
              values,
              Effect.flatMap(
                Admin.setUserRole(who, next),
                (user) => Console.error(`herald: ${user.email} is now ${user.role}`)
              )
            )
          }
          case "reset-password": {
            if (rest[0] === undefined) throw new UsageError("users reset-password needs USER (an id or an email)")
            return await runAdmin(
              values,
              Effect.flatMap(
                Admin.resetPassword(rest[0]),
                ({ passwordToken, user }) => printPasswordLink(user.email, passwordToken)
              )
            )
          }
        }
        break
      case "device": {
        const code = rest[0]
        if ((sub === "approve" || sub === "deny") && code === undefined) {
          throw new UsageError(`device ${sub} needs the CODE the device shows`)
        }
        switch (sub) {
          case "approve":
            return await runAdmin(
              values,
              Effect.flatMap(Admin.approveDevice(code!, values.org), (done) =>
                Console.error(
                  `herald: approved ${done.userCode} for organization ${done.organization.id}; ` +
                    "the device receives its key on its next poll"
                ))
            )
          case "deny":
            return await runAdmin(
              values,
              Effect.flatMap(Admin.denyDevice(code!), (done) => Console.error(`herald: denied ${done.userCode}`))
            )
        }
        break
      }
      case "queue":
        switch (sub) {
          case "set": {
            if (values.timezone === undefined || values.slots === undefined) {
              throw new UsageError("queue set needs --timezone ZONE and --slots \"mon-fri 09:00,12:30;sat 10:00\"")
            }
            const input = { org: values.org, timezone: values.timezone, slots: values.slots }
            return await runAdmin(
              values,
              Effect.flatMap(
                Admin.setQueue(input),
                (q) =>
                  Console.error(
                    `herald: queue of ${q.organizationId} set: ${q.timezone} ${
                      QueuePolicy.formatSlots(q.openings) || "(no openings)"
                    }`
                  )
              )
            )
          }
          case "show":
            return await runAdmin(values, queueShow(values))
        }
        break
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
