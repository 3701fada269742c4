/**
 * Connecting social accounts: credential platforms validated live, OAuth connect and reconnect
 * links with a signed state, the OAuth callback, disconnecting, and the sweep that renews tokens
 * before they expire. Every account write and its `account.*` event share one transaction.
 */
import { SocialAccount } from "./Account.js"
import * as AccountHealth from "./AccountHealth.js"
import { AccountStore } from "./AccountStore.js"
import { ConnectSessionStore, type SessionOutcome } from "./ConnectSessionStore.js"
import * as ConnectState from "./ConnectState.js"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { type AccountId, EventId, type OrganizationId } from "../kernel/Ids.js"
import * as Organization from "../access/Organization.js"
import { OrganizationStore } from "../access/OrganizationStore.js"
import type { CredentialPlatform, OAuthPlatform, Platform } from "../platforms/Platform.js"
import { oauthPlatforms } from "../platforms/Platform.js"
import { type ConnectedIdentity, type Credentials, type PublishError, Platforms } from "../platforms/Platforms.js"
import { Transactor } from "../kernel/Transactor.js"
import type * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

// ports

export interface AuthorizeRequest {
  readonly state: string
  readonly redirectUri: string
  /** S256 challenge of the state's verifier; providers whose platform takes no PKCE ignore it. */
  readonly codeChallenge: string
}

export interface CodeExchange {
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier: string
}

/** One platform's OAuth 2.0 authorization-code flow. */
export interface OAuthProvider {
  readonly platform: OAuthPlatform
  readonly authorizeUrl: (request: AuthorizeRequest) => string
  /**
   * Exchanges the code for tokens and fetches the identities they grant, each one social account: one
   * on most platforms, every granted Page on Facebook (one login can grant several). A grant with no
   * usable identity fails instead.
   */
  readonly exchangeCode: (
    request: CodeExchange
  ) => Effect.Effect<Arr.NonEmptyReadonlyArray<ConnectedIdentity>, PublishError>
  /**
   * Renews the stored tokens, where the platform allows it; the result replaces them whole. The sweep
   * calls it for credentials holding a `refresh_token`, or a `refresh_at` (a token that renews itself,
   * as Meta's long-lived tokens do).
   */
  readonly refresh?: (credentials: Credentials) => Effect.Effect<ConnectedIdentity, PublishError>
}

export class OAuthProviders extends Context.Tag("@herald/core/OAuthProviders")<OAuthProviders, {
  /** The provider, or (Left) what the operator has to configure to enable the platform. */
  readonly get: (platform: OAuthPlatform) => Either.Either<OAuthProvider, string>
}>() {}

export class ConnectSettings extends Context.Tag("@herald/core/ConnectSettings")<ConnectSettings, {
  /** This server's public origin; OAuth redirects go to `{publicUrl}/oauth/callback/{platform}`. */
  readonly publicUrl: Option.Option<string>
  /** Signs connect states and derives PKCE verifiers. */
  readonly stateSecret: Redacted.Redacted<string>
}>() {}

export const callbackPath = (platform: OAuthPlatform): string => `/oauth/callback/${platform}`

export const redirectUri = (publicUrl: string, platform: OAuthPlatform): string =>
  publicUrl.replace(/\/+$/, "") + callbackPath(platform)

// shared

const makeEvent = (organizationId: OrganizationId, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).uuid
    return new Event({ id: EventId.make(id), organizationId, type, data, createdAt: yield* DateTime.now })
  })

const accountData = (account: SocialAccount): EventData => ({
  account_id: account.id,
  platform: account.platform,
  account_name: account.accountName
})

const credentialsOf = (identity: ConnectedIdentity) => Option.some(Redacted.make(JSON.stringify(identity.credentials)))

export interface Saved {
  readonly account: SocialAccount
  /** False when an account with the same platform account id was updated in place. */
  readonly created: boolean
}

/**
 * Creates the account, or updates it in place when the organization already has this platform
 * account (matched by the platform's own id): new credentials, name, avatar and expiry, active, no
 * longer needing reconnection. `account.connected` fires in both cases (`reconnected` tells them
 * apart). A new account counts against the plan's social-account allowance.
 */
