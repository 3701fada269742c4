/**
 * The server: the API's handler layers (one per group; adding a group is one line in `handlers`),
 * the request middleware (envelope, request id, logging), OpenAPI at `/api/v1/openapi.json`, the
 * interactive reference at `/docs`, and the store behind them.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as NodePasswordHasher from "@herald/adapters/NodePasswordHasher"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as Migrations from "@herald/adapters/sql/Migrations"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import type { PasswordHasher } from "@herald/core/access/PasswordHasher"
import type { Crypto } from "@herald/core/kernel/Crypto"
import type { IdGenerator } from "@herald/core/kernel/IdGenerator"
import * as Queues from "@herald/core/workflow/Queues"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Api } from "./Api.js"
import * as ApiDocuments from "./ApiDocuments.js"
import * as Auth from "./Auth.js"
import * as Dashboard from "./Dashboard.js"
import * as InvitationMail from "./InvitationMail.js"
import * as FastPath from "./FastPath.js"
import * as HttpMetrics from "./HttpMetrics.js"
import * as Metrics from "./Metrics.js"
import * as OtlpTracing from "./OtlpTracing.js"
import * as NodeFastPath from "./NodeFastPath.js"
import { AccountsLive } from "./groups/Accounts.js"
import { AiLive } from "./groups/Ai.js"
import { AnalyticsLive } from "./groups/Analytics.js"
import { ApprovalsLive } from "./groups/Approvals.js"
import { BulkLive } from "./groups/Bulk.js"
import { CampaignsLive } from "./groups/Campaigns.js"
import { DashboardDeviceLive } from "./groups/DashboardDevice.js"
import { DashboardKeysLive } from "./groups/DashboardKeys.js"
import { DashboardQueueLive } from "./groups/DashboardQueue.js"
import { DashboardSessionLive, DashboardSignInLive } from "./groups/DashboardSession.js"
import { DashboardCommentsLive } from "./groups/DashboardComments.js"
import { DashboardNotificationsLive } from "./groups/DashboardNotifications.js"
import { DashboardJoinLive, DashboardUsersLive } from "./groups/DashboardUsers.js"
import { ConnectionsLive, OAuthCallbackLive } from "./groups/Connections.js"
import { DeviceLoginLive } from "./groups/DeviceLogin.js"
import { HealthLive, MigrationProbe, StoreProbe } from "./groups/Health.js"
import * as MediaHttp from "./groups/Media.js"
import * as MediaServices from "./MediaServices.js"
import { MeLive } from "./groups/Me.js"
import { PlatformRulesLive } from "./groups/PlatformRules.js"
import { PostsLive } from "./groups/Posts.js"
import { QueueLive } from "./groups/Queue.js"
import { RetryLive } from "./groups/Retry.js"
import { SocialConnectLive } from "./groups/SocialConnect.js"
import { WebhooksLive } from "./groups/Webhooks.js"
import * as RateLimit from "./RateLimit.js"
import * as RequestMiddleware from "./RequestMiddleware.js"
import * as SessionAuth from "./SessionAuth.js"

export const openApiPath = "/api/v1/openapi.json"
export const docsPath = "/docs"

/** Every group's handlers. */
export const handlers = Layer.mergeAll(
  MeLive,
  AccountsLive,
  HealthLive,
  RetryLive,
  PostsLive,
  ConnectionsLive,
  OAuthCallbackLive,
  WebhooksLive,
  MediaHttp.MediaLive,
  MediaHttp.MediaUploadLive,
  ApprovalsLive,
  CampaignsLive,
  DeviceLoginLive,
  SocialConnectLive
)

/** Handlers added after the first ones (one `Layer.merge` each keeps additions apart). */
export const moreHandlers = Layer.mergeAll(
  AiLive,
  PlatformRulesLive,
  AnalyticsLive,
  QueueLive,
  BulkLive
)

/** The dashboard's /dashboard/api/* handlers. */
export const dashboardHandlers = Layer.mergeAll(
  DashboardSignInLive,
  DashboardSessionLive,
  DashboardKeysLive,
  DashboardDeviceLive,
  DashboardUsersLive,
  DashboardQueueLive,
  DashboardJoinLive,
  DashboardNotificationsLive,
  DashboardCommentsLive
)

