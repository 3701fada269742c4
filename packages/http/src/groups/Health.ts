/**
 * `GET /health`, outside `/api/v1` and without a key, for load balancers and operators. It answers
 * bare JSON (not the API envelope): 200 when the store answers and accepts a write, 503 when not.
 * `GET /health/live` answers 200 while the process runs (no store access); `GET /health/ready` answers
 * 200 when the store answers and accepts a write, its migrations are applied and the process is not shutting down.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"

/**
 * Whether the store answers and accepts a write (`Server.sqlStoreProbe`): a store that can be read
 * but not written (a full disk, a read-only file) is down, since every request that writes would fail.
 */
export class StoreProbe extends Context.Tag("@herald/http/StoreProbe")<StoreProbe, {
  readonly ping: Effect.Effect<boolean>
}>() {}

/**
 * How late the oldest due destination is, in seconds (null when nothing is due). Optional: the
 * engine provides it where a dispatcher runs; without it the field is null.
 */
export class DispatchLag extends Context.Tag("@herald/http/DispatchLag")<DispatchLag, {
  readonly oldestDueLagSeconds: Effect.Effect<number | null>
}>() {}

/** Whether every migration this build knows is applied to the store. */
export class MigrationProbe extends Context.Tag("@herald/http/MigrationProbe")<MigrationProbe, {
  readonly applied: Effect.Effect<boolean>
}>() {}

/**
 * Whether the process is shutting down. Optional: without it the process never reports shutting down.
 * `herald serve` marks it first thing when it stops, while the HTTP server still answers.
 */
export class ShutdownState extends Context.Tag("@herald/http/ShutdownState")<ShutdownState, {
  readonly shuttingDown: Effect.Effect<boolean>
  readonly markShuttingDown: Effect.Effect<void>
}>() {}

export const layerShutdownState: Layer.Layer<ShutdownState> = Layer.effect(
  ShutdownState,
  Effect.map(
    Ref.make(false),
    (ref) => ShutdownState.of({ shuttingDown: Ref.get(ref), markShuttingDown: Ref.set(ref, true) })
  )
)

/**
 * Marks the process as shutting down when its scope closes. Built after everything else, so its
 * finalizer runs first: readiness turns 503 before the dispatcher drains and the listener closes.
 */
export const layerMarkShuttingDownOnRelease: Layer.Layer<never, never, ShutdownState> = Layer.scopedDiscard(
  Effect.flatMap(ShutdownState, (state) => Effect.addFinalizer(() => state.markShuttingDown))
)

export const HealthStatus = Schema.Struct({
  status: Schema.Literal("ok", "down"),
  store: Schema.Literal("ok", "down"),
  oldest_due_lag_seconds: Schema.NullOr(Schema.Number)
}).annotations({ identifier: "HealthStatus" })
export type HealthStatus = typeof HealthStatus.Type

export const LivenessStatus = Schema.Struct({
  status: Schema.Literal("ok")
}).annotations({ identifier: "LivenessStatus" })
export type LivenessStatus = typeof LivenessStatus.Type

export const ReadinessStatus = Schema.Struct({
  status: Schema.Literal("ready", "not_ready"),
  store: Schema.Literal("ok", "down", "unknown"),
  migrations: Schema.Literal("applied", "pending", "unknown"),
  shutting_down: Schema.Boolean
}).annotations({ identifier: "ReadinessStatus" })
export type ReadinessStatus = typeof ReadinessStatus.Type

export const HealthGroup = HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(HealthStatus)
      .addError(HealthStatus.annotations({ description: "The store does not answer" }), { status: 503 })
      .annotate(OpenApi.Summary, "Liveness of the server and its store (no key; not enveloped)")
  )
  .add(
    HttpApiEndpoint.get("live", "/health/live")
      .addSuccess(LivenessStatus)
      .annotate(OpenApi.Summary, "Liveness of the process alone, without touching the store (no key; not enveloped)")
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(ReadinessStatus)
      .addError(
        ReadinessStatus.annotations({
          description: "Not ready: the store does not answer, migrations are pending, or the process is shutting down"
        }),
        { status: 503 }
      )
      .annotate(OpenApi.Summary, "Readiness to take traffic (no key; not enveloped)")
  )

export const check = Effect.gen(function*() {
  const probe = yield* StoreProbe
  const storeOk = yield* probe.ping.pipe(Effect.timeout("3 seconds"), Effect.orElseSucceed(() => false))
  const lag = yield* Effect.serviceOption(DispatchLag)
  const oldest = Option.isSome(lag) && storeOk
    ? yield* lag.value.oldestDueLagSeconds.pipe(Effect.orElseSucceed(() => null))
    : null
  const body: HealthStatus = {
    status: storeOk ? "ok" : "down",
    store: storeOk ? "ok" : "down",
    oldest_due_lag_seconds: oldest
  }
  return body
})

/** Readiness: the shutdown flag first (no store access once shutting down), then store and migrations. */
export const readiness = Effect.gen(function*() {
  const shutdown = yield* Effect.serviceOption(ShutdownState)
  const shuttingDown = Option.isSome(shutdown) ? yield* shutdown.value.shuttingDown : false
  if (shuttingDown) {
    const body: ReadinessStatus = { status: "not_ready", store: "unknown", migrations: "unknown", shutting_down: true }
    return body
  }
  const probe = yield* StoreProbe
  const storeOk = yield* probe.ping.pipe(Effect.timeout("3 seconds"), Effect.orElseSucceed(() => false))
  const migrations = yield* Effect.serviceOption(MigrationProbe)
  const applied = storeOk && Option.isSome(migrations)
    ? yield* migrations.value.applied.pipe(Effect.timeout("3 seconds"), Effect.orElseSucceed(() => false))
    : false
  const body: ReadinessStatus = {
    status: storeOk && applied ? "ready" : "not_ready",
    store: storeOk ? "ok" : "down",
    migrations: !storeOk || Option.isNone(migrations) ? "unknown" : applied ? "applied" : "pending",
    shutting_down: false
  }
  return body
})

export const HealthLive = HttpApiBuilder.group(ApiGroup.apiOf(HealthGroup), "health", (handlers) =>
  handlers
    .handle("health", () =>
      Effect.map(check, (body): HealthStatus | HttpServerResponse.HttpServerResponse =>
        body.store === "ok" ? body : HttpServerResponse.unsafeJson(body, { status: 503 })))
    .handle("live", () =>
      Effect.succeed<LivenessStatus>({ status: "ok" }))
    .handle("ready", () =>
      Effect.map(readiness, (body): ReadinessStatus | HttpServerResponse.HttpServerResponse =>
        body.status === "ready" ? body : HttpServerResponse.unsafeJson(body, { status: 503 }))))