export const saveIdentity = (
  organizationId: OrganizationId,
  platform: Platform,
  identity: ConnectedIdentity,
  connectionFlow: SocialAccount["connectionFlow"]
) =>
  Effect.gen(function*() {
    const store = yield* AccountStore
    const events = yield* EventStore
    const now = yield* DateTime.now
    const existing = yield* store.findByPlatformAccountId(organizationId, platform, identity.platformAccountId)
    if (Option.isSome(existing)) {
      const account = new SocialAccount({
        ...existing.value,
        accountName: identity.accountName,
        avatarUrl: identity.avatarUrl,
        isActive: true,
        needsReconnection: false,
        tokenExpiresAt: identity.tokenExpiresAt,
        credentials: credentialsOf(identity),
        updatedAt: now
      })
      yield* store.update(account)
      yield* events.append([
        yield* makeEvent(organizationId, "account.connected", { ...accountData(account), reconnected: true })
      ])
      return { account, created: false } satisfies Saved
    }
    const org = yield* (yield* OrganizationStore).findById(organizationId)
    if (Option.isSome(org)) {
      const allowance = Organization.planAllowances[org.value.plan].socialAccounts
      const count = (yield* store.list(organizationId)).length
      if (count >= allowance) {
        return yield* DomainError.fail(
          "limit_reached",
          `The ${org.value.plan} plan allows ${allowance} social accounts; disconnect one or upgrade the plan`,
          { limit: allowance, plan: org.value.plan }
        )
      }
    }
    const account = yield* store.insert({
      organizationId,
      platform,
      platformAccountId: identity.platformAccountId,
      accountName: identity.accountName,
      avatarUrl: identity.avatarUrl,
      isActive: true,
      connectionFlow,
      needsReconnection: false,
      tokenExpiresAt: identity.tokenExpiresAt,
      lastSuccessAt: Option.none(),
      recentFailures: 0,
      credentials: credentialsOf(identity),
      createdAt: now,
      updatedAt: now
    })
    yield* events.append([
      yield* makeEvent(organizationId, "account.connected", { ...accountData(account), reconnected: false })
    ])
    return { account, created: true } satisfies Saved
  }).pipe(
    (self) => Effect.flatMap(Transactor, (tx) => tx.withTransaction(self)),
    Effect.withSpan("Connections.saveIdentity")
  )

/**
 * What the platform said when it refused: invalid credentials (or a code) are 400 `auth_failed`
 * with the platform's reason (spec rule 2 of the accounts endpoints); a platform that is down or
 * limiting us is 500 `service_unavailable`, worth retrying.
 */
export const refusal = (error: PublishError): DomainError =>
  error.kind === "transient" || error.kind === "rate_limit"
    ? DomainError.of("service_unavailable", `The platform could not be reached: ${error.message}`)
    : DomainError.of("auth_failed", error.message, undefined, 400)

// credential platforms

const requiredFields: Record<CredentialPlatform, ReadonlyArray<string>> = {
  telegram: ["bot_token", "channel"],
  discord: ["webhook_url"],
  bluesky: ["handle", "app_password"]
}

export const credentialInstructions: Record<CredentialPlatform, string> = {
  telegram: "The bot posts to the channel; keep it an administrator with the right to post messages. " +
    "To change the bot or channel, submit the credentials again.",
  discord: "Posts go to the webhook's channel. If the webhook is deleted or its token reset, submit the new URL again.",
  bluesky: "Herald signs in with the app password and keeps the session fresh. If you revoke the app password, " +
    "submit a new one to reconnect."
}

export interface CredentialConnect {
  readonly organizationId: OrganizationId
  readonly platform: CredentialPlatform
  /** The credential fields as sent; a number (a Telegram numeric chat id) is given to the client as its decimal text. */
  readonly input: Readonly<Record<string, string | number | undefined>>
}