export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide(handlers),
  Layer.provide(moreHandlers),
  Layer.provide(dashboardHandlers)
)

/** The routes on the API's router beside its endpoints, for the metrics' route templates. */
const routerRoutes: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: openApiPath },
  { method: "GET", path: docsPath },
  ...Dashboard.pagePaths.map((path) => ({ method: "GET", path })),
  { method: "GET", path: `${Dashboard.assetsPath}/*` }
]

/**
 * Whether requests are traced (`HERALD_TRACING=true`, or traces exported over OTLP: `OtlpTracing`): a
 * server span per request (the platform's tracer middleware, with URL and header attributes) and the
 * spans of the stores and SQL statements. Without an exporter they are not made by default: they
 * cost a fifth of a small request's CPU. A host that installs a tracer of its own sets HERALD_TRACING.
 */
export const tracingEnabled = (): boolean =>
  (process.env.HERALD_TRACING ?? "").trim().toLowerCase() === "true" || OtlpTracing.enabled()

/** The tracing switch applied to a layer and every fiber it starts (the request fibers included). */
export const tracing = (enabled: boolean) => <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  enabled
    ? HttpMiddleware.withTracerDisabledWhen(layer, RequestMiddleware.untraced)
    : HttpMiddleware.withTracerDisabledWhen(Layer.locally(layer, FiberRef.currentTracerEnabled, false), () => true)

/**
 * `HttpApiBuilder.serve()` with the fast path's routes in front of the HttpApi app (unless
 * `HERALD_FAST_PATH=off`), and, unless requests are traced, the same routes answered at node's
 * `request` event (`NodeFastPath`; a traced request keeps the platform's server span).
 */
const serve = (fastPath: boolean, belowPlatform: boolean) =>
  HttpApiBuilder.httpApp.pipe(
    Effect.flatMap((api) =>
      Effect.gen(function*() {
        const metrics = yield* HttpMetrics.current
        if (!fastPath) {
          return Layer.merge(
            HttpServer.serve()(Metrics.route(metrics, api)),
            Layer.succeed(NodeFastPath.NodeListener, Option.none())
          )
        }
        const { routeOf, wrap } = yield* FastPath.make
        const listener = belowPlatform ? Option.some(yield* NodeFastPath.make(routeOf)) : Option.none()
        return Layer.merge(
          HttpServer.serve()(Metrics.route(metrics, wrap(api))),
          Layer.succeed(NodeFastPath.NodeListener, listener)
        )
      })
    ),
    Layer.unwrapEffect,
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
  )

/**
 * The HTTP application on an `HttpServer`; needs the stores, crypto, ids and rate limits. Its switches
 * (fast path, tracing, metrics) are read from the environment when it is built.
 */
export const app = Layer.suspend(() => appWith(tracingEnabled()))

const appWith = (traced: boolean) =>
  serve(FastPath.enabled(), !traced).pipe(
    tracing(traced),
    Layer.provide(ApiDocuments.layer({ openApiPath, docsPath })),
    Layer.provide(Dashboard.layer),
    Layer.provide(RequestMiddleware.layer),
    Layer.provide(ApiLive),
    Layer.provide(Auth.layer),
    Layer.provide(Auth.layerKeyRequired),
    Layer.provide(SessionAuth.layer),
    // Invitation e-mails when SMTP is configured (read from the environment when the app is built).
    Layer.provide(InvitationMail.layerFromEnv),
    // Last, so that the request middleware and the fast path find it when they are built.
    Layer.provide(Metrics.layerFromEnv(routerRoutes))
  )

/** How long one write probe's answer serves readiness checks (load balancers probe every few seconds). */
export const storeProbeCachedFor = "2 seconds"

/**
 * `StoreProbe` over the SQL client: a write, not only a read. The one row of `store_heartbeat` is
 * updated, so a store that answers queries but refuses writes (a full disk, a read-only file or
 * standby) is reported down. The answer is kept for `storeProbeCachedFor`, and probes arriving
 * together share one write.
 */
