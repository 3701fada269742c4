/**
 * The interactive reference page, loaded by `ApiDocuments` on the first request for it: Effect's own
 * `HttpApiScalar.layer` (the page with Scalar's script inline, no CDN), built on a router of its own
 * and answered through it, so the page stays exactly what that layer serves.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/** The page's route as an app; `scope` is the server's, which keeps the private router alive. */
export const make = (api: Context.Tag.Service<HttpApi.Api>, path: `/${string}`, scope: Scope.Scope) =>
  Layer.build(
    HttpApiScalar.layer({ path }).pipe(
      Layer.provideMerge(HttpApiBuilder.Router.Live),
      Layer.provide(Layer.succeed(HttpApi.Api, api))
    )
  ).pipe(
    Effect.flatMap((context) => Context.get(context, HttpApiBuilder.Router).router),
    Effect.provideService(Scope.Scope, scope)
  )
