/**
 * Connecting accounts: `POST /accounts/connect-link`, `POST /accounts/connect-credential`,
 * `POST /accounts/{id}/reconnect`, `DELETE /accounts/{id}` (all under /api/v1, scope write), and the
 * OAuth redirect target `GET /oauth/callback/{platform}`, outside /api/v1 and without an API key: the
 * identity is in the signed state. The callback answers an HTML page for the person in the browser:
 * 200 when the account is connected, 400 for an expired, altered or refused link (500 on a fault).
 *
 * The connection settings and OAuth providers are optional services: without them every OAuth
 * endpoint answers 400 `misconfig` saying what to configure.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ConnectLinks from "@herald/core/accounts/ConnectLinks"
import * as ConnectedAccounts from "@herald/core/accounts/ConnectedAccounts"
import * as CredentialConnect from "@herald/core/accounts/CredentialConnect"
import * as OAuthCallback from "@herald/core/accounts/OAuthCallback"
import * as OAuthProviders from "@herald/core/accounts/OAuthProviders"
import type { ConnectStateError } from "@herald/core/accounts/ConnectState"
import { DomainError } from "@herald/core/kernel/Errors"
import * as FieldCaps from "@herald/core/kernel/FieldCaps"
import { CredentialPlatform, OAuthPlatform } from "@herald/core/domain/Platform"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AccountView from "../AccountView.js"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import { parseAccountId } from "./Accounts.js"

// wire shapes

export const ConnectLinkPayload = Schema.Struct({
  platform: OAuthPlatform
}).annotations({ identifier: "ConnectLinkRequest" })

export const ConnectLink = Schema.Struct({
  platform: OAuthPlatform,
  url: Schema.String.annotations({ description: "The platform's authorization URL, with a signed state" }),
  expires_in_seconds: Schema.Int,
  instructions: Schema.String
}).annotations({ identifier: "ConnectLink" })

/** Credentials, handles and URLs: capped like URLs (`FieldCaps.maxUrl`), checked before any call out. */
const optionalString = (description: string) =>
  Schema.optional(FieldCaps.cappedString(FieldCaps.maxUrl).annotations({ description }))

/**
 * A Telegram chat: `@username`, or the numeric chat id as a string or as a JSON number (a channel's id
 * such as -1001234567890 is within JSON's exact integers); the client is given its decimal text.
 */
const TelegramChannel = Schema.Union(FieldCaps.cappedString(FieldCaps.maxUrl), Schema.Int).annotations({
  description: "telegram: @username or numeric chat id (a string or a JSON number); the bot must be a channel admin"
})

export const ConnectCredentialPayload = Schema.Struct({
  platform: CredentialPlatform,
  bot_token: optionalString("telegram: the bot's token from BotFather"),
  channel: Schema.optional(TelegramChannel),
  webhook_url: optionalString("discord: the channel's webhook URL"),
  handle: optionalString("bluesky: the handle (or DID or email)"),
  app_password: optionalString("bluesky: an app password (xxxx-xxxx-xxxx-xxxx), never the main password"),
  service: optionalString("bluesky: the PDS origin; https://bsky.social by default")
}).annotations({ identifier: "ConnectCredentialRequest" })

/** What a secret sent in a request comes back as: its name, never its value. */
export const redacted = "[redacted]"

/** The credential fields that are secrets (a Discord webhook URL carries its token). */
const secretFields = ["bot_token", "webhook_url", "app_password"] as const

const Redacted = Schema.optional(Schema.Literal(redacted).annotations({ description: "Sent; a secret, never echoed" }))
const Echoed = Schema.optional(Schema.String.annotations({ description: "As sent" }))

export const ConnectCredentialResult = Schema.Struct({
  platform: CredentialPlatform,
  connected: Schema.Boolean,
  account: Schema.NullOr(AccountView.Account),
  instructions: Schema.String,
  bot_token: Redacted,
  channel: Schema.optional(Schema.Union(Schema.String, Schema.Int).annotations({ description: "As sent" })),
  webhook_url: Redacted,
  handle: Echoed,
  app_password: Redacted,
  service: Echoed
}).annotations({
  identifier: "ConnectCredentialResult",
  description: "Every credential field the request sent comes back by name (round trip); secrets as \"[redacted]\""
})

