/**
 * Running the dispatcher: in the server process (`herald serve`, as a background fiber of a layer) or
 * as its own process (`herald worker`). Any number of workers may share one Postgres database; claims
 * are exclusive and leased, so each destination is sent at most once per attempt.
 */
import * as AiProviders from "@herald/adapters/ai/AiProviders"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as ConnectionsConfig from "@herald/adapters/oauth/Config"
import * as PlatformTransport from "@herald/adapters/platforms/PlatformTransport"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import * as SmtpMailer from "@herald/adapters/mail/SmtpMailer"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as TokenRefresh from "@herald/core/accounts/TokenRefresh"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import * as Housekeeping from "@herald/core/publishing/Housekeeping"
import * as MetricsSweep from "@herald/core/analytics/MetricsSweep"
import * as Processes from "@herald/core/kernel/Processes"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as PublishAuthRetry from "@herald/core/publishing/PublishAuthRetry"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import * as NotificationMail from "@herald/core/workflow/NotificationMail"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as FiberRef from "effect/FiberRef"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as crypto from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import { DispatchLag } from "./groups/Health.js"
import * as MediaServices from "./MediaServices.js"
import * as WebhooksHttp from "./groups/Webhooks.js"
import * as LogSink from "./LogSink.js"
import { mailFromEnv } from "./MailConfig.js"
import * as OtlpTracing from "./OtlpTracing.js"

export interface WorkerOptions {
  /** Destinations claimed per round (default 50). */
  readonly batchSize?: number
  /** Publishes in flight at once (default the batch size). */
  readonly concurrency?: number
  /**
   * Lease of a claim, in seconds (default 30), renewed every 5 s while a publish is in flight. A dead
   * process's destinations are taken over when its heartbeat is 20 s stale or a lease runs out.
   */
  readonly leaseSeconds?: number
  /** What the process table calls this process (default `worker`; `herald serve` says `serve`). */
  readonly processKind?: Processes.ProcessKind
  /** Longest sleep between looks at the store, in milliseconds (default 1000). */
  readonly pollMillis?: number
  /** The housekeeping sweeps' settings; from the environment (`housekeepingFromEnv`) when absent. */
  readonly housekeeping?: Housekeeping.Options
  /** The metrics sweep's settings; from the environment (`metricsFromEnv`) when absent. */
  readonly metrics?: MetricsSweep.Options
}

const positiveNumber = (raw: string | undefined): number | undefined => {
  if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw.trim())) return undefined
  const n = Number(raw.trim())
  return n > 0 ? n : undefined
}

/**
 * Housekeeping settings from the environment: `HERALD_MEDIA_PENDING_GRACE_HOURS` (uploads never
 * completed are removed this long after their upload URL expired; default 24),
 * `HERALD_WEBHOOK_HISTORY_DAYS` (finished deliveries kept; default 30),
 * `HERALD_WEBHOOK_HISTORY_MAX` (finished deliveries kept per webhook; default 10000),
 * `HERALD_EVENT_HISTORY_DAYS` (events kept; default 30), `HERALD_COUNTER_HISTORY_HOURS` (usage
 * counter windows kept after they end; default 24), `HERALD_HOUSEKEEPING_BATCH` (rows removed per
 * statement; default 500) and `HERALD_HOUSEKEEPING_MINUTES` (time between sweeps; default 10).
 * Invalid values are ignored here; `herald serve` and `herald worker` refuse them at start (`Config`).
 */