/** Validates the credentials live through the platform client, then saves the account. */
export const connectWithCredentials = (request: CredentialConnect) =>
  Effect.gen(function*() {
    const missing = requiredFields[request.platform].filter((field) => String(request.input[field] ?? "").trim() === "")
    if (missing.length > 0) {
      return yield* DomainError.fail(
        "validation_error",
        `${request.platform} needs ${requiredFields[request.platform].join(" and ")}`,
        { validation_errors: missing.map((path) => ({ path, message: `${path} is required for ${request.platform}` })) }
      )
    }
    const client = (yield* Platforms).get(request.platform)
    if (Option.isNone(client) || client.value.connectWithCredentials === undefined) {
      return yield* DomainError.fail("misconfig", `Connecting ${request.platform} is not available on this server`)
    }
    const input: Record<string, string> = {}
    for (const [key, value] of Object.entries(request.input)) if (value !== undefined) input[key] = String(value)
    const identity = yield* client.value.connectWithCredentials(input).pipe(Effect.mapError(refusal))
    return yield* saveIdentity(request.organizationId, request.platform, identity, "credential")
  }).pipe(Effect.withSpan("Connections.connectWithCredentials", { attributes: { platform: request.platform } }))

// OAuth links

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

const isOAuthPlatform = (platform: Platform): platform is OAuthPlatform =>
  (oauthPlatforms as ReadonlyArray<string>).includes(platform)

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

// the OAuth callback

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
 * Saves every identity of one authorization in one transaction: each is created, or updated in place
 * by its platform account id, with its own `account.connected`. All or none: at the plan's allowance
 * the whole grant is refused.
 */
export const saveIdentities = (
  organizationId: OrganizationId,
  platform: Platform,
  identities: Arr.NonEmptyReadonlyArray<ConnectedIdentity>,
  connectionFlow: SocialAccount["connectionFlow"]
) =>
  Effect.gen(function*() {
    const [first, ...rest] = identities
    const head = yield* saveIdentity(organizationId, platform, first, connectionFlow)
    const tail = yield* Effect.forEach(rest, (identity) => saveIdentity(organizationId, platform, identity, connectionFlow))
    return [head, ...tail] as Arr.NonEmptyReadonlyArray<Saved>
  }).pipe((self) => Effect.flatMap(Transactor, (tx) => tx.withTransaction(self)))

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
      return yield* DomainError.fail("auth_failed", `${request.platform} did not grant access (${reason})`, undefined, 400)
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

// disconnect

/**
 * Removes the account and its stored credentials, with `account.disconnected`. Destinations still
 * queued for it are not sent: the dispatcher fails each when it comes due, without calling the
 * platform, with "The account is disconnected or inactive; reconnect it and retry" (and post.failed).
 */
export const disconnect = (organizationId: OrganizationId, accountId: AccountId) =>
  Effect.gen(function*() {
    const store = yield* AccountStore
    const found = yield* store.findById(organizationId, accountId)
    if (Option.isNone(found)) return yield* DomainError.notFound("Account")
    const deleted = yield* store.delete(organizationId, accountId)
    if (!deleted) return yield* DomainError.notFound("Account")
    yield* (yield* EventStore).append([
      yield* makeEvent(organizationId, "account.disconnected", accountData(found.value))
    ])
    return found.value
  }).pipe(
    (self) => Effect.flatMap(Transactor, (tx) => tx.withTransaction(self)),
    Effect.withSpan("Connections.disconnect")
  )

// token refresh

/** Tokens expiring within this window are renewed by the sweep. */
export const refreshWindow = Duration.minutes(30)

export interface RefreshSummary {
  readonly refreshed: number
  /** Refresh refused by the platform: the account now needs reconnection. */
  readonly dead: number
  /** The platform could not be reached; tried again on the next sweep. */
  readonly deferred: number
  /** Nothing to refresh with (no refresh token stored). */
  readonly skipped: number
}

type Refresher = (credentials: Credentials) => Effect.Effect<ConnectedIdentity, PublishError>

const refresherFor = (
  platform: Platform,
  providers: Option.Option<OAuthProviders["Type"]>,
  platforms: Option.Option<Platforms["Type"]>
): Refresher | undefined => {
  if (isOAuthPlatform(platform) && Option.isSome(providers)) {
    const provider = providers.value.get(platform)
    if (Either.isRight(provider) && provider.right.refresh !== undefined) return provider.right.refresh
  }
  if (Option.isSome(platforms)) {
    const client = platforms.value.get(platform)
    if (Option.isSome(client) && client.value.refresh !== undefined) return client.value.refresh
  }
  return undefined
}

