/**
 * The role matrix on /api/v1, enforced here for every route behind the API-key middleware: each
 * route names the `Roles.Action` it takes, and a browser session (spec Authentication rule 4: implicit
 * scopes read, write, ai) may take it only when the user's role allows (`Roles.can`). A member's
 * `change_post` also needs the post to be theirs (`Roles.canChangePost`); an unknown post is left to
 * the handler's 404. A refusal is 403 `insufficient_scope`, the spec's code for a credential that may
 * not do this, with `details.required_role` and `details.role`.
 *
 * API keys are not bounded by roles (organization credentials, rule 2). A route missing from the
 * table is for owners and admins only; a test checks that every authenticated route is listed.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as Roles from "@herald/core/access/Roles"
import { DomainError } from "@herald/core/kernel/Errors"
import { PostId } from "@herald/core/kernel/Ids"
import { PostStore } from "@herald/core/posts/PostStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Principal } from "./Auth.js"

/** `METHOD /api/v1/path` (the route as declared, `:name` for parameters) to the action it takes. */
export const routes: Readonly<Record<string, Roles.Action>> = {
  "GET /api/v1/me": "read",
  "GET /api/v1/accounts": "read",
  "GET /api/v1/accounts/:id": "read",
  "GET /api/v1/accounts/:id/health": "read",
  "POST /api/v1/accounts/connect-link": "manage_accounts",
  "POST /api/v1/accounts/connect-credential": "manage_accounts",
  "POST /api/v1/accounts/:id/reconnect": "manage_accounts",
  "DELETE /api/v1/accounts/:id": "manage_accounts",
  "GET /api/v1/posts": "read",
  "POST /api/v1/posts": "create_posts",
  "GET /api/v1/posts/:id": "read",
  "GET /api/v1/posts/:id/results": "read",
  "PATCH /api/v1/posts/:id": "change_post",
  "DELETE /api/v1/posts/:id": "change_post",
  "POST /api/v1/posts/:id/schedule": "change_post",
  "POST /api/v1/posts/:post_id/retry": "change_post",
  "POST /api/v1/posts/retry-failed": "retry_all_posts",
  "POST /api/v1/posts/bulk": "create_posts",
  "POST /api/v1/posts/bulk-schedule": "create_posts",
  "POST /api/v1/posts/:id/approve": "review_posts",
  "POST /api/v1/posts/:id/request-changes": "review_posts",
  "POST /api/v1/media/upload": "upload_media",
  "POST /api/v1/media/:id/complete": "upload_media",
  "POST /api/v1/media/upload-from-url": "upload_media",
  "GET /api/v1/media": "read",
  "GET /api/v1/media/:id": "read",
  "PATCH /api/v1/media/:id": "upload_media",
  "DELETE /api/v1/media/:id": "delete_media",
  "POST /api/v1/ai/generate-caption": "use_ai",
  "POST /api/v1/ai/generate-image": "use_ai",
  "GET /api/v1/analytics/summary": "read",
  "GET /api/v1/campaigns": "read",
  "POST /api/v1/campaigns": "organize_campaigns",
  "GET /api/v1/campaigns/:id": "read",
  "PATCH /api/v1/campaigns/:id": "organize_campaigns",
  "DELETE /api/v1/campaigns/:id": "delete_campaigns",
  "GET /api/v1/queue": "read",
  "GET /api/v1/platform-rules": "read",
  "POST /api/v1/webhooks": "manage_webhooks",
  "GET /api/v1/webhooks": "manage_webhooks",
  "GET /api/v1/webhooks/:id": "manage_webhooks",
  "PATCH /api/v1/webhooks/:id": "manage_webhooks",
  "DELETE /api/v1/webhooks/:id": "manage_webhooks",
  "POST /api/v1/webhooks/:id/test": "manage_webhooks",
  "GET /api/v1/webhooks/:id/deliveries": "manage_webhooks"
}

/** The action of a route; a route not in the table counts as an owner's or admin's. */
export const actionOf = (method: string, path: string): Roles.Action =>
  routes[`${method.toUpperCase()} ${path}`] ?? "manage_organization"

const refused = (role: string, action: Roles.Action, message: string) =>
  DomainError.fail("insufficient_scope", message, {
    required_role: action === "change_post" ? "owner, admin, or the member who created the post" : "owner or admin",
    role
  })

/**
 * Checks a principal against the route it called. Keys pass (their scopes and accounts are checked by
 * the handlers); a browser session passes when the user's role allows the route's action.
 */
export const authorize = (
  principal: Principal,
  method: string,
  path: string,
  params: Readonly<Record<string, string | undefined>>
): Effect.Effect<void, DomainError, PostStore> => {
  const session = principal.session
  if (session === undefined) return Effect.void
  const { user } = session
  const action = actionOf(method, path)
  if (!Roles.can(user.role, action)) {
    return refused(
      user.role,
      action,
      `A ${user.role} may not do this: it is for an owner or an admin of the organization`
    )
  }
  if (action !== "change_post" || Roles.isOwnerOrAdmin(user.role)) return Effect.void
  const id = Schema.decodeUnknownOption(PostId)((params["id"] ?? params["post_id"] ?? "").toLowerCase())
  if (Option.isNone(id)) return Effect.void
  return Effect.flatMap(PostStore, (posts) => posts.findById(principal.organization.id, id.value)).pipe(
    Effect.catchTag("PersistenceError", Effect.die),
    Effect.flatMap((found) =>
      Option.isNone(found) || Roles.canChangePost(user, found.value.post.createdBy)
        ? Effect.void
        : refused(user.role, action, "A member may change only the posts they created")
    )
  )
}

/** `authorize` for the route the HttpApi router matched (its declared path and parameters). */
export const authorizeRoute = (principal: Principal): Effect.Effect<void, DomainError, PostStore> =>
  principal.session === undefined
    ? Effect.void
    : Effect.flatMap(Effect.serviceOption(HttpRouter.RouteContext), (route) =>
      Option.isNone(route)
        // Without a matched route there is nothing to look up: only owners and admins pass.
        ? authorize(principal, "", "", {})
        : authorize(principal, route.value.route.method, route.value.route.path, route.value.params))
