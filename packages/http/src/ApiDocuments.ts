/**
 * The API's documents: the OpenAPI document at `openApiPath` and the interactive reference (Scalar)
 * at `docsPath`, each built on its first request rather than at start.
 *
 * Same routes and bodies as `HttpApiBuilder.middlewareOpenApi` and `HttpApiScalar.layer`, which both
 * derive the OpenAPI document while the server starts; the reference's page also embeds Scalar's
 * 3.4 MB script, a module whose import alone took ~150 ms and ~24 MB of RSS at every start
 * (bench/Startup.ts). Most starts never serve either.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"

export const layer = (options: { readonly openApiPath: `/${string}`; readonly docsPath: `/${string}` }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const api = yield* HttpApi.Api
      const openApi = yield* Effect.cached(
        Effect.suspend(() => HttpServerResponse.json(OpenApi.fromApi(api.api))).pipe(Effect.orDie)
      )
      yield* router.get(options.openApiPath, openApi)
      const scope = yield* Effect.scope
      const docs = yield* Effect.cached(
        Effect.promise(() => import("./internal/DocsPage.js")).pipe(
          Effect.flatMap((page) => page.make(api, options.docsPath, scope))
        )
      )
      yield* router.get(options.docsPath, Effect.flatten(docs))
    })
  )