const sameCredentials = (a: SocialAccount, b: SocialAccount): boolean =>
  Option.getEquivalence<Redacted.Redacted<string>>((x, y) => Redacted.value(x) === Redacted.value(y))(
    a.credentials,
    b.credentials
  )

/**
 * Renews one account's tokens and writes the result in one update (X hands out a new refresh token
 * with every refresh and retires the old one, so the pair is saved together). Everything is re-read
 * inside the transaction: when another process renewed the account meanwhile, its result stands.
 */
const refreshOne = (account: SocialAccount, stored: Readonly<Record<string, string>>, refresher: Refresher) =>
  Effect.gen(function*() {
    // An OAuth grant without a refresh token (LinkedIn outside its partner program) cannot be renewed,
    // unless its access token renews itself (`refresh_at`: Meta's long-lived Instagram and Threads tokens).
    if (
      isOAuthPlatform(account.platform) && (stored["refresh_token"] ?? "") === "" && (stored["refresh_at"] ?? "") === ""
    ) return "skipped" as const
    const outcome = yield* Effect.either(refresher(Redacted.make(stored)))
    const transient = Either.isLeft(outcome) &&
      (outcome.left.kind === "transient" || outcome.left.kind === "rate_limit")
    if (transient) {
      yield* Effect.logWarning(`Token refresh deferred for ${account.platform} account ${account.id}`)
      return "deferred" as const
    }
    return yield* Effect.gen(function*() {
      const store = yield* AccountStore
      const current = yield* store.findById(account.organizationId, account.id)
      if (Option.isNone(current) || !sameCredentials(current.value, account)) return "deferred" as const
      const now = yield* DateTime.now
      if (Either.isRight(outcome)) {
        yield* store.update(
          new SocialAccount({
            ...current.value,
            credentials: credentialsOf(outcome.right),
            tokenExpiresAt: outcome.right.tokenExpiresAt,
            // A token that just renewed is alive, whatever a racing sweep concluded.
            needsReconnection: false,
            updatedAt: now
          })
        )
        return "refreshed" as const
      }
      if (!current.value.needsReconnection) {
        yield* store.update(new SocialAccount({ ...current.value, needsReconnection: true, updatedAt: now }))
        yield* (yield* EventStore).append([
          yield* makeEvent(account.organizationId, "account.reconnect_needed", {
            ...accountData(current.value),
            reason: `Token refresh refused: ${outcome.left.message}`
          })
        ])
      }
      return "dead" as const
    }).pipe((self) => Effect.flatMap(Transactor, (tx) => tx.withTransaction(self)))
  })

const parseCredentials = (account: SocialAccount): Readonly<Record<string, string>> | undefined => {
  const credentials = Option.getOrUndefined(account.credentials)
  if (credentials === undefined) return undefined
  const parsed = Either.try(() => JSON.parse(Redacted.value(credentials)) as unknown)
  return Either.isRight(parsed) && typeof parsed.right === "object" && parsed.right !== null
    ? parsed.right as Record<string, string>
    : undefined
}

/**
 * When the account's token wants renewing: the time an adapter asked for (`refresh_at`, epoch ms: Meta's
 * long-lived tokens renew days before they expire), else the access token's expiry that OAuth adapters
 * keep in the credentials (`expires_at`, epoch ms), else the account's `tokenExpiresAt`.
 */
const dueAt = (account: SocialAccount, stored: Readonly<Record<string, string>>): DateTime.Utc | undefined => {
  const renewAt = Number(stored["refresh_at"])
  if (stored["refresh_at"] !== undefined && stored["refresh_at"] !== "" && Number.isFinite(renewAt)) {
    return DateTime.unsafeMake(renewAt)
  }
  const millis = Number(stored["expires_at"])
  if (stored["expires_at"] !== undefined && Number.isFinite(millis)) return DateTime.unsafeMake(millis)
  return Option.getOrUndefined(account.tokenExpiresAt)
}

