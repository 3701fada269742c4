/**
 * `GET /health`, outside `/api/v1` and without a key, for load balancers and operators. It answers
 * bare JSON (not the API envelope): 200 when the store answers, 503 when it does not.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"

/** Whether the store answers a trivial query. */
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

export const HealthStatus = Schema.Struct({
  status: Schema.Literal("ok", "down"),
  store: Schema.Literal("ok", "down"),
  oldest_due_lag_seconds: Schema.NullOr(Schema.Number)
}).annotations({ identifier: "HealthStatus" })
export type HealthStatus = typeof HealthStatus.Type

export const HealthGroup = HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(HealthStatus)
      .addError(HealthStatus.annotations({ description: "The store does not answer" }), { status: 503 })
      .annotate(OpenApi.Summary, "Liveness of the server and its store (no key; not enveloped)")
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

export const HealthLive = HttpApiBuilder.group(ApiGroup.apiOf(HealthGroup), "health", (handlers) =>
  handlers.handle("health", () =>
    Effect.map(check, (body): HealthStatus | HttpServerResponse.HttpServerResponse =>
      body.store === "ok" ? body : HttpServerResponse.unsafeJson(body, { status: 503 }))))
