/**
 * The OAuth callback: the signed state verified, the code exchanged for the identities it grants,
 * each saved as an account, and the connect session of the state (if any) settled.
 */
import { refusal, type Saved, saveIdentities } from "./ConnectedAccounts.js"
import { ConnectSessionStore, type SessionOutcome } from "./ConnectSessionStore.js"
import * as ConnectState from "./ConnectState.js"
import { ConnectSettings, OAuthProviders, redirectUri } from "./OAuthProviders.js"
import { DomainError } from "../kernel/Errors.js"
import type { AccountId } from "../kernel/Ids.js"
import type { OAuthPlatform } from "../domain/Platform.js"
import type * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

export interface CallbackRequest {
  readonly platform: OAuthPlatform
  readonly state: string | undefined
  readonly code: string | undefined
  /** The platform's `error` parameter, when the user declined or the platform refused. */
  readonly error: string | undefined
  readonly errorDescription: string | undefined
}

export interface CallbackResult {
  /** One per identity the authorization granted, in the platform's order (several Facebook Pages). */
  readonly accounts: Arr.NonEmptyReadonlyArray<Saved>
  /** The account a reconnect link was for; it is repaired only if among `accounts`. */
  readonly reconnectAccountId: Option.Option<AccountId>
}

/**
 * Verifies the state (signature, then expiry, then that it names this platform), exchanges the code
 * with the PKCE verifier derived from the state, and saves the identities it grants. A reconnect link
 * is no different at this point: what comes back is matched by platform account id, so the account it
 * was for is repaired when the person authorizes it again, and anything else granted is connected too.
 */
export const completeCallback = (request: CallbackRequest) =>
  Effect.gen(function*() {
    const settings = yield* ConnectSettings
    if (request.state === undefined || request.state === "") {
      return yield* new ConnectState.ConnectStateError({ reason: "malformed" })
    }
    const state = yield* ConnectState.verify(settings.stateSecret, request.state, yield* DateTime.now)
    if (state.platform !== request.platform) return yield* new ConnectState.ConnectStateError({ reason: "tampered" })
    return yield* exchange(request, state).pipe(
      Effect.tap((result) => settleSession(state.nonce, { status: "completed", accountId: sessionAccount(result) })),
      // A refusal ends the CLI's session; a platform that could not be reached leaves it pending
      // (the link can be opened again while it is valid).
      Effect.tapError((error) =>
        error._tag === "DomainError" && error.code !== "service_unavailable" && error.code !== "internal_error"
          ? settleSession(state.nonce, { status: "cancelled", reason: error.message })
          : Effect.void
      )
    )
  }).pipe(Effect.withSpan("Connections.completeCallback", { attributes: { platform: request.platform } }))

/** The account a connect session reports: the one a reconnect link was for when granted, else the first. */
const sessionAccount = (result: CallbackResult): AccountId => {
  const wanted = Option.getOrUndefined(result.reconnectAccountId)
  return result.accounts.find(({ account }) => account.id === wanted)?.account.id ?? result.accounts[0].account.id
}

/** Settles the connect-bridge session of this state, when there is one (and a session store). */
const settleSession = (nonce: string, outcome: SessionOutcome) =>
  Effect.gen(function*() {
    const sessions = yield* Effect.serviceOption(ConnectSessionStore)
    if (Option.isNone(sessions)) return
    yield* sessions.value.settle(nonce, outcome, yield* DateTime.now)
  })

const exchange = (request: CallbackRequest, state: ConnectState.ConnectState) =>
  Effect.gen(function*() {
    const settings = yield* ConnectSettings
    if (request.error !== undefined && request.error !== "") {
      const reason = request.errorDescription === undefined || request.errorDescription === ""
        ? request.error
        : `${request.error}: ${request.errorDescription}`
      return yield* DomainError.fail(
        "auth_failed",
        `${request.platform} did not grant access (${reason})`,
        undefined,
        400
      )
    }
    if (request.code === undefined || request.code === "") {
      return yield* DomainError.fail("validation_error", `${request.platform} returned no authorization code`)
    }
    const provider = (yield* OAuthProviders).get(request.platform)
    if (Either.isLeft(provider)) return yield* DomainError.fail("misconfig", provider.left)
    if (Option.isNone(settings.publicUrl)) {
      return yield* DomainError.fail("misconfig", "Set HERALD_PUBLIC_URL to this server's public origin")
    }
    const identities = yield* provider.right.exchangeCode({
      code: request.code,
      redirectUri: redirectUri(settings.publicUrl.value, request.platform),
      codeVerifier: yield* ConnectState.pkceVerifier(settings.stateSecret, state.nonce)
    }).pipe(Effect.mapError(refusal))
    const accounts = yield* saveIdentities(state.organizationId, request.platform, identities, "direct")
    return { accounts, reconnectAccountId: Option.fromNullable(state.reconnectAccountId) } satisfies CallbackResult
  })
