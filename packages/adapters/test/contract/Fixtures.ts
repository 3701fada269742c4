/** Builders of domain values for the store contracts; every id is fresh unless given. */
import type * as SqlClient from "@effect/sql/SqlClient"
import { SocialAccount } from "@herald/core/domain/Account"
import type { NewAccount } from "@herald/core/accounts/AccountStore"
import { ApiKey } from "@herald/core/access/ApiKey"
import { Destination } from "@herald/core/domain/Destination"
import { Event } from "@herald/core/webhooks/Event"
import { AccountId, ApiKeyId, DestinationId, EventId, OrganizationId, PostId, UserId } from "@herald/core/kernel/Ids"
import { Organization, User } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { Post } from "@herald/core/domain/Post"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import type { Stores } from "../../src/sql/SqlStores.js"

/** What a contract runs against: every store, and the raw client to look behind them. */
export type StoresLayer = Layer.Layer<Stores | SqlClient.SqlClient, unknown>

export const at = (millis: number): DateTime.Utc => DateTime.unsafeMake(millis)

/** A fixed base instant, so tests read as offsets from it. */
export const T0 = 1_700_000_000_000

export const organization = (overrides: Partial<ConstructorParameters<typeof Organization>[0]> = {}) =>
  new Organization({
    id: OrganizationId.make(randomUUID()),
    name: "Acme",
    plan: "starter",
    subscriptionStatus: "active",
    trialEndsAt: Option.none(),
    createdAt: at(T0),
    ...overrides
  })

export const user = (organizationId: OrganizationId, overrides: Partial<ConstructorParameters<typeof User>[0]> = {}) =>
  new User({
    id: UserId.make(randomUUID()),
    organizationId,
    email: "owner@example.com",
    name: "Owner",
    role: "owner",
    createdAt: at(T0),
    ...overrides
  })

export const apiKey = (
  organizationId: OrganizationId,
  overrides: Partial<ConstructorParameters<typeof ApiKey>[0]> = {}
) =>
  new ApiKey({
    id: ApiKeyId.make(randomUUID()),
    organizationId,
    createdBy: Option.none(),
    name: "ci",
    hint: "pe_live_abcd",
    hash: randomUUID().replace(/-/g, "") + randomUUID().replace(/-/g, ""),
    scopes: ["read", "write"],
    accountIds: Option.none(),
    expiresAt: Option.none(),
    revokedAt: Option.none(),
    createdAt: at(T0),
    ...overrides
  })

export const newAccount = (organizationId: OrganizationId, overrides: Partial<NewAccount> = {}): NewAccount => ({
  organizationId,
  platform: "x",
  platformAccountId: randomUUID(),
  accountName: "@acme",
  avatarUrl: "https://example.com/a.png",
  isActive: true,
  connectionFlow: "direct",
  needsReconnection: false,
  tokenExpiresAt: Option.none(),
  lastSuccessAt: Option.none(),
  recentFailures: 0,
  credentials: Option.none(),
  createdAt: at(T0),
  updatedAt: at(T0),
  ...overrides
})

export const post = (organizationId: OrganizationId, overrides: Partial<ConstructorParameters<typeof Post>[0]> = {}) =>
  new Post({
    id: PostId.make(randomUUID()),
    organizationId,
    createdByKey: Option.none(),
    content: "Hello world",
    accountIds: [],
    platformContent: {},
    mediaIds: [],
    scheduledFor: Option.none(),
    timezone: Option.none(),
    campaignId: Option.none(),
    isDraft: false,
    createdStatus: "scheduled",
    approval: Option.none(),
    idempotencyKey: Option.none(),
    requestHash: Option.none(),
    threadPosts: [],
    useQueue: false,
    createdAt: at(T0),
    updatedAt: at(T0),
    ...overrides
  })

export const destination = (
  target: { readonly post: Post; readonly account: SocialAccount },
  overrides: Partial<ConstructorParameters<typeof Destination>[0]> = {}
) =>
  new Destination({
    ...Destination.queued({
      id: DestinationId.make(randomUUID()),
      post: target.post,
      account: target.account,
      dueAt: at(T0),
      now: at(T0)
    }),
    ...overrides
  })

export const event = (
  organizationId: OrganizationId,
  overrides: Partial<ConstructorParameters<typeof Event>[0]> = {}
) =>
  new Event({
    id: EventId.make(randomUUID()),
    organizationId,
    type: "post.scheduled",
    data: {},
    createdAt: at(T0),
    ...overrides
  })

/** An account that exists only as a value (for destinations whose account row does not matter). */
export const accountValue = (organizationId: OrganizationId, id: number, overrides: Partial<NewAccount> = {}) =>
  new SocialAccount({ ...newAccount(organizationId, overrides), id: AccountId.make(id) })

/** A fresh organization, inserted. */
export const givenOrganization = Effect.gen(function*() {
  const org = organization()
  yield* (yield* OrganizationStore).insert(org)
  return org
})
