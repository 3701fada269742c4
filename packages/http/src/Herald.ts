/**
 * Herald in-process, for host applications: `Herald.layer(config)` composes the store, the platforms
 * and the dispatcher, and the `Herald` service's methods are the API's use cases, answered in the
 * API's wire shapes, acting as an organization the host names: no API key, no HTTP.
 *
 * The caller: an in-process principal, a key that is never stored and has no token, with every scope
 * and every account of the organization (`inProcessKey`). The plan's posting allowances and limits the
 * use cases enforce apply as they do over HTTP; the per-key request rate limit (an HTTP concern) and
 * the subscription check do not (the host owns the deployment). Adding a use case is one line below.
 */
import * as AiProviders from "@herald/adapters/ai/AiProviders"
import * as ConnectionsConfig from "@herald/adapters/oauth/Config"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as AiGeneration from "@herald/core/ai/AiGeneration"
import * as Analytics from "@herald/core/analytics/Analytics"
import * as ApiKey from "@herald/core/access/ApiKey"
import * as Approvals from "@herald/core/workflow/Approvals"
import * as Campaigns from "@herald/core/campaigns/Campaigns"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import { ApiKeyId, OrganizationId, UserId } from "@herald/core/kernel/Ids"
import type { Media } from "@herald/core/domain/Media"
import type * as Organization from "@herald/core/access/Organization"
import * as MediaLibrary from "@herald/core/media/MediaLibrary"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Posts from "@herald/core/posts/Posts"
import * as Queues from "@herald/core/workflow/Queues"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import * as AccountView from "./AccountView.js"
import * as Admin from "./Admin.js"
import { toGeneratedCaptions, toGeneratedImage } from "./groups/Ai.js"
import { toCampaignView } from "./groups/Campaigns.js"
import * as MediaHttp from "./groups/Media.js"
import * as MediaServices from "./MediaServices.js"
import { toPostView } from "./groups/Posts.js"
import { toQueueView } from "./groups/Queue.js"
import * as WebhooksHttp from "./groups/Webhooks.js"
import * as HeraldEvents from "./HeraldEvents.js"
import * as RateLimit from "./RateLimit.js"
import * as Server from "./Server.js"
import * as Worker from "./Worker.js"

export interface HeraldConfig {
  /** A Postgres URL (`postgres://…`), or a SQLite file; default `<dataDir>/herald.db`. */
  readonly database?: string
  /** Where SQLite, media bytes and the generated credentials key live (default `.herald`). */
  readonly dataDir?: string
  /** `sandbox`: every platform through the sandbox (and sandbox accounts connected); `live`: real clients. */
  readonly platforms?: "sandbox" | "live"
  /** Key for platform credentials at rest (as HERALD_SECRET); default the key file in `dataDir`. */
  readonly secret?: string
  /** The organization to act as; default the oldest one, created ("Default organization") on an empty store. */
  readonly organizationId?: string
  /** The user recorded as the requester of changes (event data `user_id`); default none. */
  readonly userId?: string
  /** Run the dispatcher, token refresh, webhook deliveries and housekeeping in this process (default true). */
  readonly worker?: boolean | Worker.WorkerOptions
}

const positive = Schema.optional(Schema.Number.pipe(Schema.positive()))

/** What a config may hold: checked before anything starts, every wrong field reported. */
export const ConfigSchema = Schema.Struct({
  database: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  dataDir: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  platforms: Schema.optional(Schema.Literal("sandbox", "live")),
  secret: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  organizationId: Schema.optional(OrganizationId),
  userId: Schema.optional(UserId),
  worker: Schema.optional(Schema.Union(
    Schema.Boolean,
    Schema.Struct({ batchSize: positive, concurrency: positive, leaseSeconds: positive, pollMillis: positive })
  ))
})

/** The config, or 400-style `validation_error` naming each wrong field (`details.validation_errors`). */
export const validateConfig = (config: unknown) =>
  Posts.decodeBody(ConfigSchema, config ?? {}).pipe(
    Effect.mapError((e) => DomainError.of("validation_error", "Invalid Herald configuration", e.details))
  )