export const housekeepingFromEnv = (env: NodeJS.ProcessEnv = process.env): Housekeeping.Options => {
  const grace = positiveNumber(env.HERALD_MEDIA_PENDING_GRACE_HOURS)
  const days = positiveNumber(env.HERALD_WEBHOOK_HISTORY_DAYS)
  const max = positiveNumber(env.HERALD_WEBHOOK_HISTORY_MAX)
  const minutes = positiveNumber(env.HERALD_HOUSEKEEPING_MINUTES)
  const eventDays = positiveNumber(env.HERALD_EVENT_HISTORY_DAYS)
  const counterHours = positiveNumber(env.HERALD_COUNTER_HISTORY_HOURS)
  const rawBatch = positiveNumber(env.HERALD_HOUSEKEEPING_BATCH)
  const batch = rawBatch !== undefined && Number.isSafeInteger(rawBatch) ? { batchSize: rawBatch } : {}
  return {
    ...(minutes === undefined ? {} : { every: Duration.minutes(minutes) }),
    ...(grace === undefined ? {} : { media: { grace: Duration.hours(grace) } }),
    webhooks: {
      ...(days === undefined ? {} : { retention: Duration.days(days) }),
      ...(max === undefined ? {} : { maxPerWebhook: Math.floor(max) }),
      ...batch
    },
    events: { ...(eventDays === undefined ? {} : { retention: Duration.days(eventDays) }), ...batch },
    counters: { ...(counterHours === undefined ? {} : { retention: Duration.hours(counterHours) }), ...batch }
  }
}

/**
 * Metrics sweep settings from the environment, meant for tests and demos:
 * `HERALD_METRICS_SCHEDULE` (the delays after publishing, comma-separated with a unit each: `30s`,
 * `10m`, `6h`, `3d`; default `1h,6h,24h,3d,7d`; an empty or invalid list keeps the default) and
 * `HERALD_METRICS_SWEEP_SECONDS` (time between rounds; default 60).
 */
export const metricsFromEnv = (env: NodeJS.ProcessEnv = process.env): MetricsSweep.Options => {
  const units: Record<string, (n: number) => Duration.Duration> = {
    s: Duration.seconds,
    m: Duration.minutes,
    h: Duration.hours,
    d: Duration.days
  }
  const parts = (env.HERALD_METRICS_SCHEDULE ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "")
  const schedule = parts.map((p) => {
    const match = /^(\d+(?:\.\d+)?)([smhd])$/.exec(p)
    return match === null ? undefined : units[match[2]!]!(Number(match[1]))
  })
  const valid = schedule.length > 0 && schedule.every((d) => d !== undefined)
  const seconds = positiveNumber(env.HERALD_METRICS_SWEEP_SECONDS)
  return {
    ...(valid ? { schedule: schedule as ReadonlyArray<Duration.Duration> } : {}),
    ...(seconds === undefined ? {} : { every: Duration.seconds(seconds) })
  }
}

