/**
 * The sandbox organization's bootstrap accounts (one per platform) and the smallest plan that fits
 * them, so a first connect in a demo is not refused by the plan.
 */
import type { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as Organization from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { Event } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { EventId, type OrganizationId } from "@herald/core/kernel/Ids"
import { credentialPlatforms, type Platform, platforms } from "@herald/core/domain/Platform"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

export const avatarUrl = (platform: Platform): string => `https://sandbox.herald.invalid/avatars/${platform}.png`

/** The platform account id of the bootstrap sandbox account of `platform`. */
export const bootstrapAccountId = (platform: Platform): string => `sandbox-${platform}`

/**
 * Connects one sandbox account per platform, named `Sandbox <platform>`, to the organization, with its
 * `account.connected` event. Accounts already there are left alone, so running it on every start is safe.
 */
export const bootstrapAccounts = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const accounts = yield* AccountStore
    const events = yield* EventStore
    const transactor = yield* Transactor
    const ids = yield* IdGenerator
    const created: Array<SocialAccount> = []
    for (const platform of platforms) {
      const existing = yield* accounts.findByPlatformAccountId(organizationId, platform, bootstrapAccountId(platform))
      if (Option.isSome(existing)) continue
      const now = yield* DateTime.now
      const account = yield* transactor.withTransaction(Effect.gen(function*() {
        const account = yield* accounts.insert({
          organizationId,
          platform,
          platformAccountId: bootstrapAccountId(platform),
          accountName: `Sandbox ${platform}`,
          avatarUrl: avatarUrl(platform),
          isActive: true,
          connectionFlow: (credentialPlatforms as ReadonlyArray<Platform>).includes(platform) ? "credential" : "direct",
          needsReconnection: false,
          tokenExpiresAt: Option.none(),
          lastSuccessAt: Option.none(),
          recentFailures: 0,
          credentials: Option.some(Redacted.make(JSON.stringify({ sandbox: "true" }))),
          createdAt: now,
          updatedAt: now
        })
        yield* events.append([
          new Event({
            id: EventId.make(yield* ids.uuid),
            organizationId,
            type: "account.connected",
            data: { account_id: account.id, platform, account_name: account.accountName },
            createdAt: now
          })
        ])
        return account
      }))
      created.push(account)
    }
    return created
  })

/** The plans from the smallest allowance of social accounts up. */
const plansByAccounts: ReadonlyArray<Organization.Plan> =
  (Object.keys(Organization.planAllowances) as Array<Organization.Plan>)
    .filter((plan) => plan !== "trial")
    .sort((a, b) => Organization.planAllowances[a].socialAccounts - Organization.planAllowances[b].socialAccounts)

/**
 * The sandbox's organization must hold its sandbox accounts and still take a connect: when its plan
 * allows no more accounts than it has, it moves to the smallest plan that allows more (the largest
 * plan when none does). Its subscription status is left as it is. Returns the plan it moved to, if any.
 */
export const fitPlan = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const orgs = yield* OrganizationStore
    const org = yield* orgs.findById(organizationId)
    if (Option.isNone(org)) return Option.none<Organization.Plan>()
    const count = (yield* (yield* AccountStore).list(organizationId)).length
    if (Organization.planAllowances[org.value.plan].socialAccounts > count) return Option.none<Organization.Plan>()
    const plan = plansByAccounts.find((p) => Organization.planAllowances[p].socialAccounts > count) ??
      plansByAccounts[plansByAccounts.length - 1]!
    if (plan === org.value.plan) return Option.none<Organization.Plan>()
    yield* orgs.update(new Organization.Organization({ ...org.value, plan }))
    return Option.some(plan)
  })
