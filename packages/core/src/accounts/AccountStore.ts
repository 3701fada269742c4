import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { SocialAccount } from "../domain/Account.js"
import type { PersistenceError } from "../kernel/Errors.js"
import type { AccountId, OrganizationId } from "../kernel/Ids.js"
import type { Platform } from "../domain/Platform.js"

/**
 * An organization's account list for a write that re-validates the accounts it used itself
 * (`PostStore.insertChecked`). `fresh`: read from the database by this call, as `list` reads
 * it; otherwise it may be served from memory and be stale (another process's disconnect unseen): it
 * may then decide only a success, checked again by the write, never an error.
 */
export interface AccountList {
  readonly accounts: ReadonlyArray<SocialAccount>
  readonly fresh: boolean
}

/**
 * How old a healthy account's last success may be before a publish writes it again: at high volume a
 * write per publish would cost more than the publish, so `lastSuccessAt` is precise to this much.
 */
export const successPrecisionMillis = 60_000

/** A new account: everything but the integer id, which the store assigns. */
export type NewAccount = Omit<SocialAccount, "id">

export class AccountStore extends Context.Tag("@herald/core/accounts/AccountStore")<AccountStore, {
  readonly insert: (account: NewAccount) => Effect.Effect<SocialAccount, PersistenceError>
  readonly update: (account: SocialAccount) => Effect.Effect<void, PersistenceError>
  /**
   * A publish's success on the account: last success `now`, recent failures cleared, unless the row
   * already says as much (healthy, last success under a minute before `now`), or, on Postgres, another
   * transaction holds the row. That writer's change stands: waiting for it would queue every recording
   * transaction of a burst on the one account behind each other's commits. The account as written, or
   * none when nothing was written.
   */
  readonly recordSuccess: (
    organizationId: OrganizationId,
    id: AccountId,
    now: DateTime.Utc
  ) => Effect.Effect<Option.Option<SocialAccount>, PersistenceError>
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
  /**
   * `list` for a write that re-validates what it used (see `AccountList`): the store may serve it from
   * memory (Postgres, where `list` reads every time), emptied by this store's own writes.
   */
  readonly listForWrite: (organizationId: OrganizationId) => Effect.Effect<AccountList, PersistenceError>
  /** Drops what `listForWrite` keeps in memory: a write's re-validation found it stale. */
  readonly forgetListsForWrite: Effect.Effect<void>
}>() {}
