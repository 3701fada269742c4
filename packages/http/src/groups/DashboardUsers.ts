/** The organization's users for owners and admins (/dashboard/api/users, outside the spec). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { UserStore } from "@herald/core/access/UserStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath, userView, UserView } from "./DashboardSession.js"

export const DashboardUsersGroup = HttpApiGroup.make("dashboardUsers")
  .add(HttpApiEndpoint.get("list", "/users").addSuccess(Schema.Struct({ data: Schema.Array(UserView) })))
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

export const DashboardUsersLive = HttpApiBuilder.group(ApiGroup.apiOf(DashboardUsersGroup), "dashboardUsers", (handlers) =>
  handlers.handle("list", () =>
    Effect.gen(function*() {
      const caller = yield* SessionAuth.CurrentSession
      yield* SessionAuth.requireOwnerOrAdmin(caller)
      const users = yield* (yield* UserStore).list(Option.some(caller.organization.id)).pipe(Effect.orDie)
      return { data: users.map(userView) }
    })))
