/**
 * The connect bridge the published CLI uses, beside the spec's connect routes and on the same
 * machinery (`ConnectLinks`, `CredentialConnect`): `POST /auth/social-connect/start` returns an
 * authorization URL and a session to poll at `GET /auth/social-connect/poll/{session_id}` until the
 * OAuth callback completes or cancels it; `POST /auth/social-connect/{bluesky,telegram,discord}`
 * connect credential platforms with the bodies of `POST /accounts/connect-credential`. Scope write.
 * Without a key: 401 `api_key_required` in the auth-layer shape (the spec names it for the
 * social-connect flows).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as CredentialConnect from "@herald/core/accounts/CredentialConnect"
import * as OAuthProviders from "@herald/core/accounts/OAuthProviders"
import * as ConnectSessions from "@herald/core/accounts/ConnectSessions"
import { ConnectSessionId } from "@herald/core/accounts/ConnectSessionStore"
import { DomainError } from "@herald/core/kernel/Errors"
import { AccountId } from "@herald/core/kernel/Ids"
import { type CredentialPlatform, OAuthPlatform } from "@herald/core/domain/Platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AccountView from "../AccountView.js"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import { ConnectCredentialPayload, ConnectCredentialResult } from "./Connections.js"

// wire shapes

export const SocialConnectStartRequest = Schema.Struct({
  platform: OAuthPlatform,
  mode: Schema.optional(
    Schema.Literal("connect", "reconnect").annotations({
      description: "reconnect repairs account_id (an account whose health shows needs_reconnection or token_expired)"
    })
  ),
  account_id: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({ description: "Required with mode reconnect" })
  )
}).annotations({ identifier: "SocialConnectStartRequest" })

export const SocialConnectSession = Schema.Struct({
  session_id: Schema.String,
  platform: OAuthPlatform,
  mode: Schema.Literal("connect", "reconnect"),
  account_id: Schema.NullOr(Schema.Int),
  authorize_url: Schema.String.annotations({ description: "Open in a browser; valid expires_in seconds" }),
  interval: Schema.Int.annotations({ description: "Seconds between two polls" }),
  expires_in: Schema.Int,
  expires_at: Schema.String,
  instructions: Schema.String
}).annotations({ identifier: "SocialConnectSession" })

export const SocialConnectPoll = Schema.Struct({
  session_id: Schema.String,
  platform: OAuthPlatform,
  status: Schema.Literal("pending", "completed", "expired", "cancelled"),
  account: Schema.NullOr(AccountView.Account).annotations({
    description: "The connected account when completed (the first, when one login granted several)"
  }),
  message: Schema.NullOr(Schema.String).annotations({ description: "Why a cancelled session ended" }),
  expires_at: Schema.String
}).annotations({ identifier: "SocialConnectPoll" })

/** The body of `POST /accounts/connect-credential`; `platform` may be left out (the path names it). */
export const SocialConnectCredentialRequest = Schema.Struct({
  ...ConnectCredentialPayload.fields,
  platform: Schema.optional(ConnectCredentialPayload.fields.platform)
}).annotations({ identifier: "SocialConnectCredentialRequest" })

const credentialEndpoint = <const Name extends string>(name: Name, platform: CredentialPlatform) =>
  HttpApiEndpoint.post(name, `/auth/social-connect/${platform}`)
    .setPayload(ApiGroup.payload(SocialConnectCredentialRequest))
    .addSuccess(Envelope.ok(ConnectCredentialResult))
    .annotate(
      OpenApi.Summary,
      `Connect ${platform} with credentials, validated live (scope write); the body of ` +
        "POST /accounts/connect-credential; 400 auth_failed when the platform refuses"
    )

export const SocialConnectGroup = HttpApiGroup.make("socialConnect")
  .add(
    HttpApiEndpoint.post("start", "/auth/social-connect/start")
      .setPayload(ApiGroup.payload(SocialConnectStartRequest))
      .addSuccess(Envelope.ok(SocialConnectSession))
      .annotate(
        OpenApi.Summary,
        "Start an OAuth connection for a CLI (scope write): open authorize_url in a browser, then poll " +
          "GET /auth/social-connect/poll/{session_id} every `interval` seconds; 400 misconfig when the platform " +
          "is not configured"
      )
  )
  .add(
    HttpApiEndpoint.get("poll", "/auth/social-connect/poll/:session_id")
      .setPath(Schema.Struct({ session_id: Schema.String }))
      .addSuccess(Envelope.ok(SocialConnectPoll))
      .annotate(
        OpenApi.Summary,
        "A connect session's status: pending, completed (with account), expired (after 600 s) or cancelled " +
          "(consent declined or the platform refused)"
      )
  )
  .add(credentialEndpoint("bluesky", "bluesky"))
  .add(credentialEndpoint("telegram", "telegram"))
  .add(credentialEndpoint("discord", "discord"))
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.forbidden)
  .addError(ApiGroup.errors.notFound)
  .addError(ApiGroup.errors.internal)
  .middleware(Auth.KeyRequiredAuthentication)
  .prefix(ApiGroup.basePath)