export const sqlStoreProbe: Layer.Layer<StoreProbe, never, SqlClient.SqlClient> = Layer.effect(
  StoreProbe,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const write = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql`UPDATE store_heartbeat SET beat_at = ${now} WHERE id = 1 RETURNING id`
      return rows.length === 1
    }).pipe(Effect.orElseSucceed(() => false))
    const cached = yield* Effect.cachedWithTTL(write, storeProbeCachedFor)
    return StoreProbe.of({ ping: cached })
  })
)

/** `MigrationProbe` over the SQL client: the newest applied migration is the newest this build knows. */
export const sqlMigrationProbe: Layer.Layer<MigrationProbe, never, SqlClient.SqlClient> = Layer.effect(
  MigrationProbe,
  Effect.map(SqlClient.SqlClient, (sql) =>
    MigrationProbe.of({
      applied: Effect.gen(function*() {
        const known = yield* Migrations.loader
        const newest = Math.max(0, ...known.map(([id]) => id))
        const rows = yield* sql<{ readonly newest: number | string | null }>`
          SELECT MAX(migration_id) AS newest FROM ${sql(Migrations.table)}`
        return Number(rows[0]?.newest ?? 0) >= newest
      }).pipe(Effect.orElseSucceed(() => false))
    }))
)

/** Node's crypto, random UUIDs and scrypt password hashing. */
export const nodeServices: Layer.Layer<Crypto | IdGenerator | PasswordHasher> = Layer.mergeAll(
  NodeCrypto.layer,
  NodeIdGenerator.layer,
  NodePasswordHasher.layer
)

/**
 * The migrated store, every store port over it, and what the server needs beside them. Platform
 * credentials are encrypted at rest with the key from HERALD_SECRET or `{dataDir}/secret.key`.
 */
export const services = (options: {
  readonly database: SqlDatabase.DatabaseConfig
  readonly rateLimits: RateLimit.Limits
  readonly dataDir?: string
  /** Platforms publish through the sandbox (`--sandbox`). */
  readonly sandbox?: boolean
}) =>
  Layer.mergeAll(
    SqlStores.layer,
    sqlStoreProbe,
    sqlMigrationProbe,
    // use_queue on POST /posts: the next free opening, claimed in the create transaction.
    Queues.allocatorLayer.pipe(Layer.provide(SqlStores.layer)),
    // The media library: blobs under <dataDir>/media or in the S3 bucket, the posts and dispatch hooks.
    MediaServices.layerServices({
      dataDir: options.dataDir ?? CredentialCipher.keyDirFor(options.database),
      sandbox: options.sandbox === true
    }).pipe(
      Layer.provide(SqlStores.layer)
    )
  ).pipe(
    Layer.provideMerge(SqlDatabase.layer(options.database)),
    Layer.provideMerge(Layer.mergeAll(
      nodeServices,
      RateLimit.layer(options.rateLimits),
      CredentialCipher.layerFromEnv(options.dataDir ?? CredentialCipher.keyDirFor(options.database))
    ))
  )

/**
 * The application listening on `host:port`; `onListening` runs once the handler is attached, with
 * the real port (useful with port 0).
 */
export const listen = <E, R>(options: {
  readonly port: number
  readonly host: string
  readonly onListening: (port: number) => Effect.Effect<void, E, R>
}) =>
  Layer.unwrapEffect(Effect.sync(() => {
    const server = new NodeFastPath.Server()
    return Layer.scopedDiscard(
      Effect.gen(function*() {
        const listener = yield* NodeFastPath.NodeListener
        // Taken off before the app is released (the platform's handler is still attached then).
        if (Option.isSome(listener)) {
          yield* Effect.acquireRelease(
            Effect.sync(() => (server.listener = listener.value)),
            () => Effect.sync(() => (server.listener = NodeFastPath.none))
          )
        }
        yield* HttpServer.addressWith((address) =>
          options.onListening(address._tag === "TcpAddress" ? address.port : 0)
        )
      })
    ).pipe(
      Layer.provide(app),
      Layer.provideMerge(NodeHttpServer.layer(() => server, { port: options.port, host: options.host }))
    )
  }))
