/**
 * The connect bridge a CLI uses: start a session (an authorization URL whose signed state carries the
 * session's nonce), then poll it until the OAuth callback completes or cancels it, or it expires with
 * the link (600 s). The links are those of `ConnectLinks` (connect and reconnect), the same machinery.
 */
import type { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "./AccountStore.js"
import * as ConnectLinks from "./ConnectLinks.js"
import { ConnectSession, ConnectSessionId, ConnectSessionStore } from "./ConnectSessionStore.js"
import * as ConnectState from "./ConnectState.js"
import { Crypto } from "../kernel/Crypto.js"
import { DomainError } from "../kernel/Errors.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import type { OrganizationId } from "../kernel/Ids.js"
import type { OAuthPlatform } from "../domain/Platform.js"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** Seconds a CLI waits between two polls of a session. */
export const pollIntervalSeconds = 2

export interface Started {
  readonly session: ConnectSession
  readonly authorizeUrl: string
  readonly expiresInSeconds: number
  readonly instructions: string
}

/**
 * A session for a new connection, or (given `reconnect`) for repairing that account, which must be
 * an OAuth account of the same platform that needs reconnection (the rule of the reconnect route).
 */
export const start = (request: {
  readonly organizationId: OrganizationId
  readonly platform: OAuthPlatform
  readonly reconnect: Option.Option<SocialAccount>
}) =>
  Effect.gen(function*() {
    const nonce = yield* (yield* Crypto).randomHex(16)
    const reconnect = Option.getOrUndefined(request.reconnect)
    if (reconnect !== undefined && reconnect.platform !== request.platform) {
      return yield* DomainError.fail(
        "validation_error",
        `Account ${reconnect.id} is a ${reconnect.platform} account, not ${request.platform}`,
        { validation_errors: [{ path: "account_id", message: `account_id is not a ${request.platform} account` }] }
      )
    }
    const link = reconnect === undefined
      ? yield* ConnectLinks.createConnectLink({
        organizationId: request.organizationId,
        platform: request.platform,
        nonce
      })
      : yield* ConnectLinks.createReconnectLink({ organizationId: request.organizationId, account: reconnect, nonce })
    const now = yield* DateTime.now
    const session = new ConnectSession({
      id: ConnectSessionId.make(yield* (yield* IdGenerator).uuid),
      organizationId: request.organizationId,
      platform: request.platform,
      nonce,
      reconnectAccountId: Option.fromNullable(reconnect?.id),
      status: "pending",
      accountId: Option.none(),
      reason: Option.none(),
      expiresAt: DateTime.add(now, { seconds: ConnectState.lifetimeSeconds }),
      settledAt: Option.none(),
      createdAt: now
    })
    const store = yield* ConnectSessionStore
    // Sessions a day past their expiry are of no use to anyone: each start prunes them.
    yield* store.purgeExpired(DateTime.subtract(now, { days: 1 }))
    yield* store.insert(session)
    return {
      session,
      authorizeUrl: link.url,
      expiresInSeconds: link.expiresInSeconds,
      instructions: link.instructions
    } satisfies Started
  }).pipe(Effect.withSpan("ConnectSessions.start", { attributes: { platform: request.platform } }))

export type Polled =
  | { readonly status: "pending" | "expired"; readonly session: ConnectSession }
  | { readonly status: "cancelled"; readonly session: ConnectSession; readonly reason: string }
  | { readonly status: "completed"; readonly session: ConnectSession; readonly account: Option.Option<SocialAccount> }

/** The session's state; another organization's session (or an unknown id) is 404 `not_found`. */
export const poll = (organizationId: OrganizationId, id: ConnectSessionId) =>
  Effect.gen(function*() {
    const found = yield* (yield* ConnectSessionStore).findById(organizationId, id)
    if (Option.isNone(found)) return yield* DomainError.notFound("Connect session")
    const session = found.value
    switch (session.status) {
      case "completed": {
        const account = Option.isSome(session.accountId)
          ? yield* (yield* AccountStore).findById(organizationId, session.accountId.value)
          : Option.none()
        return { status: "completed", session, account } satisfies Polled
      }
      case "cancelled":
        return {
          status: "cancelled",
          session,
          reason: Option.getOrElse(session.reason, () => "The connection was cancelled")
        } satisfies Polled
      case "pending": {
        const now = yield* DateTime.now
        return { status: DateTime.lessThan(now, session.expiresAt) ? "pending" : "expired", session } satisfies Polled
      }
    }
  })