/** The in-process principal's key id: fixed, so that event data and logs name it the same every run. */
export const inProcessKeyId = ApiKeyId.make("00000000-0000-4000-8000-00000000b0de")

/** The key-less principal the in-process API acts as: never stored, no token, every scope and account. */
export const inProcessKey = (organizationId: OrganizationId, userId: Option.Option<UserId>, now: DateTime.Utc) =>
  new ApiKey.ApiKey({
    id: inProcessKeyId,
    organizationId,
    createdBy: userId,
    name: "in-process",
    hint: "in-process",
    hash: "",
    scopes: ["read", "write", "ai"],
    accountIds: Option.none(),
    expiresAt: Option.none(),
    revokedAt: Option.none(),
    createdAt: now
  })

export const databaseConfig = (config: HeraldConfig): SqlDatabase.DatabaseConfig => {
  const dataDir = config.dataDir ?? ".herald"
  const database = config.database
  if (database !== undefined && /^postgres(ql)?:\/\//i.test(database)) {
    return { _tag: "Postgres", url: Redacted.make(database) }
  }
  return { _tag: "Sqlite", filename: database ?? path.join(dataDir, "herald.db") }
}

/** The store, every store port, media, crypto and ids (as `Server.services`, with the secret from config). */
const services = (config: HeraldConfig) => {
  const database = databaseConfig(config)
  const dataDir = config.dataDir ?? CredentialCipher.keyDirFor(database)
  return Layer.mergeAll(
    SqlStores.layer,
    MediaServices.layerServices({ dataDir, sandbox: config.platforms !== "live" }).pipe(Layer.provide(SqlStores.layer)),
    // use_queue on posts.create: the next free opening, claimed in the create transaction.
    Queues.allocatorLayer.pipe(Layer.provide(SqlStores.layer))
  ).pipe(
    Layer.provideMerge(SqlDatabase.layer(database)),
    Layer.provideMerge(Layer.mergeAll(
      Server.nodeServices,
      RateLimit.layer(RateLimit.defaults),
      config.secret === undefined
        ? CredentialCipher.layerFromEnv(dataDir)
        : CredentialCipher.layer({ dataDir, secret: Redacted.make(config.secret) })
    ))
  )
}

/** The engine beside the stores: platforms, dispatch signal, AI, and (unless `worker: false`) the dispatcher. */
const engine = (config: HeraldConfig) => {
  const sandbox = config.platforms !== "live"
  const worker = typeof config.worker === "object" ? config.worker : undefined
  const base = Layer.mergeAll(
    Worker.layerPlatforms(sandbox),
    Dispatcher.layerSignal,
    Worker.layerOAuthProviders,
    ConnectionsConfig.layerSettings(),
    WebhooksHttp.layerServicesFromEnv,
    AiProviders.layerFromEnv({ sandbox })
  )
  return config.worker === false ? base : Worker.layer(worker).pipe(Layer.provideMerge(base))
}

type Params = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const first = (v: string | ReadonlyArray<string> | undefined): string | undefined => typeof v === "string" ? v : v?.[0]

/** The organization to act as: the one named, else the oldest, created with its owner on an empty store. */
const resolveOrganization = (config: HeraldConfig) =>
  Effect.gen(function*() {
    if (config.organizationId !== undefined) {
      return yield* Admin.findOrganization(config.organizationId).pipe(
        Effect.mapError((e) => DomainError.of("not_found", e.message))
      )
    }
    // One transaction, so a crash leaves the organization with its owner or nothing.
    return yield* (yield* Transactor).withTransaction(Effect.gen(function*() {
      const orgs = yield* (yield* OrganizationStore).list
      const oldest = orgs[0]
      if (oldest !== undefined) return oldest
      const org = yield* Admin.createOrganization({ name: "Default organization" })
      yield* Admin.createOwner(org.id, "owner@localhost", "Owner")
      return org
    }))
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))

