import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { SocialAccount } from "./Account.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { AccountId, OrganizationId } from "../kernel/Ids.js"
import type { Platform } from "../platforms/Platform.js"

/** A new account: everything but the integer id, which the store assigns. */
export type NewAccount = Omit<SocialAccount, "id">

export class AccountStore extends Context.Tag("@herald/core/accounts/AccountStore")<AccountStore, {
  readonly insert: (account: NewAccount) => Effect.Effect<SocialAccount, PersistenceError>
  readonly update: (account: SocialAccount) => Effect.Effect<void, PersistenceError>
  readonly findById: (
    organizationId: OrganizationId,
    id: AccountId
  ) => Effect.Effect<Option.Option<SocialAccount>, PersistenceError>
  readonly findByPlatformAccountId: (
    organizationId: OrganizationId,
    platform: Platform,
    platformAccountId: string
  ) => Effect.Effect<Option.Option<SocialAccount>, PersistenceError>
  /** Every account of the organization, by id ascending. */
  readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<SocialAccount>, PersistenceError>
  readonly delete: (organizationId: OrganizationId, id: AccountId) => Effect.Effect<boolean, PersistenceError>
}>() {}
