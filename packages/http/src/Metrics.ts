/**
 * Prometheus metrics at `GET /metrics`, served only when `HERALD_METRICS_TOKEN` is set, to requests
 * that carry it as `Authorization: Bearer <token>` (compared in constant time; a wrong or missing
 * token is 401). Without the variable the route does not exist (404, as any unknown path), so the
 * figures are never public by default.
 *
 * What is exported, all through one prom-client registry:
 * - HTTP requests, counted and timed by method, route template and status (`RouteTemplates`);
 * - the engine's figures recorded in core through Effect's Metric API (`EngineMetrics`: publishes,
 *   webhook deliveries, sweeps, heartbeats), bridged at each scrape (`PrometheusBridge`);
 * - gauges read from the store at each scrape: the dispatch lag (age of the oldest due destination),
 *   the dispatch and webhook queues, the processes in the process table, and Postgres pool usage;
 * - Node's runtime figures (`collectDefaultMetrics`: CPU, memory, event loop lag, GC, handles).
 *
 * Each process exposes its own counters; the store gauges are the same from every process.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PoolUsage from "@herald/adapters/sql/PoolUsage"
import * as EngineMetrics from "@herald/core/kernel/EngineMetrics"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import type { DispatchStore } from "@herald/core/publishing/DispatchStore"
import * as Processes from "@herald/core/kernel/Processes"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import * as crypto from "node:crypto"
import * as Prometheus from "prom-client"
import { Api } from "./Api.js"
import * as PrometheusBridge from "./internal/PrometheusBridge.js"
import * as RouteTemplates from "./internal/RouteTemplates.js"
import { HttpMetrics, type Recorder } from "./HttpMetrics.js"

export const path = "/metrics"

/** `HERALD_METRICS_TOKEN`, when set to something other than blanks. */
export const tokenFromEnv = (env: NodeJS.ProcessEnv = process.env): Option.Option<Redacted.Redacted<string>> => {
  const raw = env.HERALD_METRICS_TOKEN?.trim()
  return raw === undefined || raw === "" ? Option.none() : Option.some(Redacted.make(raw))
}

/** Buckets of a request's duration: from 5 ms to the longest requests (media uploads). */
const requestBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export { HttpMetrics, type Recorder } from "./HttpMetrics.js"

/** Whether `header` is `Bearer <token>`, compared in constant time (digests of equal length). */
export const authorized = (header: string | undefined, token: Redacted.Redacted<string>): boolean => {
  const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header.trim())
  const digest = (s: string) => crypto.createHash("sha256").update(s, "utf8").digest()
  const given = digest(match?.[1] ?? "")
  const expected = digest(Redacted.value(token))
  return crypto.timingSafeEqual(given, expected) && match !== null
}

const unauthorized = HttpServerResponse.text("Unauthorized", {
  status: 401,
  headers: { "www-authenticate": "Bearer realm=\"metrics\"" }
})

const count = (value: unknown): number => {
  const n = Number(value ?? 0)
  return Number.isFinite(n) ? n : 0
}

/** The store gauges: each family's `collect` reads the store through `run`; a failed read leaves it empty. */
const registerStoreGauges = (
  registry: Prometheus.Registry,
  run: <A>(
    effect: Effect.Effect<A, unknown, SqlClient.SqlClient | DispatchStore | Processes.ProcessStore>
  ) => Promise<Option.Option<A>>
) => {
  new Prometheus.Gauge({
    name: "herald_dispatch_lag_seconds",
    help: "How late the oldest due destination is (0 when nothing queued is past due).",
    registers: [registry],
    async collect() {
      this.reset()
      const lag = await run(Dispatcher.oldestDueLag)
      if (Option.isSome(lag)) this.set(Duration.toMillis(lag.value) / 1000)
    }
  })
  new Prometheus.Gauge({
    name: "herald_dispatch_queue_depth",
    help: "Destinations waiting to be published: due now, scheduled later, or being published.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset()
      const rows = await run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        return yield* sql<{ due: unknown; scheduled: unknown; publishing: unknown }>`
          SELECT SUM(CASE WHEN status = 'queued' AND due_at <= ${now} THEN 1 ELSE 0 END) AS due,
                 SUM(CASE WHEN status = 'queued' AND due_at > ${now} THEN 1 ELSE 0 END) AS scheduled,
                 SUM(CASE WHEN status = 'publishing' THEN 1 ELSE 0 END) AS publishing
          FROM destinations WHERE status IN ('queued', 'publishing')`
      }))
      if (Option.isNone(rows)) return
      const row = rows.value[0]
      this.set({ state: "due" }, count(row?.due))
      this.set({ state: "scheduled" }, count(row?.scheduled))
      this.set({ state: "publishing" }, count(row?.publishing))
    }
  })
  new Prometheus.Gauge({
    name: "herald_webhook_queue_depth",
    help: "Webhook deliveries pending on active webhooks: due now, or waiting for their next attempt.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      this.reset()
      const rows = await run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        return yield* sql<{ due: unknown; pending: unknown }>`
          SELECT SUM(CASE WHEN d.next_attempt_at <= ${now} THEN 1 ELSE 0 END) AS due, COUNT(*) AS pending
          FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
          WHERE d.status = 'pending' AND s.is_active = 1`
      }))
      if (Option.isNone(rows)) return
      const due = count(rows.value[0]?.due)
      this.set({ state: "due" }, due)
      this.set({ state: "waiting" }, Math.max(0, count(rows.value[0]?.pending) - due))
    }
  })
  new Prometheus.Gauge({
    name: "herald_processes",
    help: "Processes in the process table by kind, live (recent heartbeat) or stale (about to be declared dead).",
    labelNames: ["kind", "state"],
    registers: [registry],
    async collect() {
      this.reset()
      const listed = await run(Effect.zip(Effect.flatMap(Processes.ProcessStore, (store) => store.list), DateTime.now))
      if (Option.isNone(listed)) return
      const [processes, now] = listed.value
      const staleBefore = DateTime.toEpochMillis(now) - Duration.toMillis(Processes.deadAfter)
      for (const kind of Processes.ProcessKind.literals) {
        for (const state of ["live", "stale"] as const) this.set({ kind, state }, 0)
      }
      for (const p of processes) {
        const state = DateTime.toEpochMillis(p.lastHeartbeatAt) >= staleBefore ? "live" : "stale"
        this.inc({ kind: p.kind, state })
      }
    }
  })
  const pool = (
    name: string,
    help: string,
    read: (usage: PoolUsage.Usage) => ReadonlyArray<readonly [Record<string, string>, number]>,
    labelNames: Array<string> = []
  ) =>
    new Prometheus.Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset()
        const usage = PoolUsage.current()
        if (Option.isSome(usage)) { for (const [labels, value] of read(usage.value)) this.set(labels, value) }
      }
    })
  pool(
    "herald_store_pool_connections",
    "Postgres connections this process holds, busy or idle (absent on SQLite).",
    (u) => [[{ state: "busy" }, u.total - u.idle], [{ state: "idle" }, u.idle]],
    ["state"]
  )
  pool(
    "herald_store_pool_waiting",
    "Queries of this process waiting for a Postgres connection.",
    (u) => [[{}, u.waiting]]
  )
  pool(
    "herald_store_pool_max_connections",
    "The most Postgres connections this process may open.",
    (u) => [[{}, u.max]]
  )
}