/** With sandbox platforms: one sandbox account per platform for the organization, unless it has them. */
const sandboxAccounts = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const existing = yield* (yield* AccountStore).list(organizationId)
    if (existing.some((a) => a.platformAccountId.startsWith("sandbox-"))) return
    yield* Sandbox.bootstrapAccounts(organizationId)
    yield* Sandbox.fitPlan(organizationId)
  }).pipe(Effect.orDie)

/** What the use cases run on: the stores and the engine's services. */
type Requirements = Layer.Layer.Success<ReturnType<typeof services>> | Layer.Layer.Success<ReturnType<typeof engine>>

const make = (config: HeraldConfig) =>
  Effect.gen(function*() {
    const organization: Organization.Organization = yield* resolveOrganization(config)
    if (config.platforms !== "live") yield* sandboxAccounts(organization.id)
    const userId = config.userId === undefined ? Option.none() : Option.some(UserId.make(config.userId))
    const key = inProcessKey(organization.id, userId, yield* DateTime.now)
    const caller = { key }
    const orgId = organization.id
    const context = yield* Effect.context<Requirements>()
    const run = <A, E>(self: Effect.Effect<A, E | PersistenceError, Requirements>) =>
      self.pipe(
        Effect.catchIf((e): e is PersistenceError => (e as { _tag?: unknown })._tag === "PersistenceError", Effect.die),
        Effect.provide(context)
      ) as Effect.Effect<A, Exclude<E, PersistenceError>>
    const mediaView = (media: Media) =>
      Effect.map(MediaHttp.publicUrlOf(media.storageKey, media.mimeType), (url) => MediaHttp.toMediaView(media, url))

    return {
      organizationId: orgId as string,
      posts: {
        create: (body: unknown) => run(Effect.map(Posts.create(caller, body), (c) => toPostView(c.record))),
        get: (id: string) => run(Effect.map(Posts.get(caller, id), (r) => toPostView(r))),
        list: (params: Params = {}) =>
          run(Effect.map(Posts.list(caller, params), (l) => ({
            posts: l.page.items.map((r) => toPostView(r)),
            pagination: {
              limit: l.limit,
              offset: l.offset,
              total: l.page.total,
              has_more: l.hasMore,
              next_cursor: l.nextCursor
            }
          }))),
        update: (id: string, body: unknown) =>
          run(Effect.map(Posts.update(caller, id, body ?? {}), (u) => toPostView(u.record))),
        schedule: (id: string, body: unknown = {}) =>
          run(Effect.map(Posts.schedule(caller, id, body), (r) => toPostView(r))),
        delete: (id: string) =>
          run(
            Effect.map(Posts.remove(caller, id), (r) => ({ id: r.post.id, post_id: r.post.id, deleted: true as const }))
          )
      },
      approvals: {
        approve: (id: string, body: unknown = {}) =>
          run(Effect.map(Approvals.approve(caller, id, body), (r) => toPostView(r))),
        requestChanges: (id: string, body: unknown) =>
          run(Effect.map(Approvals.requestChanges(caller, id, body), (r) => toPostView(r)))
      },
      ai: {
        generateCaption: (body: unknown) =>
          run(Effect.flatMap(Posts.decodeBody(AiGeneration.CaptionBody, body), (b) =>
            Effect.map(AiGeneration.generateCaption(organization, b), toGeneratedCaptions))),
        generateImage: (body: unknown) =>
          run(Effect.flatMap(Posts.decodeBody(AiGeneration.ImageBody, body), (b) =>
            Effect.flatMap(AiGeneration.generateImage(organization, b), toGeneratedImage)))
      },
      accounts: {
        list: () =>
          run(Effect.gen(function*() {
            const all = yield* (yield* AccountStore).list(orgId)
            const now = yield* DateTime.now
            return {
              accounts: AccountView.withoutFacebookFlowDuplicates(all).map((a) =>
                AccountView.toAccount(a, now)
              )
            }
          }))
      },
      media: {
        importFromUrl: (body: unknown) =>
          run(Effect.flatMap(MediaLibrary.importFromUrl(orgId, body), mediaView)),
        list: (params: MediaLibrary.ListParams = {}) =>
          run(Effect.gen(function*() {
            const l = yield* MediaLibrary.list(orgId, params)
            return {
              media: yield* Effect.forEach(l.items, mediaView),
              pagination: { limit: l.limit, offset: l.offset, total: l.total, has_more: l.hasMore }
            }
          })),
        get: (id: string) => run(Effect.flatMap(MediaLibrary.get(orgId, id), mediaView)),
        delete: (id: string) =>
          run(Effect.map(MediaLibrary.remove(orgId, id), (m) => ({ id: m.id, media_id: m.id, deleted: true as const })))
      },
      webhooks: {
        create: (body: unknown) =>
          run(Effect.map(Webhooks.create(orgId, body), (c) => ({
            ...WebhooksHttp.toWebhookView(c.record),
            secret: c.secret,
            secret_warning: Webhooks.secretWarning
          }))),
        list: () => run(Effect.map(Webhooks.list(orgId), (rs) => ({ webhooks: rs.map(WebhooksHttp.toWebhookView) }))),
        get: (id: string) => run(Effect.map(Webhooks.get(orgId, id), WebhooksHttp.toWebhookView)),
        update: (id: string, body: unknown) =>
          run(Effect.map(Webhooks.update(orgId, id, body), WebhooksHttp.toWebhookView)),
        delete: (id: string) =>
          run(Effect.map(Webhooks.remove(orgId, id), (r) => ({ id: r.subscription.id, deleted: true as const })))
      },
      campaigns: {
        create: (body: unknown) => run(Effect.map(Campaigns.create(caller, body ?? {}), toCampaignView)),
        list: (params: Params = {}) =>
          run(Effect.map(Campaigns.list(caller, params), (l) => ({
            campaigns: l.page.items.map(toCampaignView),
            pagination: { limit: l.limit, offset: l.offset, total: l.page.total, has_more: l.hasMore }
          }))),
        get: (id: string) => run(Effect.map(Campaigns.get(caller, id), toCampaignView)),
        update: (id: string, body: unknown) =>
          run(Effect.map(Campaigns.update(caller, id, body ?? {}), toCampaignView)),
        delete: (id: string) => run(Campaigns.remove(caller, id))
      },
      queue: {
        /** Creates or replaces the posting queue (slots as "mon-fri 09:00,12:30;sat 10:00" or openings). */
        set: (input: { readonly timezone: string; readonly openings: Queues.SetQueueInput["openings"] }) =>
          run(Effect.asVoid(Queues.setQueue({ organizationId: orgId, ...input }))),
        /** The openings and where the next `count` posts would land, as GET /queue answers. */
        show: (count: number = Queues.defaultForecast) => run(Effect.map(Queues.show(orgId, count), toQueueView))
      },
      analytics: {
        summary: (params: Params = {}) =>
          run(Analytics.summary(
            { organizationId: orgId, visibleAccountIds: Option.none() },
            { period: first(params.period), from: first(params.from), to: first(params.to) }
          ))
      },
      events: {
        /** Events of the organization after `cursor` (None: from the start), oldest first; see HeraldEvents. */
        poll: (cursor: HeraldEvents.Cursor, options: HeraldEvents.PollOptions = {}) =>
          run(HeraldEvents.poll(orgId, cursor, options)),
        /** A cursor at the newest event now: subscribing from it hears only what happens next. */
        latest: () => run(HeraldEvents.latest(orgId))
      }
    }
  })

export type HeraldService = Effect.Effect.Success<ReturnType<typeof make>>

export class Herald extends Context.Tag("@herald/http/Herald")<Herald, HeraldService>() {}

/** Herald in-process: `Herald` over the store, platforms and (unless `worker: false`) the dispatcher. */
export const layer = (config: HeraldConfig = {}) =>
  Layer.unwrapEffect(Effect.as(
    validateConfig(config),
    Layer.effect(Herald, make(config)).pipe(
      Layer.provide(engine(config)),
      Layer.provide(services(config))
    )
  ))
