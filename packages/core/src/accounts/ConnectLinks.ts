/**
 * OAuth connect and reconnect links: the platform's authorization URL with a signed state and, where
 * the platform takes it, a PKCE challenge derived from the state.
 */
import type { SocialAccount } from "../domain/Account.js"
import * as AccountHealth from "./AccountHealth.js"
import * as ConnectState from "./ConnectState.js"
import { callbackPath, ConnectSettings, isOAuthPlatform, OAuthProviders, redirectUri } from "./OAuthProviders.js"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import type { AccountId, OrganizationId } from "../kernel/Ids.js"
import type { OAuthPlatform } from "../domain/Platform.js"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

export interface ConnectLink {
  readonly platform: OAuthPlatform
  readonly url: string
  readonly expiresInSeconds: number
  readonly instructions: string
}

const linkInstructions = (platform: OAuthPlatform) =>
  platform === "facebook"
    ? "Open the url in a browser signed in to a Facebook profile with a role on the Pages to connect, select " +
      "those Pages and approve access within 10 minutes. Each Page becomes its own account; poll GET /accounts " +
      "until they appear."
    : `Open the url in a browser signed in to the ${platform} account and approve access within 10 minutes. ` +
      "Then poll GET /accounts until the account appears."

/** The authorization URL of the platform, with a signed state and, where taken, a PKCE challenge. */
export const createConnectLink = (request: {
  readonly organizationId: OrganizationId
  readonly platform: OAuthPlatform
  readonly reconnectAccountId?: AccountId
  /** The state's nonce; a connect session passes its own, so the callback can settle it. */
  readonly nonce?: string
}) =>
  Effect.gen(function*() {
    const settings = yield* ConnectSettings
    const provider = (yield* OAuthProviders).get(request.platform)
    if (Either.isLeft(provider)) return yield* DomainError.fail("misconfig", provider.left)
    if (Option.isNone(settings.publicUrl)) {
      return yield* DomainError.fail(
        "misconfig",
        "Set HERALD_PUBLIC_URL to this server's public origin (e.g. https://herald.example.com) so that the " +
          `platform can redirect back to ${callbackPath(request.platform)}`
      )
    }
    const nonce = request.nonce ?? (yield* (yield* Crypto).randomHex(16))
    const state = yield* ConnectState.sign(settings.stateSecret, {
      organizationId: request.organizationId,
      platform: request.platform,
      nonce,
      ...(request.reconnectAccountId === undefined ? {} : { reconnectAccountId: request.reconnectAccountId })
    }, yield* DateTime.now)
    const verifier = yield* ConnectState.pkceVerifier(settings.stateSecret, nonce)
    const url = provider.right.authorizeUrl({
      state,
      redirectUri: redirectUri(settings.publicUrl.value, request.platform),
      codeChallenge: yield* ConnectState.pkceChallenge(verifier)
    })
    return {
      platform: request.platform,
      url,
      expiresInSeconds: ConnectState.lifetimeSeconds,
      instructions: linkInstructions(request.platform)
    } satisfies ConnectLink
  }).pipe(Effect.withSpan("Connections.createConnectLink", { attributes: { platform: request.platform } }))

export interface ReconnectLink extends ConnectLink {
  readonly accountId: AccountId
  readonly accountName: string
}

/**
 * A link that repairs an OAuth account whose health shows `needs_reconnection` or `token_expired`.
 * A credential account, or one that needs no repair, is refused with 400 `validation_error`.
 */
export const createReconnectLink = (request: {
  readonly organizationId: OrganizationId
  readonly account: SocialAccount
  readonly nonce?: string
}) =>
  Effect.gen(function*() {
    const account = request.account
    if (!isOAuthPlatform(account.platform)) {
      return yield* DomainError.fail(
        "validation_error",
        `${account.platform} accounts reconnect by submitting their credentials again to POST /accounts/connect-credential`,
        { reason: "credential_platform" }
      )
    }
    const health = AccountHealth.assess(account, yield* DateTime.now)
    if (!health.reasons.includes("needs_reconnection") && !health.reasons.includes("token_expired")) {
      return yield* DomainError.fail(
        "validation_error",
        "This account does not need reconnection: its health shows neither needs_reconnection nor token_expired",
        { reason: "reconnection_not_needed", health_status: health.status }
      )
    }
    const link = yield* createConnectLink({
      organizationId: request.organizationId,
      platform: account.platform,
      reconnectAccountId: account.id,
      ...(request.nonce === undefined ? {} : { nonce: request.nonce })
    })
    return {
      ...link,
      accountId: account.id,
      accountName: account.accountName,
      instructions: account.platform === "facebook"
        ? `Open the url in a browser signed in to a Facebook profile with a role on the Page ${account.accountName}, ` +
          "keep that Page selected and approve access within 10 minutes. Every Page granted is updated in place " +
          "or, if not connected yet, connected as a new account."
        : `Open the url in a browser signed in to ${account.accountName} on ${account.platform} and approve ` +
          "access within 10 minutes. Authorizing a different profile connects it as a new account."
    } satisfies ReconnectLink
  })