/**
 * The refresh sweep: every active account whose token (see `dueAt`) expires within `window` (default 30 min), on a
 * platform whose client or OAuth provider can refresh, is renewed. A refused refresh marks the account
 * as needing reconnection and emits `account.reconnect_needed`; an unreachable platform is tried again
 * next time. Providers and platforms are optional services: what is not configured is skipped.
 */
export const refreshExpiring = (options: { readonly window?: Duration.DurationInput } = {}) =>
  Effect.gen(function*() {
    const providers = yield* Effect.serviceOption(OAuthProviders)
    const platforms = yield* Effect.serviceOption(Platforms)
    const now = yield* DateTime.now
    const horizon = DateTime.addDuration(now, options.window ?? refreshWindow)
    const organizations = yield* (yield* OrganizationStore).list
    const store = yield* AccountStore
    const summary = { refreshed: 0, dead: 0, deferred: 0, skipped: 0 }
    for (const org of organizations) {
      for (const account of yield* store.list(org.id)) {
        if (!account.isActive || account.needsReconnection) continue
        const stored = parseCredentials(account)
        if (stored === undefined) continue
        const due = dueAt(account, stored)
        if (due === undefined || DateTime.greaterThan(due, horizon)) continue
        const refresher = refresherFor(account.platform, providers, platforms)
        if (refresher === undefined) continue
        summary[yield* refreshOne(account, stored, refresher)] += 1
      }
    }
    return summary satisfies RefreshSummary
  }).pipe(Effect.withSpan("Connections.refreshExpiring"))

/** The sweep every `every` (default 5 minutes), for as long as it runs; a failed sweep is logged. */
export const refreshLoop = (options: { readonly every?: Duration.DurationInput; readonly window?: Duration.DurationInput } = {}) =>
  refreshExpiring(options.window === undefined ? {} : { window: options.window }).pipe(
    Effect.tap((s) =>
      s.refreshed + s.dead > 0
        ? Effect.logInfo(`Token refresh: ${s.refreshed} renewed, ${s.dead} need reconnection, ${s.deferred} deferred`)
        : Effect.void
    ),
    Effect.catchAllCause((cause) => Effect.logWarning("Token refresh sweep failed", cause)),
    Effect.zipRight(Effect.sleep(options.every ?? Duration.minutes(5))),
    Effect.forever
  )

/**
 * After a publish was refused as `auth`: the credentials to retry with, once. When the stored
 * credentials already differ from the ones the publish used (the refresh sweep or another process
 * renewed them meanwhile), those; else the token is renewed here the way the sweep does it
 * (`refreshOne`: the new pair written at once in one transaction, before any retry, so a rotated refresh
 * token is never held only in memory; a refused refresh marks the account for reconnection). None when
 * there is nothing better to retry with.
 */
export const renewAfterAuthFailure = (account: SocialAccount, used: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const providers = yield* Effect.serviceOption(OAuthProviders)
    const store = yield* AccountStore
    const read = Effect.map(
      store.findById(account.organizationId, account.id),
      (found) => Option.flatMap(found, (a) => Option.map(Option.fromNullable(parseCredentials(a)), (c) => [a, c] as const))
    )
    const newer = (stored: Readonly<Record<string, string>>) =>
      (stored["access_token"] ?? "") !== "" && stored["access_token"] !== used["access_token"]
    const before = yield* read
    if (Option.isNone(before)) return Option.none<Readonly<Record<string, string>>>()
    const [current, stored] = before.value
    if (newer(stored)) return Option.some(stored)
    const refresher = refresherFor(account.platform, providers, Option.none())
    if (refresher === undefined || current.needsReconnection) return Option.none<Readonly<Record<string, string>>>()
    yield* refreshOne(current, stored, refresher)
    // Renewed here, or by a racing sweep whose write won: either way the store holds what to use.
    return Option.filter(Option.map(yield* read, ([, c]) => c), newer)
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(Effect.logWarning("Token renewal after a refused publish failed", error), Option.none())
    )
  )
