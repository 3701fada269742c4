/**
 * Social accounts for conformance tests, written straight into the server's store (accounts are
 * connected through platform flows, which these tests do not exercise).
 */
import type { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore, type NewAccount } from "@herald/core/accounts/AccountStore"
import { OrganizationId } from "@herald/core/kernel/Ids"
import type { Platform } from "@herald/core/domain/Platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export interface AccountSpec {
  readonly platform: Platform
  readonly name: string
  readonly platformAccountId?: string
  readonly connectionFlow?: NewAccount["connectionFlow"]
  readonly isActive?: boolean
  readonly needsReconnection?: boolean
  /** Milliseconds from now; negative for an expired token. */
  readonly tokenExpiresIn?: number
  readonly lastSuccessAt?: string
  readonly recentFailures?: number
}

export const insertAccounts = (organizationId: string, specs: ReadonlyArray<AccountSpec>) =>
  Effect.gen(function*() {
    const store = yield* AccountStore
    const now = yield* DateTime.now
    const inserted: Array<SocialAccount> = []
    for (const spec of specs) {
      inserted.push(
        yield* store.insert({
          organizationId: OrganizationId.make(organizationId),
          platform: spec.platform,
          platformAccountId: spec.platformAccountId ?? `${spec.platform}-${spec.name}`,
          accountName: spec.name,
          avatarUrl: `https://example.test/avatars/${spec.name}.png`,
          isActive: spec.isActive ?? true,
          connectionFlow: spec.connectionFlow ?? "direct",
          needsReconnection: spec.needsReconnection ?? false,
          tokenExpiresAt: spec.tokenExpiresIn === undefined
            ? Option.none()
            : Option.some(DateTime.unsafeMake(DateTime.toEpochMillis(now) + spec.tokenExpiresIn)),
          lastSuccessAt: spec.lastSuccessAt === undefined
            ? Option.none()
            : Option.some(DateTime.unsafeMake(spec.lastSuccessAt)),
          recentFailures: spec.recentFailures ?? 0,
          credentials: Option.none(),
          createdAt: now,
          updatedAt: now
        })
      )
    }
    return inserted
  })
