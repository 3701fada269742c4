/**
 * The dashboard's session endpoints (outside the spec, under /dashboard/api; not in the OpenAPI
 * document): sign in, the current session, sign out, sign out everywhere, and setting a password with
 * a one-time token. Success bodies are the bare JSON the dashboard contract names; errors are the
 * spec's envelope. Sign-in and password-set need no session, but a foreign Origin is refused.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Role } from "@herald/core/access/Organization"
import * as Sessions from "@herald/core/access/Sessions"
import * as Users from "@herald/core/access/Users"
import type { DomainError, PersistenceError } from "@herald/core/kernel/Errors"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as RequestMiddleware from "../RequestMiddleware.js"
import * as SessionAuth from "../SessionAuth.js"
import * as SignInLimits from "../SignInLimits.js"

export const basePath = "/dashboard/api"

export const UserView = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  role: Role
}).annotations({ identifier: "DashboardUser" })

export const SessionView = Schema.Struct({
  user: UserView,
  organization: Schema.Struct({ id: Schema.String, name: Schema.String }),
  csrf_token: Schema.String
}).annotations({ identifier: "DashboardSession" })

/** A password field whose value never appears in a validation message. */
const Password = Schema.String.annotations({ message: () => "Expected a string" })

const SignInBody = Schema.Struct({ email: Schema.String, password: Password })
const PasswordBody = Schema.Struct({ token: Schema.String, password: Password })

export const DashboardSignInGroup = HttpApiGroup.make("dashboardSignIn")
  .add(
    HttpApiEndpoint.post("signIn", "/session")
      .setPayload(ApiGroup.payload(SignInBody))
      .addSuccess(SessionView)
  )
  .add(
    HttpApiEndpoint.post("setPassword", "/password")
      .setPayload(ApiGroup.payload(PasswordBody))
      .addSuccess(HttpApiSchema.NoContent)
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.forbidden)
  .addError(ApiGroup.errors.tooManyRequests)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(401))
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

export const DashboardSessionGroup = HttpApiGroup.make("dashboardSession")
  .add(HttpApiEndpoint.get("current", "/session").addSuccess(SessionView))
  .add(HttpApiEndpoint.del("signOut", "/session").addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.post("signOutEverywhere", "/session/revoke-all").addSuccess(HttpApiSchema.NoContent))
  .addError(ApiGroup.errors.internal)
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

export const userView = (user: Sessions.SignedIn["user"]) => ({
  id: user.id,
  email: user.email,
  name: user.name,
  role: user.role
})

const sessionView = (signedIn: Sessions.SignedIn, token: string) =>
  Effect.map(Sessions.csrfTokenFor(token), (csrf) => ({
    user: userView(signedIn.user),
    organization: { id: signedIn.organization.id, name: signedIn.organization.name },
    csrf_token: csrf
  }))

const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

const noContent = HttpServerResponse.empty({ status: 204 })

export const DashboardSignInLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardSignInGroup),
  "dashboardSignIn",
  (handlers) =>
    handlers
      .handle("signIn", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* SessionAuth.checkOrigin(request)
          const email = Users.normalizeEmail(payload.email)
          yield* SignInLimits.admit(email)
          const { signedIn, token } = yield* Sessions.signIn(email, Redacted.make(payload.password)).pipe(
            Effect.tapError((error) =>
              error._tag === "DomainError" && error.code === "invalid_credentials"
                ? SignInLimits.recordFailure(email)
                : Effect.void
            )
          )
          yield* RequestMiddleware.annotateRequestLog("user_id", signedIn.user.id)
          const body = yield* sessionView(signedIn, token)
          const response = yield* SessionAuth.withSessionCookie(HttpServerResponse.unsafeJson(body), request, token)
          // This browser is now known to the account: its sign-ins are never slowed.
          return yield* SignInLimits.withKnownDevice(response, email, yield* SessionAuth.isSecure(request))
        }).pipe(dieOnStorage))
      .handle("setPassword", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* SessionAuth.checkOrigin(request)
          const userId = yield* Users.setPassword(payload.token, Redacted.make(payload.password))
          yield* RequestMiddleware.annotateRequestLog("user_id", userId)
          return noContent
        }).pipe(dieOnStorage))
).pipe(Layer.provide(SessionAuth.layerSettingsFromEnv), Layer.provide(SignInLimits.layerFromEnv))

export const DashboardSessionLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardSessionGroup),
  "dashboardSession",
  (handlers) =>
    handlers
      .handle(
        "current",
        () => Effect.flatMap(SessionAuth.CurrentSession, (caller) => sessionView(caller, caller.token))
      )
      .handle("signOut", () =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* Sessions.signOut(caller.session).pipe(Effect.orDie)
          return yield* SessionAuth.withoutSessionCookie(noContent, yield* HttpServerRequest.HttpServerRequest)
        }))
      .handle("signOutEverywhere", () =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* Sessions.signOutEverywhere(caller.user.id).pipe(Effect.orDie)
          return yield* SessionAuth.withoutSessionCookie(noContent, yield* HttpServerRequest.HttpServerRequest)
        }))
).pipe(Layer.provide(SessionAuth.layerSettingsFromEnv))
