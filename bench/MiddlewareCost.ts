/**
 * The request middleware's own CPU per request, in process (no socket, no router): an app that
 * answers a constant response, wrapped by `RequestMiddleware.make`, run N times one after another
 * with a request built from a web Request; the logger discards its lines (formatting still runs in
 * the log call's annotations). `npx tsx --conditions=herald-source bench/MiddlewareCost.ts [n]`.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as IdGenerator from "@herald/core/kernel/IdGenerator"
import * as RequestMiddleware from "@herald/http/RequestMiddleware"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

const n = Number(process.argv[2] ?? "50000")
const program = Effect.gen(function*() {
  const wrap = yield* RequestMiddleware.make
  const app = wrap(Effect.as(RequestMiddleware.annotateRequestLog("post_id", "p"), HttpServerResponse.text("ok")))
  const request = HttpServerRequest.fromWeb(new Request("http://localhost/api/v1/accounts"))
  const once = Effect.provideService(app, HttpServerRequest.HttpServerRequest, request)
  for (let i = 0; i < 2000; i++) yield* once
  const before = process.cpuUsage()
  for (let i = 0; i < n; i++) yield* once
  const used = process.cpuUsage(before)
  return ((used.user + used.system) / n).toFixed(1)
}).pipe(
  Effect.provide(IdGenerator.layerSequential),
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(() => undefined)))
)
for (let round = 0; round < 3; round++) console.log(`middleware CPU ${await Effect.runPromise(program)} us/request`)
