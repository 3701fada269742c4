/**
 * The hot routes, answered before the HttpApi router: authenticated `GET /api/v1/accounts` and
 * `POST /api/v1/posts` run the same authentication, rate limit, input limits, use case and request
 * middleware (envelope, error catalogue, headers, log line) as their HttpApi endpoints (whose
 * handlers are these same effects), without the router and the endpoint's per-request machinery
 * (security decoding, middleware and context provision). Every other request falls
 * through to the HttpApi app unchanged. `HERALD_FAST_PATH=off` turns it off.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as ApiGroup from "./ApiGroup.js"
import * as Auth from "./Auth.js"
import * as Accounts from "./groups/Accounts.js"
import * as Posts from "./groups/Posts.js"
import * as Permissions from "./Permissions.js"
import * as RequestMiddleware from "./RequestMiddleware.js"

/** Whether the fast path is on (the default); `HERALD_FAST_PATH=off` answers everything through HttpApi. */
export const enabled = (): boolean => (process.env.HERALD_FAST_PATH ?? "").trim().toLowerCase() !== "off"

const accountsPath = `${ApiGroup.basePath}/accounts`

/** The exact path, with or without a query string (the HttpApi route ignores the query of this endpoint). */
const isPath = (url: string, path: string): boolean =>
  url.length === path.length ? url === path : url.startsWith(path) && url.charCodeAt(path.length) === 63 // "?"

const postsPath = `${ApiGroup.basePath}/posts`

/**
 * A handler of the authenticated caller, behind the checks the HttpApi group's `Authentication` runs:
 * the key or session, then the role matrix for a session (the hot routes have no path parameters).
 */
const authenticatedAs = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  handler: (principal: Auth.Principal) => Effect.Effect<A, E, R>
) =>
  Effect.flatMap(Auth.authenticateRequest(request), (principal: Auth.Principal) =>
    principal.session === undefined
      ? handler(principal)
      : Effect.zipRight(
        Permissions.authorize(principal, request.method, request.url.split("?")[0]!, {}),
        handler(principal)
      ))

/** An endpoint behind the API-key middleware, with the caller in `CurrentKey`. */
const authenticated = <A, E, R>(handler: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) => authenticatedAs(request, (principal) => Effect.provideService(handler, Auth.CurrentKey, principal))
  )

/**
 * A hot route's answer: an effect reading the request from its context, or a function of the request
 * whose effect does not need it there (run without adding the request to the runtime's context).
 */
export type Route<R> =
  | Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest>
  | ((request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>)

/** The hot routes: the route answering `method url`, or undefined for every other request. */
export type RouteOf<R> = (method: string, url: string) => Route<R> | undefined

/** The route's effect for `request`, with the request in its context. */
export const runRoute = <R>(
  route: Route<R>,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest> =>
  typeof route === "function" ? route(request) : route

/**
 * The hot routes (`routeOf`, also answered below the platform by `NodeFastPath`) and `wrap`, which
 * puts them in front of the HttpApi app: everything else goes to `app`.
 */
export const make = Effect.gen(function*() {
  const middlewareFor = yield* RequestMiddleware.makeForRequest
  const middleware = yield* RequestMiddleware.make
  const listAccounts = (request: HttpServerRequest.HttpServerRequest) =>
    middlewareFor(request, authenticatedAs(request, Accounts.listFor))
  const createPost = middleware(authenticated(Posts.create))
  type AccountsRequirements = Effect.Effect.Context<ReturnType<typeof listAccounts>>
  // The request itself is not a requirement: it is given (to `GET /accounts` as an argument).
  type Requirements = Exclude<
    AccountsRequirements | Effect.Effect.Context<typeof createPost>,
    HttpServerRequest.HttpServerRequest
  >
  const routeOf: RouteOf<Requirements> = (method, url) => {
    switch (method) {
      case "GET":
        return isPath(url, accountsPath) ? listAccounts : undefined
      case "POST":
        return isPath(url, postsPath) ? createPost : undefined
      default:
        return undefined
    }
  }
  const wrap = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | Requirements> =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request): HttpApp.Default<E, R | Requirements> => {
        const route = routeOf(request.method, request.url)
        return route === undefined ? app : runRoute(route, request)
      }
    )
  return { routeOf, wrap }
})
