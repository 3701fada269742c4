/**
 * The publishing engine over real stores (a fresh SQLite file, or a Postgres database) with the sandbox
 * platform: builders of posts, and the record of every send the sandbox received.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SandboxSend } from "@herald/adapters/platforms/Sandbox"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import type { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import { Destination } from "@herald/core/domain/Destination"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import type { EventType } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as IdGenerator from "@herald/core/kernel/IdGenerator"
import { DestinationId, type OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import type { Platform } from "@herald/core/domain/Platform"
import type { PlatformClient, Platforms } from "@herald/core/platforms/Platforms"
import { type PlatformContent, PlatformContentEntry, Post, ThreadPost } from "@herald/core/domain/Post"
import { type PostRecord, PostStore } from "@herald/core/posts/PostStore"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestServices from "effect/TestServices"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"

/** Every publish call the sandbox received in this test, in order. */
export class Sends extends Context.Tag("test/engine/Sends")<Sends, Array<SandboxSend>>() {}

/** The organization the fixtures live in. */
export class TestOrg extends Context.Tag("test/engine/TestOrg")<TestOrg, {
  readonly id: OrganizationId
  readonly accounts: Record<Platform, SocialAccount>
}>() {}

export type EngineServices =
  | SqlStores.Stores
  | SqlClient.SqlClient
  | IdGenerator.IdGenerator
  | Platforms
  | Sends
  | TestOrg

/**
 * A fresh engine: database, stores, sequential ids, the sandbox on every platform (or `clients` where
 * given, replacing the sandbox for their platform), and one organization with one sandbox account per
 * platform (`Sandbox <platform>`, connected by the bootstrap).
 */
export const layer = (options: {
  readonly database?: TestDatabases.TestDatabaseLayer
  readonly clients?: ReadonlyArray<PlatformClient>
} = {}) => {
  const base = SqlStores.layer.pipe(
    Layer.provideMerge(IdGenerator.layerSequential),
    Layer.provideMerge(options.database ?? TestDatabases.sqlite)
  )
  const platforms = Layer.unwrapEffect(
    Effect.map(Sends, (sends) =>
      Registry.layer([
        ...Sandbox.makeAll({ onSend: (send) => Effect.sync(() => sends.push(send)) }),
        ...(options.clients ?? [])
      ]))
  ).pipe(Layer.provideMerge(Layer.sync(Sends, () => [])))
  const org = Layer.effect(
    TestOrg,
    Effect.gen(function*() {
      const orgs = yield* OrganizationStore
      const now = yield* DateTime.now
      const id = (yield* (yield* IdGenerator.IdGenerator).uuid) as OrganizationId
      yield* orgs.insert(
        new Organization({
          id,
          name: "Sandbox org",
          plan: "growth",
          subscriptionStatus: "active",
          trialEndsAt: Option.none(),
          createdAt: now
        })
      )
      const created = yield* Sandbox.bootstrapAccounts(id)
      const accounts = {} as Record<Platform, SocialAccount>
      for (const account of created) accounts[account.platform] = account
      return { id, accounts }
    })
  )
  return org.pipe(Layer.provideMerge(platforms), Layer.provideMerge(base), Layer.orDie)
}

export interface PostInput {
  readonly content: string
  readonly platforms: ReadonlyArray<Platform>
  /** Due instant; default now (an immediate publish). */
  readonly dueAt?: DateTime.Utc
  readonly platformContent?: Partial<Record<Platform, { readonly content: string }>>
  readonly threadPosts?: ReadonlyArray<string>
  readonly requestHash?: string
}

/** Inserts a post with one queued destination per platform, as Posts.create would. */
export const insertPost = (input: PostInput) =>
  Effect.gen(function*() {
    const org = yield* TestOrg
    const ids = yield* IdGenerator.IdGenerator
    const store = yield* PostStore
    const now = yield* DateTime.now
    const dueAt = input.dueAt ?? now
    const postId = PostId.make(yield* ids.uuid)
    const accounts = input.platforms.map((p) => org.accounts[p])
    const post = new Post({
      id: postId,
      organizationId: org.id,
      createdByKey: Option.none(),
      content: input.content,
      accountIds: accounts.map((a) => a.id),
      platformContent: Object.fromEntries(
        Object.entries(input.platformContent ?? {}).map((
          [p, e]
        ) => [p, new PlatformContentEntry({ content: e.content })])
      ) as PlatformContent,
      mediaIds: [],
      scheduledFor: DateTime.greaterThan(dueAt, now) ? Option.some(dueAt) : Option.none(),
      timezone: Option.none(),
      campaignId: Option.none(),
      isDraft: false,
      createdStatus: DateTime.greaterThan(dueAt, now) ? "scheduled" : "publishing",
      approval: Option.none(),
      idempotencyKey: Option.none(),
      requestHash: Option.fromNullable(input.requestHash),
      threadPosts: (input.threadPosts ?? []).map((content) => new ThreadPost({ content })),
      useQueue: false,
      createdAt: now,
      updatedAt: now
    })
    const destinations: Array<Destination> = []
    for (const account of accounts) {
      destinations.push(
        Destination.queued({
          id: DestinationId.make(yield* ids.uuid),
          post: { id: postId, organizationId: org.id },
          account,
          dueAt,
          now
        })
      )
    }
    const record: PostRecord = { post, destinations }
    yield* store.insert(record)
    return record
  })

export const findPost = (postId: PostId) =>
  Effect.gen(function*() {
    const org = yield* TestOrg
    const found = yield* (yield* PostStore).findById(org.id, postId)
    return Option.getOrThrow(found)
  })

/** The event types naming the post, oldest first. */
export const eventTypes = (postId: PostId) =>
  Effect.gen(function*() {
    const org = yield* TestOrg
    const events = yield* (yield* EventStore).list(org.id, { postId })
    return events.map((e) => e.type as EventType)
  })

export const eventsOf = (postId: PostId) =>
  Effect.gen(function*() {
    const org = yield* TestOrg
    return yield* (yield* EventStore).list(org.id, { postId })
  })

export const account = (platform: Platform) =>
  Effect.gen(function*() {
    const org = yield* TestOrg
    const base = org.accounts[platform]
    return Option.getOrThrow(yield* (yield* AccountStore).findById(org.id, base.id))
  })

export const worker: Dispatcher.Options = { workerId: "test-worker", leaseFor: "2 minutes" }

export const runOnce = Dispatcher.runOnce(worker)

/** Waits in real time (the test clock stays put) until `check` holds, for at most `within`. */
export const eventually = <R>(
  check: Effect.Effect<boolean, unknown, R>,
  within: Duration.DurationInput = "5 seconds"
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(Duration.decode(within))
    while (Date.now() < deadline) {
      if (yield* check) return true
      yield* TestServices.provideLive(Effect.sleep("5 millis"))
    }
    return yield* check
  })

/** Lets forked fibers run in real time for a moment (e.g. until the dispatcher is asleep). */
export const settle = (duration: Duration.DurationInput = "50 millis") =>
  TestServices.provideLive(Effect.sleep(duration))
