/**
 * Device login approved in the browser (/dashboard/api/device/*, outside the spec): look a user code
 * up, approve it for the signed-in user's organization, or deny it. The same use case as `herald
 * device approve|deny` (`DeviceLogin.decide`). Approving mints an organization key, so only owners
 * and admins approve or deny (403 `forbidden` for members); anyone signed in may look a code up.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ApiKey from "@herald/core/access/ApiKey"
import * as DeviceLogin from "@herald/core/access/DeviceLogin"
import { DomainError } from "@herald/core/kernel/Errors"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath } from "./DashboardSession.js"

export const DeviceRequestView = Schema.Struct({
  user_code: Schema.String,
  client_name: Schema.NullOr(Schema.String),
  scopes: Schema.Array(ApiKey.Scope),
  status: Schema.Literal("pending", "authorized", "denied", "consumed", "expired"),
  expires_at: Schema.String
}).annotations({ identifier: "DashboardDeviceRequest" })

const CodePath = Schema.Struct({ user_code: Schema.String })

export const DashboardDeviceGroup = HttpApiGroup.make("dashboardDevice")
  .add(HttpApiEndpoint.get("lookup", "/device/:user_code").setPath(CodePath).addSuccess(DeviceRequestView))
  .add(
    HttpApiEndpoint.post("approve", "/device/:user_code/approve").setPath(CodePath).addSuccess(HttpApiSchema.NoContent)
  )
  .add(HttpApiEndpoint.post("deny", "/device/:user_code/deny").setPath(CodePath).addSuccess(HttpApiSchema.NoContent))
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

const decide = (userCode: string, approve: boolean) =>
  Effect.gen(function*() {
    const caller = yield* SessionAuth.CurrentSession
    yield* SessionAuth.requireOwnerOrAdmin(caller)
    yield* DeviceLogin.decide(
      userCode,
      approve ? { status: "authorized", organizationId: caller.organization.id } : { status: "denied" }
    ).pipe(Effect.catchTag("PersistenceError", Effect.die))
    return HttpServerResponse.empty({ status: 204 })
  })

export const DashboardDeviceLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardDeviceGroup),
  "dashboardDevice",
  (handlers) =>
    handlers
      .handle("lookup", ({ path }) =>
        Effect.gen(function*() {
          const found = yield* DeviceLogin.lookup(path.user_code).pipe(Effect.orDie)
          if (Option.isNone(found)) {
            return yield* DomainError.fail("not_found", `No device login request with the code ${path.user_code}`)
          }
          const { authorization, state, userCode } = found.value
          return {
            user_code: userCode,
            client_name: Option.getOrNull(authorization.clientName),
            scopes: DeviceLogin.deviceKeyScopes,
            status: state,
            expires_at: DateTime.formatIso(authorization.expiresAt)
          }
        }))
      .handle("approve", ({ path }) => decide(path.user_code, true))
      .handle("deny", ({ path }) => decide(path.user_code, false))
)
