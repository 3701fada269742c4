/**
 * The social accounts connecting writes: an identity a platform vouched for, saved as an account
 * (created, or updated in place by its platform account id), and an account disconnected, each with
 * its `account.*` event in one transaction; and a platform's refusal as the API's error.
 */
import { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "./AccountStore.js"
import { DomainError } from "../kernel/Errors.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { type AccountId, EventId, type OrganizationId } from "../kernel/Ids.js"
import * as Organization from "../access/Organization.js"
import { OrganizationStore } from "../access/OrganizationStore.js"
import type { Platform } from "../domain/Platform.js"
import type { ConnectedIdentity, PublishError } from "../platforms/Platforms.js"
import { Transactor } from "../kernel/Transactor.js"
import type * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

export const makeEvent = (organizationId: OrganizationId, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const id = yield* (yield* IdGenerator).uuid
    return new Event({ id: EventId.make(id), organizationId, type, data, createdAt: yield* DateTime.now })
  })

export const accountData = (account: SocialAccount): EventData => ({
  account_id: account.id,
  platform: account.platform,
  account_name: account.accountName
})

export const credentialsOf = (identity: ConnectedIdentity) =>
  Option.some(Redacted.make(JSON.stringify(identity.credentials)))

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
    const tail = yield* Effect.forEach(rest, (identity) =>
      saveIdentity(organizationId, platform, identity, connectionFlow))
    return [head, ...tail] as Arr.NonEmptyReadonlyArray<Saved>
  }).pipe((self) =>
    Effect.flatMap(Transactor, (tx) => tx.withTransaction(self))
  )

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