/**
 * The metrics of this server, with `token` guarding the scrape. `routes` are the router's own paths
 * beside the API's endpoints (documents, dashboard pages), so that their requests keep a template.
 */
export const make = (options: {
  readonly token: Redacted.Redacted<string>
  readonly routes?: ReadonlyArray<{ readonly method: string; readonly path: string }>
}) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<SqlClient.SqlClient | DispatchStore | Processes.ProcessStore>()
    const registry = new Prometheus.Registry()
    Prometheus.collectDefaultMetrics({ register: registry })
    PrometheusBridge.register(registry, EngineMetrics.families)
    registerStoreGauges(registry, (effect) =>
      Runtime.runPromise(runtime)(effect.pipe(
        // A scrape every few seconds: its statements are not traced.
        Effect.withTracerEnabled(false),
        Effect.map(Option.some),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("Metrics: reading the store failed", cause), Option.none())
        )
      )))

    const endpoints: Array<{ method: string; path: string }> = [...(options.routes ?? [])]
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => void endpoints.push({ method: endpoint.method, path: endpoint.path })
    })
    const routeOf = RouteTemplates.make(endpoints)
    const requests = new Prometheus.Counter({
      name: "herald_http_requests_total",
      help: "HTTP requests answered, by method, route template and status.",
      labelNames: ["method", "route", "status"],
      registers: [registry]
    })
    const durations = new Prometheus.Histogram({
      name: "herald_http_request_duration_seconds",
      help: "Time to answer an HTTP request, by method, route template and status.",
      labelNames: ["method", "route", "status"],
      buckets: requestBuckets,
      registers: [registry]
    })
    // One child per series, looked up by a string key: prom-client hashes a label object per call.
    const series = new Map<
      string,
      { readonly count: Prometheus.Counter.Internal; readonly time: Prometheus.Histogram.Internal<string> }
    >()
    const recordRequest = (method: string, url: string, status: number, seconds: number) => {
      const route = routeOf(method, url)
      const key = `${method} ${route} ${status}`
      let found = series.get(key)
      if (found === undefined) {
        const labels = { method, route, status: String(status) }
        found = { count: requests.labels(labels), time: durations.labels(labels) }
        series.set(key, found)
      }
      found.count.inc()
      found.time.observe(seconds)
    }
    const scrape = (request: HttpServerRequest.HttpServerRequest) =>
      authorized(request.headers["authorization"], options.token)
        ? Effect.map(
          Effect.promise(() => registry.metrics()),
          (body) => HttpServerResponse.text(body, { contentType: registry.contentType })
        )
        : Effect.succeed(unauthorized)
    const recorder: Recorder = { recordRequest, scrape }
    return recorder
  })

/**
 * `HttpMetrics` on when `HERALD_METRICS_TOKEN` is set (read when the layer is built), else off: the
 * request middleware then records nothing and `/metrics` is not a route.
 */
export const layerFromEnv = (routes: ReadonlyArray<{ readonly method: string; readonly path: string }> = []) =>
  Layer.effect(
    HttpMetrics,
    Effect.suspend(() =>
      Option.match(tokenFromEnv(), {
        onNone: () => Effect.succeed(Option.none<Recorder>()),
        onSome: (token) => Effect.map(make({ token, routes }), Option.some)
      })
    )
  )

/** `app` with `GET /metrics` answered in front of it when metrics are on. */
export const route = <E, R>(metrics: Option.Option<Recorder>, app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Option.match(metrics, {
    onNone: () => app,
    onSome: (m) =>
      Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) => request.method === "GET" && request.url.split("?")[0] === path ? m.scrape(request) : app
      )
  })
