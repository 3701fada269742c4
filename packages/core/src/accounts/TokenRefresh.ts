/**
 * Renewing platform tokens: the sweep that renews tokens before they expire, and the renewal after a
 * publish the platform refused as `auth`. A refused renewal marks the account as needing
 * reconnection, with `account.reconnect_needed`.
 */
import { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "./AccountStore.js"
import { accountData, credentialsOf, makeEvent } from "./ConnectedAccounts.js"
import { isOAuthPlatform, OAuthProviders } from "./OAuthProviders.js"
import { EventStore } from "../webhooks/EventStore.js"
import { OrganizationStore } from "../access/OrganizationStore.js"
import type { Platform } from "../domain/Platform.js"
import { type ConnectedIdentity, type Credentials, Platforms, type PublishError } from "../platforms/Platforms.js"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import { Transactor } from "../kernel/Transactor.js"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

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
export const refreshLoop = (
  options: { readonly every?: Duration.DurationInput; readonly window?: Duration.DurationInput } = {}
) =>
  refreshExpiring(options.window === undefined ? {} : { window: options.window }).pipe(
    Effect.tap((s) =>
      Effect.sync(() => {
        EngineMetrics.tokenRefreshSweeps.record({ result: "ok" }, 1)
        for (const result of ["refreshed", "dead", "deferred", "skipped"] as const) {
          EngineMetrics.tokenRefreshAccounts.record({ result }, s[result])
        }
      })
    ),
    Effect.tap((s) =>
      s.refreshed + s.dead > 0
        ? Effect.logInfo(`Token refresh: ${s.refreshed} renewed, ${s.dead} need reconnection, ${s.deferred} deferred`)
        : Effect.void
    ),
    Effect.catchAllCause((cause) =>
      Effect.zipRight(
        Effect.sync(() => EngineMetrics.tokenRefreshSweeps.record({ result: "failed" }, 1)),
        Effect.logWarning("Token refresh sweep failed", cause)
      )
    ),
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
      (found) =>
        Option.flatMap(found, (a) => Option.map(Option.fromNullable(parseCredentials(a)), (c) => [a, c] as const))
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
