/**
 * The organization's people for the dashboard (/dashboard/api, outside the spec): the users, their
 * roles and removal, and invitations by link with a role (`Team` holds the rules). Joining through a
 * link needs no session: the invitee previews the link, then sets a name and password, and is signed in.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import type { Invitation } from "@herald/core/access/InvitationStore"
import { Role } from "@herald/core/access/Organization"
import * as Sessions from "@herald/core/access/Sessions"
import * as Team from "@herald/core/access/Team"
import { UserStore } from "@herald/core/access/UserStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as InvitationMail from "../InvitationMail.js"
import * as Envelope from "../Envelope.js"
import * as RequestMiddleware from "../RequestMiddleware.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath, SessionView, UserView, userView } from "./DashboardSession.js"

export const InvitationView = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  role: Role,
  invited_by: Schema.String,
  expires_at: Schema.String,
  created_at: Schema.String
}).annotations({ identifier: "DashboardInvitation" })

const invitationView = (invitation: Invitation): typeof InvitationView.Type => ({
  id: invitation.id,
  email: invitation.email,
  role: invitation.role,
  invited_by: invitation.invitedBy,
  expires_at: DateTime.formatIso(invitation.expiresAt),
  created_at: DateTime.formatIso(invitation.createdAt)
})

/** The page that opens an invitation link. */
export const joinPath = "/join"

const IdPath = Schema.Struct({ id: Schema.String })
const InviteBody = Schema.Struct({ email: Schema.String, role: Role })
const RoleBody = Schema.Struct({ role: Role })
const TokenBody = Schema.Struct({ token: Schema.String })
const AcceptBody = Schema.Struct({
  token: Schema.String,
  name: Schema.String,
  password: Schema.String.annotations({ message: () => "Expected a string" })
})

export const DashboardUsersGroup = HttpApiGroup.make("dashboardUsers")
  .add(HttpApiEndpoint.get("list", "/users").addSuccess(Schema.Struct({ data: Schema.Array(UserView) })))
  .add(
    HttpApiEndpoint.patch("setRole", "/users/:id").setPath(IdPath).setPayload(ApiGroup.payload(RoleBody)).addSuccess(
      UserView
    )
  )
  .add(HttpApiEndpoint.del("remove", "/users/:id").setPath(IdPath).addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.get("invitations", "/invitations").addSuccess(Schema.Struct({ data: Schema.Array(InvitationView) }))
  )
  .add(
    HttpApiEndpoint.post("invite", "/invitations")
      .setPayload(ApiGroup.payload(InviteBody))
      .addSuccess(
        Schema.Struct({
          invitation: InvitationView,
          /** The link to hand to the invitee, relative to the dashboard's origin; shown once. */
          path: Schema.String,
          /** Whether the link was e-mailed to the invitee (SMTP configured and the server took it). */
          emailed: Schema.Boolean,
          /** Why an e-mail was not sent, in plain words, when one was tried. */
          email_problem: Schema.optional(Schema.String)
        }),
        { status: 201 }
      )
  )
  .add(HttpApiEndpoint.del("withdraw", "/invitations/:id").setPath(IdPath).addSuccess(HttpApiSchema.NoContent))
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

export const DashboardJoinGroup = HttpApiGroup.make("dashboardJoin")
  .add(
    HttpApiEndpoint.post("preview", "/invitations/preview")
      .setPayload(ApiGroup.payload(TokenBody))
      .addSuccess(Schema.Struct({
        organization: Schema.Struct({ name: Schema.String }),
        email: Schema.String,
        role: Role,
        expires_at: Schema.String
      }))
  )
  .add(
    HttpApiEndpoint.post("accept", "/invitations/accept")
      .setPayload(ApiGroup.payload(AcceptBody))
      .addSuccess(SessionView, { status: 201 })
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.forbidden)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(401))
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

const actorOf = (caller: SessionAuth.Caller): Team.Actor => ({
  id: caller.user.id,
  organizationId: caller.organization.id,
  role: caller.user.role
})

const noContent = HttpServerResponse.empty({ status: 204 })

export const DashboardUsersLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardUsersGroup),
  "dashboardUsers",
  (handlers) =>
    handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* SessionAuth.requireOwnerOrAdmin(caller)
          const users = yield* (yield* UserStore).list(Option.some(caller.organization.id)).pipe(Effect.orDie)
          return { data: users.map(userView) }
        }))
      .handle("setRole", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          return userView(yield* Team.changeRole(actorOf(caller), path.id, payload.role))
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
      .handle("remove", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* Team.remove(actorOf(caller), path.id)
          return noContent
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
      .handle("invitations", () =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          return { data: (yield* Team.listInvitations(actorOf(caller))).map(invitationView) }
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
      .handle("invite", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          const { invitation, token } = yield* Team.invite(actorOf(caller), payload)
          const path = `${joinPath}?token=${token}`
          const view = { invitation: invitationView(invitation), path }
          const sender = yield* Effect.serviceOption(InvitationMail.InvitationMailer).pipe(Effect.map(Option.flatten))
          if (Option.isNone(sender)) return { ...view, emailed: false }
          const request = yield* HttpServerRequest.HttpServerRequest
          const message = InvitationMail.compose({
            to: invitation.email,
            organizationName: caller.organization.name,
            inviterName: caller.user.name,
            role: invitation.role,
            link: `${InvitationMail.linkBase(sender.value.publicUrl, request.headers)}${path}`,
            expiresAt: invitation.expiresAt
          })
          return yield* sender.value.mailer.send(message).pipe(
            Effect.as({ ...view, emailed: true }),
            Effect.catchAll((e) =>
              Effect.logWarning("invitation e-mail not sent", e.message).pipe(
                Effect.as({
                  ...view,
                  emailed: false,
                  email_problem: `The e-mail could not be sent (the mail server answered: ${e.message}); ${
                    e.permanent ? "check the address, or send" : "send"
                  } the link yourself.`
                })
              )
            )
          )
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
      .handle("withdraw", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* SessionAuth.CurrentSession
          yield* Team.withdrawInvitation(actorOf(caller), path.id)
          return noContent
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
)

export const DashboardJoinLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardJoinGroup),
  "dashboardJoin",
  (handlers) =>
    handlers
      .handle("preview", ({ payload }) =>
        Effect.gen(function*() {
          yield* SessionAuth.checkOrigin(yield* HttpServerRequest.HttpServerRequest)
          const { invitation, organization } = yield* Team.preview(payload.token)
          return {
            organization: { name: organization.name },
            email: invitation.email,
            role: invitation.role,
            expires_at: DateTime.formatIso(invitation.expiresAt)
          }
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
      .handle("accept", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* SessionAuth.checkOrigin(request)
          const password = Redacted.make(payload.password)
          const user = yield* Team.accept(payload.token, { name: payload.name, password })
          yield* RequestMiddleware.annotateRequestLog("user_id", user.id)
          // Joined: signed in at once, as after a sign-in.
          const { signedIn, token } = yield* Sessions.signIn(user.email, password)
          const body = {
            user: userView(signedIn.user),
            organization: { id: signedIn.organization.id, name: signedIn.organization.name },
            csrf_token: yield* Sessions.csrfTokenFor(token)
          }
          return yield* SessionAuth.withSessionCookie(
            HttpServerResponse.unsafeJson(body, { status: 201 }),
            request,
            token
          )
        }).pipe(Effect.catchTag("PersistenceError", Effect.die)))
).pipe(Layer.provide(SessionAuth.layerSettingsFromEnv))