/** `host:pid:random`, so leases name the process that holds them. */
export const makeWorkerId: Effect.Effect<string> = Effect.sync(() =>
  `${os.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
)

export const dispatcherOptions = (workerId: string, options: WorkerOptions = {}): Dispatcher.Options => ({
  workerId,
  ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
  ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  ...(options.leaseSeconds === undefined ? {} : { leaseFor: `${options.leaseSeconds} seconds` as const }),
  ...(options.pollMillis === undefined ? {} : { pollInterval: `${options.pollMillis} millis` as const })
})

// The e-mail settings are read where the server's invitation e-mails read them too (MailConfig).
export { mailFromEnv, type MailSettings } from "./MailConfig.js"

/**
 * The dispatcher as a background fiber for as long as the layer lives. Provide `Dispatcher.layerSignal`
 * beside the posts use cases so that new immediate posts wake it at once.
 *
 * The loops run untraced: their polling (a round and its statements every second, heartbeats, sweeps)
 * would flood a trace backend. A post's publishes and its events' deliveries are traced all the same,
 * as children of the request that created the post (`TraceContext`).
 */
export const layer = (options: WorkerOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const workerId = yield* makeWorkerId
      // Registered and heartbeating before the first claim, so claims always name a live process.
      const liveness = yield* Processes.start({
        id: workerId,
        kind: options.processKind ?? "worker",
        hostname: os.hostname(),
        pid: process.pid
      })
      // Written whatever HERALD_LOG_LEVEL says: it is how supervisors (and the tests) see the process up.
      yield* Effect.locally(
        Effect.logInfo(`Dispatcher started (worker ${workerId})`),
        FiberRef.currentMinimumLogLevel,
        LogLevel.All
      )
      // Claims, leases and heartbeats in the database's time (`Processes`): a process whose clock is
      // off neither takes over live processes' claims nor looks dead to them.
      yield* Effect.forkScoped(
        Dispatcher.run(dispatcherOptions(workerId, options)).pipe(
          Effect.provideService(Processes.Liveness, liveness),
          Effect.withClock(liveness.clock)
        )
      )
      // Tokens about to expire are renewed in the background (every 5 minutes).
      yield* Effect.forkScoped(TokenRefresh.refreshLoop())
      // Webhook deliveries from the outbox (claims are per subscription, exclusive across processes).
      // Its claims name this process, so that another process takes them over as soon as this one is
      // seen dead (as the dispatcher's are), not when their lease runs out.
      yield* Effect.forkScoped(Webhooks.run({ processId: workerId }).pipe(Effect.withClock(liveness.clock)))
      // Housekeeping beside the deliverer: uploads never completed, old webhook delivery history.
      yield* Effect.forkScoped(Housekeeping.run(options.housekeeping ?? housekeepingFromEnv()))
      // Metrics of published destinations, on their decaying schedule (claims exclusive, leased).
      yield* Effect.forkScoped(MetricsSweep.run(options.metrics ?? metricsFromEnv()))
      // Notification e-mails, when SMTP is configured: from the notifications' outbox, leased, retried.
      const mail = mailFromEnv()
      if (Option.isSome(mail)) {
        const mailer = yield* SmtpMailer.make(mail.value.smtp).pipe(Effect.orDie)
        yield* Effect.forkScoped(
          NotificationMail.run({ dashboardUrl: mail.value.dashboardUrl }).pipe(
            Effect.provideService(NotificationMail.Mailer, mailer)
          )
        )
      }
    }).pipe(Effect.withTracerEnabled(false))
  )

/**
 * Sandbox options from the environment: `HERALD_SANDBOX_LATENCY_MS` (fixed latency, default 0),
 * `HERALD_SANDBOX_JOURNAL` (a file to append one line per send to, for tests and benchmarks) and
 * `HERALD_SANDBOX_LEDGER` (the sandbox platform's record of what it published, shared by every process,
 * so that any of them can tell whether a dead process's attempt reached it).
 */
export const sandboxOptionsFromEnv = (
  env: NodeJS.ProcessEnv = process.env,
  defaultLedger?: string
): Sandbox.SandboxOptions => {
  const latency = Number(env.HERALD_SANDBOX_LATENCY_MS ?? "0")
  const journal = env.HERALD_SANDBOX_JOURNAL
  const ledger = env.HERALD_SANDBOX_LEDGER ?? defaultLedger
  return {
    ...(ledger === undefined || ledger === "" ? {} : { ledger }),
    ...(Number.isFinite(latency) && latency > 0 ? { latency: `${latency} millis` as const } : {}),
    ...(journal === undefined || journal === "" ? {} : { journal })
  }
}

/**
 * Where the sandbox keeps its ledger when HERALD_SANDBOX_LEDGER is not set: `<dataDir>/sandbox-ledger.jsonl`
 * on SQLite, whose processes all share one host and data dir. None on Postgres, whose processes may
 * run on several hosts: a ledger one host cannot see would make the sandbox answer "absent" wrongly.
 */
export const defaultSandboxLedger = (database: SqlDatabase.DatabaseConfig, dataDir: string): string | undefined =>
  database._tag === "Sqlite" && database.filename !== ":memory:"
    ? path.join(dataDir, "sandbox-ledger.jsonl")
    : undefined

/** The OAuth providers configured in the environment (HERALD_<PLATFORM>_CLIENT_ID, …). */
export const layerOAuthProviders = ConnectionsConfig.layerProviders().pipe(Layer.provide(PlatformTransport.layer))

/**
 * Every platform through the sandbox, or the real clients where they exist; publishes refused as
 * `auth` on a platform whose tokens renew renew the token once and retry (`PublishAuthRetry`) before
 * the account is marked.
 */
export const layerPlatforms = (sandbox: boolean, sandboxLedger?: string) =>
  sandbox
    ? Registry.layerSandbox(sandboxOptionsFromEnv(process.env, sandboxLedger))
    : PublishAuthRetry.layer(PublishAuthRetry.refreshablePlatforms).pipe(
      Layer.provide(Layer.merge(
        Registry.layerLive(ConnectionsConfig.platformOptionsFromEnv()).pipe(Layer.provide(PlatformTransport.layer)),
        layerOAuthProviders
      ))
    )

/** `GET /health`'s lag of the oldest due destination, from the dispatch store. */
export const layerDispatchLag = Layer.effect(
  DispatchLag,
  Effect.map(DispatchStore, (store) =>
    DispatchLag.of({
      oldestDueLagSeconds: Dispatcher.oldestDueLag.pipe(
        Effect.map((lag) => Duration.toMillis(lag) / 1000),
        Effect.orElseSucceed(() => null),
        Effect.provideService(DispatchStore, store)
      )
    }))
)

/**
 * What `herald serve` adds to the server: the platforms (all sandbox with `sandbox`), the dispatch
 * signal the posts use cases poke, the health lag, and the dispatcher running in-process.
 */
export const layerEngine = (options: {
  readonly sandbox: boolean
  readonly worker?: WorkerOptions
  /** The sandbox's ledger when HERALD_SANDBOX_LEDGER is not set (see `defaultSandboxLedger`). */
  readonly sandboxLedger?: string | undefined
}) => layer({ processKind: "serve", ...options.worker }).pipe(Layer.provideMerge(layerEngineServices(options)))

/**
 * What `layerEngine` provides, without the dispatcher's fibers: `herald serve` builds the fibers after
 * its listener, so that on shutdown they drain while the listener still answers (readiness 503).
 */
export const layerEngineServices = (options: {
  readonly sandbox: boolean
  readonly sandboxLedger?: string | undefined
}) =>
  Layer.mergeAll(
    layerPlatforms(options.sandbox, options.sandboxLedger),
    Dispatcher.layerSignal,
    layerOAuthProviders,
    ConnectionsConfig.layerSettings(),
    WebhooksHttp.layerServicesFromEnv,
    // AI: the configured provider, else the sandbox under --sandbox, else 400 misconfig.
    AiProviders.layerFromEnv({ sandbox: options.sandbox })
  ).pipe(Layer.merge(layerDispatchLag))

/**
 * `herald serve --sandbox`: connects one sandbox account per platform, `Sandbox <platform>`, to the
 * default (oldest) organization, unless it already has sandbox accounts. Returns how many were made.
 */
export const sandboxBootstrap = Effect.gen(function*() {
  const orgs = yield* (yield* OrganizationStore).list
  const org = orgs[0]
  if (org === undefined) return 0
  const existing = yield* (yield* AccountStore).list(org.id)
  if (existing.some((a) => a.platformAccountId.startsWith("sandbox-"))) return 0
  const created = yield* Sandbox.bootstrapAccounts(org.id)
  const plan = yield* Sandbox.fitPlan(org.id)
  yield* Effect.logInfo(
    `Sandbox: connected ${created.length} sandbox accounts to "${org.name}"` +
      Option.match(plan, {
        onNone: () => "",
        onSome: (p) => `, and moved it to the ${p} plan so that they fit with room to connect more`
      })
  )
  return created.length
})

export interface WorkerConfig {
  readonly database: SqlDatabase.DatabaseConfig
  readonly sandbox: boolean
  readonly worker?: WorkerOptions
  /** Where the generated credentials key lives when HERALD_SECRET is not set. */
  readonly dataDir?: string
  /** Lines below this level are not written, nor built (`HERALD_LOG_LEVEL`; default Info). */
  readonly logLevel?: LogLevel.LogLevel
}

/** `HERALD_LOG_LEVEL` values, case-insensitive (checked at start-up by `Config`). */
export const logLevels: Readonly<Record<string, LogLevel.LogLevel>> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/** The worker's minimum log level from `HERALD_LOG_LEVEL`: Info when unset, blank or unknown. */
export const logLevelFrom = (value: string | undefined): LogLevel.LogLevel =>
  logLevels[value?.trim().toLowerCase() ?? ""] ?? LogLevel.Info

/** Everything a standalone worker runs on: the migrated database, the stores, ids and platforms. */
export const layerStandalone = (config: WorkerConfig) =>
  layer(config.worker).pipe(
    Layer.provide(Dispatcher.layerSignal),
    Layer.provide(Layer.mergeAll(
      layerPlatforms(
        config.sandbox,
        defaultSandboxLedger(config.database, config.dataDir ?? CredentialCipher.keyDirFor(config.database))
      ),
      layerOAuthProviders,
      WebhooksHttp.layerServicesFromEnv
    )),
    // Media bytes for the platform clients, from the servers' store (<dataDir>/media, or the S3 bucket).
    Layer.provide(
      MediaServices.layerDispatch({ dataDir: config.dataDir ?? CredentialCipher.keyDirFor(config.database) })
    ),
    Layer.provide(SqlStores.layer),
    Layer.provide(CredentialCipher.layerFromEnv(config.dataDir ?? CredentialCipher.keyDirFor(config.database))),
    Layer.provide(Layer.merge(NodeIdGenerator.layer, NodeCrypto.layer)),
    Layer.provide(SqlDatabase.layer(config.database))
  )

/**
 * `herald worker`: runs the dispatcher until the process is told to stop. Its log lines go where
 * `herald serve`'s go: logfmt on stderr, written once per turn of the event loop (`LogSink`). The
 * default logger formatted and wrote every line synchronously through `console.log`: one line per
 * publish outcome was 15% of a worker's CPU while draining a backlog (5.1% `consoleCall`, 5.9%
 * `writeUtf8String` self time). Run it with `disablePrettyLogger`, or both loggers print. Lines below
 * `config.logLevel` (HERALD_LOG_LEVEL) are dropped before they are formatted; the dispatcher does not
 * even build its per-publish line then. The start line is written at every level.
 */
export const run = (config: WorkerConfig) =>
  Layer.launch(layerStandalone(config)).pipe(
    // Traces exported over OTLP when the OTEL_* variables ask for it (`OtlpTracing`).
    Effect.provide(OtlpTracing.layerFromEnv),
    Effect.provide(logging(config.logLevel ?? LogLevel.Info))
  )

/**
 * The worker's logging: logfmt (or JSON, `HERALD_LOG_FORMAT=json`) on stderr through the batching
 * sink, lines below `level` dropped.
 */
export const logging = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(LogSink.layerFromEnv, Logger.minimumLogLevel(level))

/**
 * Reads `herald worker` flags: `--sandbox`, `--batch-size N`, `--concurrency N`, `--lease-seconds N`,
 * `--poll-ms N`. Unknown flags are returned for the caller to report.
 */
export const parseArgs = (argv: ReadonlyArray<string>): {
  readonly sandbox: boolean
  readonly worker: WorkerOptions
  readonly unknown: ReadonlyArray<string>
} => {
  let sandbox = false
  const worker: { -readonly [K in keyof WorkerOptions]: WorkerOptions[K] } = {}
  const unknown: Array<string> = []
  const numeric: Record<string, "batchSize" | "concurrency" | "leaseSeconds" | "pollMillis"> = {
    "--batch-size": "batchSize",
    "--concurrency": "concurrency",
    "--lease-seconds": "leaseSeconds",
    "--poll-ms": "pollMillis"
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [
      arg,
      undefined
    ]
    if (flag === "--sandbox") {
      sandbox = true
      continue
    }
    const key = numeric[flag]
    if (key === undefined) {
      unknown.push(arg)
      continue
    }
    const raw = inline ?? argv[++i]
    const value = Number(raw)
    if (raw === undefined || !Number.isFinite(value) || value <= 0) {
      unknown.push(arg)
      continue
    }
    worker[key] = value
  }
  return { sandbox, worker, unknown }
}