/** The request's credential fields for the answer: secrets redacted, the rest as sent. */
const echoCredentials = (
  input: Omit<typeof ConnectCredentialPayload.Type, "platform">
): Omit<typeof ConnectCredentialResult.Type, "platform" | "connected" | "account" | "instructions"> => {
  const echoed: Record<string, string | number> = {}
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) continue
    echoed[field] = (secretFields as ReadonlyArray<string>).includes(field) ? redacted : value
  }
  return echoed
}

export const ReconnectLink = Schema.Struct({
  account_id: Schema.Int,
  platform: OAuthPlatform,
  account_name: Schema.String,
  url: Schema.String,
  expires_in_seconds: Schema.Int,
  instructions: Schema.String
}).annotations({ identifier: "ReconnectLink" })

export const Disconnected = Schema.Struct({
  account_id: Schema.Int,
  platform: Schema.String,
  account_name: Schema.String,
  disconnected: Schema.Boolean
}).annotations({ identifier: "DisconnectResult" })

const IdPath = Schema.Struct({
  id: Schema.String.annotations({ description: "The account's integer id; non-numeric values give 400 invalid_id" })
})

export const ConnectionsGroup = HttpApiGroup.make("connections")
  .add(
    HttpApiEndpoint.post("connectLink", "/accounts/connect-link")
      .setPayload(ApiGroup.payload(ConnectLinkPayload))
      .addSuccess(Envelope.ok(ConnectLink))
      .annotate(
        OpenApi.Summary,
        "Authorization URL to connect an OAuth account (scope write); valid 600 s; 400 misconfig when the " +
          "platform's client is not configured"
      )
  )
  .add(
    HttpApiEndpoint.post("connectCredential", "/accounts/connect-credential")
      .setPayload(ApiGroup.payload(ConnectCredentialPayload))
      .addSuccess(Envelope.ok(ConnectCredentialResult))
      .annotate(
        OpenApi.Summary,
        "Connect telegram, discord or bluesky with credentials, validated live (scope write); 400 auth_failed " +
          "with the platform's reason when refused; resubmitting updates the account in place"
      )
  )
  .add(
    HttpApiEndpoint.post("reconnect", "/accounts/:id/reconnect")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(ReconnectLink))
      .annotate(
        OpenApi.Summary,
        "Reconnect link for an OAuth account whose health shows needs_reconnection or token_expired (scope write)"
      )
  )
  .add(
    HttpApiEndpoint.del("disconnect", "/accounts/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(Disconnected))
      .annotate(OpenApi.Summary, "Disconnect an account and delete its credentials (scope write)")
  )
  .addError(ApiGroup.errors.notFound)
  .pipe(ApiGroup.authenticated)

export const CallbackParams = Schema.Struct({
  code: Schema.optional(Schema.String),
  state: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String),
  error_description: Schema.optional(Schema.String)
})

export const OAuthCallbackGroup = HttpApiGroup.make("oauthCallback")
  .add(
    HttpApiEndpoint.get("callback", "/oauth/callback/:platform")
      .setPath(Schema.Struct({ platform: Schema.String }))
      .setUrlParams(CallbackParams)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .addError(HttpApiSchema.Text({ contentType: "text/html" }), { status: 400 })
      .annotate(
        OpenApi.Summary,
        "OAuth redirect target (no API key; the state is signed). Answers an HTML page: 200 connected, 400 " +
          "for an expired, altered or refused link"
      )
  )

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

const dieOnPersistence = <A, E, R>(self: Effect.Effect<A, E | { readonly _tag: "PersistenceError" }, R>) =>
  Effect.catchIf(
    self,
    (e): e is Extract<E | { readonly _tag: "PersistenceError" }, { readonly _tag: "PersistenceError" }> =>
      typeof e === "object" && e !== null && "_tag" in e && e._tag === "PersistenceError",
    Effect.die
  ) as Effect.Effect<A, Exclude<E, { readonly _tag: "PersistenceError" }>, R>