// handlers

/** Provides the connection settings and providers, or fails with 400 misconfig. */
const withConnectServices = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const settings = yield* Effect.serviceOption(OAuthProviders.ConnectSettings)
    const providers = yield* Effect.serviceOption(OAuthProviders.OAuthProviders)
    if (Option.isNone(settings) || Option.isNone(providers)) {
      return yield* DomainError.fail(
        "misconfig",
        "Account connections through OAuth are not configured on this server (see HERALD_PUBLIC_URL and " +
          "HERALD_<PLATFORM>_CLIENT_ID / _CLIENT_SECRET)"
      )
    }
    return yield* self.pipe(
      Effect.provideService(OAuthProviders.ConnectSettings, settings.value),
      Effect.provideService(OAuthProviders.OAuthProviders, providers.value)
    )
  })

const dieOnPersistence = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    self,
    (e): e is Extract<E, { readonly _tag: "PersistenceError" }> =>
      typeof e === "object" && e !== null && "_tag" in e && e._tag === "PersistenceError",
    Effect.die
  ) as Effect.Effect<A, Exclude<E, { readonly _tag: "PersistenceError" }>, R>

const connectCredential = (
  platform: CredentialPlatform,
  payload: typeof SocialConnectCredentialRequest.Type
) =>
  Effect.gen(function*() {
    const { organization } = yield* Auth.requireScope("write")
    const { platform: named, ...input } = payload
    if (named !== undefined && named !== platform) {
      return yield* DomainError.fail("validation_error", `This endpoint connects ${platform}, not ${named}`, {
        validation_errors: [{ path: "platform", message: `platform must be ${platform} on this endpoint` }]
      })
    }
    const saved = yield* CredentialConnect.connectWithCredentials({ organizationId: organization.id, platform, input })
    return {
      platform,
      connected: true,
      account: AccountView.toAccount(saved.account, yield* DateTime.now),
      instructions: CredentialConnect.credentialInstructions[platform]
    }
  }).pipe(dieOnPersistence)

const notFound = DomainError.of("not_found", "Connect session not found")

export const SocialConnectLive = HttpApiBuilder.group(
  ApiGroup.apiOf(SocialConnectGroup),
  "socialConnect",
  (handlers) =>
    handlers
      .handle("start", ({ payload }) =>
        Effect.gen(function*() {
          const { organization } = yield* Auth.requireScope("write")
          const mode = payload.mode ?? "connect"
          if (mode === "reconnect" && payload.account_id === undefined) {
            return yield* DomainError.fail("validation_error", "mode reconnect needs account_id", {
              validation_errors: [{ path: "account_id", message: "account_id is required when mode is reconnect" }]
            })
          }
          const reconnect = mode === "reconnect" && payload.account_id !== undefined
            ? Option.some(yield* Auth.visibleAccount(AccountId.make(payload.account_id)))
            : Option.none()
          const started = yield* withConnectServices(
            ConnectSessions.start({ organizationId: organization.id, platform: payload.platform, reconnect })
          )
          return {
            session_id: started.session.id,
            platform: started.session.platform,
            mode,
            account_id: Option.getOrNull(started.session.reconnectAccountId),
            authorize_url: started.authorizeUrl,
            interval: ConnectSessions.pollIntervalSeconds,
            expires_in: started.expiresInSeconds,
            expires_at: DateTime.formatIso(started.session.expiresAt),
            instructions: started.instructions
          }
        }).pipe(dieOnPersistence))
      .handle("poll", ({ path }) =>
        Effect.gen(function*() {
          const { organization } = yield* Auth.requireScope("write")
          if (!Schema.is(ConnectSessionId)(path.session_id)) return yield* Effect.fail(notFound)
          const polled = yield* ConnectSessions.poll(organization.id, path.session_id)
          const now = yield* DateTime.now
          return {
            session_id: polled.session.id,
            platform: polled.session.platform,
            status: polled.status,
            account: polled.status === "completed"
              ? Option.getOrNull(Option.map(polled.account, (account) => AccountView.toAccount(account, now)))
              : null,
            message: polled.status === "cancelled" ? polled.reason : null,
            expires_at: DateTime.formatIso(polled.session.expiresAt)
          }
        }).pipe(dieOnPersistence))
      .handle("bluesky", ({ payload }) => connectCredential("bluesky", payload))
      .handle("telegram", ({ payload }) => connectCredential("telegram", payload))
      .handle("discord", ({ payload }) => connectCredential("discord", payload))
)
