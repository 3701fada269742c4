/**
 * Device login requests (RFC 8628 in spirit) as stored. Neither code is kept: the device code and
 * the user code are stored as their SHA-256, so a copy of the store cannot complete anybody's login.
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { PersistenceError } from "../kernel/Errors.js"
import { ApiKeyId, OrganizationId } from "../kernel/Ids.js"

export const DeviceAuthorizationId = Schema.UUID.pipe(Schema.brand("DeviceAuthorizationId"))
export type DeviceAuthorizationId = typeof DeviceAuthorizationId.Type

/**
 * `pending` until an operator decides; `authorized` (with its organization) until the device collects
 * its key, then `consumed`; or `denied`. Expiry is not stored: it is `expiresAt` against the clock.
 */
export const DeviceAuthorizationStatus = Schema.Literal("pending", "authorized", "denied", "consumed")
export type DeviceAuthorizationStatus = typeof DeviceAuthorizationStatus.Type

export class DeviceAuthorization extends Schema.Class<DeviceAuthorization>("DeviceAuthorization")({
  id: DeviceAuthorizationId,
  deviceCodeHash: Schema.String,
  userCodeHash: Schema.String,
  clientName: Schema.OptionFromNullOr(Schema.String),
  status: DeviceAuthorizationStatus,
  organizationId: Schema.OptionFromNullOr(OrganizationId),
  apiKeyId: Schema.OptionFromNullOr(ApiKeyId),
  intervalSeconds: Schema.Int,
  lastPolledAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  expiresAt: Schema.DateTimeUtc,
  decidedAt: Schema.OptionFromNullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc
}) {}

export class DeviceAuthorizationStore extends Context.Tag("@herald/core/access/DeviceAuthorizationStore")<
  DeviceAuthorizationStore,
  {
    readonly insert: (authorization: DeviceAuthorization) => Effect.Effect<void, PersistenceError>
    readonly findByDeviceCodeHash: (hash: string) => Effect.Effect<Option.Option<DeviceAuthorization>, PersistenceError>
    readonly findByUserCodeHash: (hash: string) => Effect.Effect<Option.Option<DeviceAuthorization>, PersistenceError>
    /** Remembers when the device last polled (for `slow_down`). */
    readonly recordPoll: (id: DeviceAuthorizationId, at: DateTime.Utc) => Effect.Effect<void, PersistenceError>
    /**
     * Approves (for an organization) or denies a request that is still pending and not expired at `at`;
     * false when it is not (already decided, consumed or expired).
     */
    readonly decide: (
      id: DeviceAuthorizationId,
      decision: { readonly status: "authorized"; readonly organizationId: OrganizationId } | {
        readonly status: "denied"
      },
      at: DateTime.Utc
    ) => Effect.Effect<boolean, PersistenceError>
    /**
     * Marks an authorized request consumed by the key minted for it; false when it was not authorized
     * (another poll consumed it first): the key is handed out once.
     */
    /** Deletes requests that expired before `before`, whatever their status; returns how many. */
    readonly purgeExpired: (before: DateTime.Utc) => Effect.Effect<number, PersistenceError>
    readonly consume: (
      id: DeviceAuthorizationId,
      apiKeyId: ApiKeyId,
      at: DateTime.Utc
    ) => Effect.Effect<boolean, PersistenceError>
  }
>() {}
