/**
 * Connect sessions of the connect bridge (`/auth/social-connect/*`): one per authorization URL handed
 * to a CLI, so the CLI can poll for the outcome the browser sees at the OAuth callback. The session is
 * tied to the URL by the nonce of its signed state.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { PersistenceError } from "../kernel/Errors.js"
import { AccountId, OrganizationId } from "../kernel/Ids.js"
import { OAuthPlatform } from "../domain/Platform.js"

export const ConnectSessionId = Schema.UUID.pipe(Schema.brand("ConnectSessionId"))
export type ConnectSessionId = typeof ConnectSessionId.Type

/** As stored; `expired` is never stored, it is a pending session read past `expiresAt`. */
export const StoredSessionStatus = Schema.Literal("pending", "completed", "cancelled")
export type StoredSessionStatus = typeof StoredSessionStatus.Type

export class ConnectSession extends Schema.Class<ConnectSession>("ConnectSession")({
  id: ConnectSessionId,
  organizationId: OrganizationId,
  platform: OAuthPlatform,
  nonce: Schema.String,
  /** The account a reconnect session repairs. */
  reconnectAccountId: Schema.OptionFromNullOr(AccountId),
  status: StoredSessionStatus,
  /** The account connected (the first one, when a login grants several). */
  accountId: Schema.OptionFromNullOr(AccountId),
  /** Why a cancelled session ended (the platform's refusal, a declined consent). */
  reason: Schema.OptionFromNullOr(Schema.String),
  expiresAt: Schema.DateTimeUtc,
  settledAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc
}) {}

export type SessionOutcome =
  | { readonly status: "completed"; readonly accountId: AccountId }
  | { readonly status: "cancelled"; readonly reason: string }

export class ConnectSessionStore extends Context.Tag("@herald/core/accounts/ConnectSessionStore")<ConnectSessionStore, {
  readonly insert: (session: ConnectSession) => Effect.Effect<void, PersistenceError>
  /** The organization's session; another organization's is absent. */
  readonly findById: (
    organizationId: OrganizationId,
    id: ConnectSessionId
  ) => Effect.Effect<Option.Option<ConnectSession>, PersistenceError>
  /** Deletes sessions that expired before `before`, whatever their status; returns how many. */
  readonly purgeExpired: (before: DateTime.Utc) => Effect.Effect<number, PersistenceError>
  /** Settles the pending session of the state's nonce; false when none is pending (or there is none). */
  readonly settle: (
    nonce: string,
    outcome: SessionOutcome,
    at: DateTime.Utc
  ) => Effect.Effect<boolean, PersistenceError>
}>() {}