export const ConnectionsLive = HttpApiBuilder.group(
  ApiGroup.apiOf(ConnectionsGroup),
  "connections",
  (handlers) =>
    handlers
      .handle("connectLink", ({ payload }) =>
        Effect.gen(function*() {
          const { organization } = yield* Auth.requireScope("write")
          const link = yield* withConnectServices(
            ConnectLinks.createConnectLink({ organizationId: organization.id, platform: payload.platform })
          )
          return {
            platform: link.platform,
            url: link.url,
            expires_in_seconds: link.expiresInSeconds,
            instructions: link.instructions
          }
        }))
      .handle("connectCredential", ({ payload }) =>
        Effect.gen(function*() {
          const { organization } = yield* Auth.requireScope("write")
          const { platform, ...input } = payload
          const saved = yield* CredentialConnect.connectWithCredentials({
            organizationId: organization.id,
            platform,
            input
          })
            .pipe(dieOnPersistence)
          return {
            platform,
            connected: true,
            account: AccountView.toAccount(saved.account, yield* DateTime.now),
            instructions: CredentialConnect.credentialInstructions[platform],
            ...echoCredentials(input)
          }
        }))
      .handle("reconnect", ({ path }) =>
        Effect.gen(function*() {
          const { organization } = yield* Auth.requireScope("write")
          const account = yield* Auth.visibleAccount(yield* parseAccountId(path.id))
          const link = yield* withConnectServices(
            ConnectLinks.createReconnectLink({ organizationId: organization.id, account })
          )
          return {
            account_id: link.accountId,
            platform: link.platform,
            account_name: link.accountName,
            url: link.url,
            expires_in_seconds: link.expiresInSeconds,
            instructions: link.instructions
          }
        }))
      .handle("disconnect", ({ path }) =>
        Effect.gen(function*() {
          const { organization } = yield* Auth.requireScope("write")
          const visible = yield* Auth.visibleAccount(yield* parseAccountId(path.id))
          const account = yield* ConnectedAccounts.disconnect(organization.id, visible.id).pipe(dieOnPersistence)
          return {
            account_id: account.id,
            platform: account.platform,
            account_name: account.accountName,
            disconnected: true
          }
        }))
)

// the callback page

const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

export const page = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escape(title)} · Herald</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style>
</head><body><h1>${escape(title)}</h1><p>${escape(body)}</p></body></html>
`

const htmlResponse = (status: number, title: string, body: string) =>
  HttpServerResponse.text(page(title, body), {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
  })

const stateTitle: Record<ConnectStateError["reason"], string> = {
  expired: "This link has expired",
  tampered: "This link is not valid",
  malformed: "This link is incomplete"
}

/**
 * One sentence per account the authorization granted (a Facebook login can grant several Pages), and
 * one more when a reconnect link's account was not among them (it still needs reconnection).
 */
export const callbackSummary = (result: OAuthCallback.CallbackResult): string => {
  const reconnecting = Option.getOrUndefined(result.reconnectAccountId)
  const lines = result.accounts.map(({ account, created }) => {
    const what = created
      ? "is now connected"
      : reconnecting !== undefined && reconnecting !== account.id
      ? "was already connected and has been updated"
      : "is reconnected"
    return `${account.accountName} on ${account.platform} ${what}.`
  })
  if (reconnecting !== undefined && !result.accounts.some(({ account }) => account.id === reconnecting)) {
    lines.push("The account this link was for was not among those authorized and still needs reconnection.")
  }
  return lines.join(" ")
}

export const OAuthCallbackLive = HttpApiBuilder.group(
  ApiGroup.apiOf(OAuthCallbackGroup),
  "oauthCallback",
  (handlers) =>
    handlers.handle("callback", ({ path, urlParams }) =>
      Effect.gen(function*() {
        if (!Schema.is(OAuthPlatform)(path.platform)) {
          return htmlResponse(400, "Unknown platform", `Herald does not connect "${path.platform}" through OAuth.`)
        }
        const result = yield* withConnectServices(
          OAuthCallback.completeCallback({
            platform: path.platform,
            state: urlParams.state,
            code: urlParams.code,
            error: urlParams.error,
            errorDescription: urlParams.error_description
          })
        )
        return htmlResponse(
          200,
          result.accounts.length === 1 ? "Account connected" : "Accounts connected",
          `${callbackSummary(result)} You can close this window.`
        )
      }).pipe(
        Effect.catchTags({
          ConnectStateError: (error) => Effect.succeed(htmlResponse(400, stateTitle[error.reason], error.message)),
          DomainError: (error) =>
            Effect.succeed(
              error.code === "service_unavailable" || error.code === "internal_error"
                ? htmlResponse(503, "The platform could not be reached", `${error.message} Try the link again.`)
                : htmlResponse(400, "The account could not be connected", error.message)
            )
        }),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.as(
              Effect.logError("OAuth callback failed", cause),
              htmlResponse(500, "Something went wrong", "The account could not be connected. Try again later.")
            )
        )
      ))
)
