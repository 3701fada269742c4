import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { ApiKey } from "./ApiKey.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { ApiKeyId, OrganizationId } from "../kernel/Ids.js"

export class ApiKeyStore extends Context.Tag("@herald/core/access/ApiKeyStore")<ApiKeyStore, {
  readonly insert: (key: ApiKey) => Effect.Effect<void, PersistenceError>
  /** Looks a key up by the SHA-256 of the presented token; the store never sees the token. */
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<ApiKey>, PersistenceError>
  readonly findById: (id: ApiKeyId) => Effect.Effect<Option.Option<ApiKey>, PersistenceError>
  readonly list: (
    organizationId: Option.Option<OrganizationId>
  ) => Effect.Effect<ReadonlyArray<ApiKey>, PersistenceError>
  /** Marks the key revoked; false when no such key, or it was revoked already. */
  readonly revoke: (id: ApiKeyId, at: DateTime.Utc) => Effect.Effect<boolean, PersistenceError>
  /** Records that the key authenticated a request at `at` (never moves the instant back). */
  readonly markUsed: (id: ApiKeyId, at: DateTime.Utc) => Effect.Effect<void, PersistenceError>
  /** When each key of the organization last authenticated a request; keys never used are absent. */
  readonly lastUsed: (
    organizationId: OrganizationId
  ) => Effect.Effect<ReadonlyMap<ApiKeyId, DateTime.Utc>, PersistenceError>
}>() {}
