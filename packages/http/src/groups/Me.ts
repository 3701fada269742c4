import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { Scope } from "@herald/core/access/ApiKey"
import { Plan, planAllowances } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { PostStatus } from "@herald/core/domain/Post"
import type { PostQuery } from "@herald/core/posts/PostStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as DateTime from "effect/DateTime"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Usage from "../Usage.js"

const Quota = Schema.Struct({ used: Schema.Int, limit: Schema.Int })

export const Me = Schema.Struct({
  key: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    scopes: Schema.Array(Scope),
    account_ids: Schema.NullOr(Schema.Array(Schema.Int)).annotations({
      description: "The accounts a restricted key may use; null for every account of the organization"
    }),
    expires_at: Schema.NullOr(Schema.String)
  }),
  organization: Schema.Struct({ id: Schema.String, name: Schema.String, plan: Plan }),
  subscription: Schema.Struct({ status: Schema.String, trial_ends_at: Schema.NullOr(Schema.String) }),
  usage: Schema.Struct({
    accounts: Quota,
    ai_credits: Schema.Struct({ used: Schema.Int, limit: Schema.Int, remaining: Schema.Int }).annotations({
      description: "This calendar month (UTC): used, the plan's limit, and what is left"
    }),
    storage: Schema.Struct({ used_bytes: Schema.Int, limit_bytes: Schema.NullOr(Schema.Int) }),
    seats: Quota
  }),
  posts: Schema.Struct({
    total: Schema.Int,
    by_status: Schema.Struct({
      draft: Schema.Int,
      scheduled: Schema.Int,
      publishing: Schema.Int,
      published: Schema.Int,
      partially_failed: Schema.Int,
      failed: Schema.Int
    })
  }).annotations({ description: "Posts the key can see, by derived status" })
}).annotations({ identifier: "Me" })
export type Me = typeof Me.Type

export const MeGroup = HttpApiGroup.make("me")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Envelope.ok(Me))
      .annotate(OpenApi.Summary, "The calling key, its organization, subscription, quota usage and post counts")
  )
  .pipe(ApiGroup.authenticated)

const iso = (value: Option.Option<DateTime.Utc>): string | null =>
  Option.match(value, { onNone: () => null, onSome: DateTime.formatIso })

export const me = Effect.gen(function*() {
  const { key, organization } = yield* Auth.requireScope("read")
  const now = yield* DateTime.now
  const allowance = planAllowances[organization.plan]
  const accounts = yield* (yield* AccountStore).list(organization.id)
  const users = yield* (yield* OrganizationStore).listUsers(organization.id)
  const aiCredits = yield* (yield* UsageCounters).get(Usage.aiCreditsKey(organization.id), Usage.monthWindowEnd(now))
  const storage = yield* Effect.serviceOption(Usage.StorageUsage)
  // The bytes the media library keeps for the organization, maintained with every media write.
  const usedBytes = Option.isSome(storage)
    ? yield* storage.value.usedBytes(organization.id)
    : yield* MediaLibrary.storedBytes(organization.id)
  const posts = yield* PostStore
  const base: PostQuery = {
    organizationId: organization.id,
    ...(Option.isSome(key.accountIds) ? { visibleAccountIds: key.accountIds.value } : {}),
    sort: "created_at",
    order: "desc",
    limit: 0,
    offset: 0
  }
  // One grouped count: the total is the sum over the statuses (each post has exactly one).
  const byStatus = yield* posts.countByStatus(base)
  const total = PostStatus.literals.reduce((sum, status) => sum + byStatus[status], 0)
  return {
    key: {
      id: key.id,
      name: key.name,
      scopes: key.scopes,
      account_ids: Option.getOrNull(key.accountIds),
      expires_at: iso(key.expiresAt)
    },
    organization: { id: organization.id, name: organization.name, plan: organization.plan },
    subscription: { status: organization.subscriptionStatus, trial_ends_at: iso(organization.trialEndsAt) },
    usage: {
      accounts: { used: accounts.length, limit: allowance.socialAccounts },
      ai_credits: {
        used: aiCredits,
        limit: allowance.aiCreditsPerMonth,
        remaining: Math.max(0, allowance.aiCreditsPerMonth - aiCredits)
      },
      storage: { used_bytes: usedBytes, limit_bytes: Option.isSome(storage) ? storage.value.limitBytes : null },
      seats: { used: users.length, limit: allowance.teamSeats }
    },
    posts: { total, by_status: byStatus }
  } satisfies Me
}).pipe(Effect.catchTag("PersistenceError", Effect.die))

export const MeLive = HttpApiBuilder.group(ApiGroup.apiOf(MeGroup), "me", (handlers) => handlers.handle("me", () => me))
