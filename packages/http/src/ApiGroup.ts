/**
 * How a resource group joins the API. A group module `groups/<Name>.ts` exports `<Name>Group` and
 * `<Name>Live`:
 *
 * ```ts
 * export const PostsGroup = HttpApiGroup.make("posts")
 *   .add(HttpApiEndpoint.get("list", "/posts").addSuccess(Envelope.ok(PostList)))
 *   .addError(ApiGroup.errors.notFound)
 *   .pipe(ApiGroup.authenticated)               // errors, auth middleware, then the /api/v1 prefix
 * export const PostsLive = HttpApiBuilder.group(ApiGroup.apiOf(PostsGroup), "posts", (handlers) => ...)
 * ```
 *
 * then one line in `Api.ts` (`.add(PostsGroup)`) and one in `Server.ts` (`PostsLive` in `handlers`).
 * Handlers return bare data (wrapped by `Envelope.ok`; `{ status: 201 }` etc. as usual) or fail with
 * `DomainError`; they check scopes with `Auth.requireScope`, read the caller from `Auth.CurrentKey`,
 * and resolve accounts with `Auth.visibleAccount`. Bodies: `.setPayload(ApiGroup.payload(Schema))`
 * so that `validation_error` lists every problem.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as Schema from "effect/Schema"
import { Authentication } from "./Auth.js"
import * as Envelope from "./Envelope.js"

/** The API's identifier: every group's handlers layer is keyed by it. */
export const apiId = "herald"

export const basePath = "/api/v1"

export const errors = {
  badRequest: Envelope.errorResponse(400),
  paymentRequired: Envelope.errorResponse(402),
  forbidden: Envelope.errorResponse(403),
  notFound: Envelope.errorResponse(404),
  conflict: Envelope.errorResponse(409),
  unprocessable: Envelope.errorResponse(422),
  tooManyRequests: Envelope.errorResponse(429),
  internal: Envelope.errorResponse(500)
} as const

/**
 * Finishes a group behind API-key authentication: the common error responses, the auth middleware
 * (401, 402, 429) and the `/api/v1` prefix. Call it after every endpoint has been added.
 */
export const authenticated = <
  Id extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  E,
  R,
  TopLevel extends boolean
>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, TopLevel>) =>
  group
    .addError(errors.badRequest)
    .addError(errors.forbidden)
    .addError(errors.internal)
    .middleware(Authentication)
    .prefix(basePath)

/**
 * A request body or query schema that reports every problem at once in `details.validation_errors`
 * (HttpApi would stop at the first).
 */
export const payload = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
  schema.annotations({ parseOptions: { errors: "all", onExcessProperty: "ignore" } })

/** A one-group API with the shared id, to build that group's handlers layer without import cycles. */
export const apiOf = <Group extends HttpApiGroup.HttpApiGroup.Any>(group: Group) => HttpApi.make(apiId).add(group)
