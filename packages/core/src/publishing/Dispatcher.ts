/**
 * The publishing engine: claims due destinations, publishes them through their platform client and
 * records each outcome with its events in one transaction (the outbox).
 *
 * - A claim is exclusive and leased (`DispatchStore.claimDue`); its `post.publishing` events are written
 *   in the claim's transaction.
 * - An outcome is written fenced by the claim (`DispatchStore.complete`); events are appended only when
 *   the fenced write took effect, so a worker that lost its lease writes nothing.
 * - Leases are short (30 s) and renewed every 5 s while a publish is in flight, so a long upload keeps
 *   its claim. A destination whose process died mid-publish (its heartbeat went stale, or its lease ran
 *   out) is taken over by any live process's sweep and never re-sent blindly: its platform is asked
 *   whether the attempt reached it (`PlatformClient.findPublished`). Found: `published`. Absent:
 *   re-queued. The platform cannot tell: `failed` with an error saying the outcome is unknown.
 * - The publish deadline covers the main post only. A client's follow-ups (`PublishResult.followUps`:
 *   thread parts, first comment) run after `published` is recorded, under their own timeout, and never
 *   change the destination: a slow follow-up cannot make the engine retry a post that is out.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Tracer from "effect/Tracer"
import { SocialAccount } from "../accounts/Account.js"
import { AccountStore, successPrecisionMillis } from "../accounts/AccountStore.js"
import * as CircuitBreaker from "./CircuitBreaker.js"
import * as ClaimSize from "./ClaimSize.js"
import * as ClaimsFirst from "./ClaimsFirst.js"
import type { Destination } from "../posts/Destination.js"
import * as DestinationLifecycle from "../posts/DestinationLifecycle.js"
import { type Claim, type Completion, DispatchStore } from "./DispatchStore.js"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import type { PersistenceError } from "../kernel/Errors.js"
import * as TraceContext from "../kernel/TraceContext.js"
import { Event, type EventData, type EventType } from "../webhooks/Event.js"
import { EventStore } from "../webhooks/EventStore.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import { unchecked } from "../kernel/Unchecked.js"
import { type EventId, type MediaId, type OrganizationId, type PostId } from "../kernel/Ids.js"
import {
  type Credentials,
  type MediaRef,
  type PlatformClient,
  Platforms,
  PublishError,
  type PublishErrorKind,
  type PublishPart,
  type PublishedAnswer,
  type PublishRequest,
  type PublishResult
} from "../platforms/Platforms.js"
import type { Post } from "../posts/Post.js"
import type { Platform } from "../platforms/Platform.js"
import { threadPlatforms } from "../platforms/PlatformRules.js"
import * as PostLifecycle from "../posts/PostLifecycle.js"
import { type PostCount, PostStore } from "../posts/PostStore.js"
import * as Processes from "./Processes.js"
import { Transactor } from "../kernel/Transactor.js"
import { UsageCounters } from "../access/UsageCounters.js"

// ---------------------------------------------------------------------------------------------------
// Services the dispatcher uses besides the stores
// ---------------------------------------------------------------------------------------------------

/**
 * Wakes a sleeping dispatcher at once: the posts use cases poke it when they create work that is due
 * now (or earlier than the dispatcher planned to wake). Pokes coalesce; none is lost.
 */
export class DispatchSignal extends Context.Tag("@herald/core/DispatchSignal")<DispatchSignal, {
  readonly poke: Effect.Effect<void>
  /** Completes at the next poke, or at once if a poke came since the last `clear`. */
  readonly take: Effect.Effect<void>
  /** Forgets pokes that came before now (the dispatcher is about to look for work anyway). */
  readonly clear: Effect.Effect<void>
}>() {}

export const makeSignal: Effect.Effect<DispatchSignal["Type"]> = Effect.map(Queue.sliding<void>(1), (queue) =>
  DispatchSignal.of({
    poke: Effect.asVoid(Queue.offer(queue, undefined)),
    take: Queue.take(queue),
    clear: Effect.asVoid(Queue.takeAll(queue))
  }))

export const layerSignal: Layer.Layer<DispatchSignal> = Layer.effect(DispatchSignal, makeSignal)

/** Pokes the dispatcher if one runs in this process; does nothing otherwise. */
export const poke: Effect.Effect<void> = Effect.flatMap(
  Effect.serviceOption(DispatchSignal),
  Option.match({ onNone: () => Effect.void, onSome: (signal) => signal.poke })
)

/**
 * Turns a post's media ids into what a platform client reads. Optional: without it, a destination
 * whose post carries media fails permanently with a message saying media storage is not configured.
 */
export class DispatchMedia extends Context.Tag("@herald/core/DispatchMedia")<DispatchMedia, {
  readonly resolve: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<MediaId>,
    /** The destination's platform (and Instagram content type, settings): the media fitted to it. */
    target?: MediaTarget
  ) => Effect.Effect<ReadonlyArray<MediaRef>, PublishError | PersistenceError>
}>() {}

/** Where media are going, so each can be handed over as its rendition for that platform. */
export interface MediaTarget {
  readonly platform: Platform
  readonly contentType?: string | undefined
  readonly settings?: { readonly [key: string]: unknown } | undefined
}

// ---------------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------------

export interface Options {
  /** Identifies this worker in leases (e.g. host:pid:uuid). */
  readonly workerId: string
  /**
   * The most destinations one round claims; default 500. A round claims `minBatchSize` when the queue
   * is quiet and doubles its claim, up to this, while every claim comes back full (`ClaimSize`).
   */
  readonly batchSize?: number
  /** The smallest claim; default 50 (or the batch size when that is smaller). */
  readonly minBatchSize?: number
  /**
   * Publishes of one round in flight at once; default the batch size. While a backlog drains, up to
   * 4 rounds overlap (the next claims while the last publishes and records), so up to 4 times this.
   */
  readonly concurrency?: number
  /**
   * How long a claim stays exclusive without renewal; default 30 seconds. Claims in flight are renewed
   * every `renewEvery`, so a publish may last as long as its own timeout.
   */
  readonly leaseFor?: Duration.DurationInput
  /** How often leases in flight are renewed; default 5 seconds (at most a third of the lease). */
  readonly renewEvery?: Duration.DurationInput
  /** A process whose heartbeat is older than this is dead; default `Processes.deadAfter` (20 s). */
  readonly deadAfter?: Duration.DurationInput
  /** How long the platform may take to say whether an abandoned attempt reached it; default 10 s. */
  readonly lookupTimeout?: Duration.DurationInput
  /** Default publish timeout when the client names none; default 60 seconds. */
  readonly publishTimeout?: Duration.DurationInput
  /**
   * The longest the loop sleeps without looking at the store, default 1 second: other processes may
   * have inserted work or died holding leases. Work due later is woken for at its due instant.
   */
  readonly pollInterval?: Duration.DurationInput
}

interface Resolved {
  readonly workerId: string
  readonly batchSize: number
  readonly claimSize: ClaimSize.Bounds
  readonly concurrency: number
  readonly leaseFor: Duration.Duration
  readonly renewEvery: Duration.Duration
  readonly deadAfter: Duration.Duration
  readonly lookupTimeout: Duration.Duration
  readonly publishTimeout: Duration.Duration
  readonly pollInterval: Duration.Duration
}

const resolve = (options: Options): Resolved => {
  const batchSize = Math.max(1, options.batchSize ?? 500)
  const minBatchSize = Math.min(batchSize, Math.max(1, options.minBatchSize ?? 50))
  const leaseFor = Duration.decode(options.leaseFor ?? "30 seconds")
  const renewEvery = Duration.min(
    Duration.decode(options.renewEvery ?? "5 seconds"),
    Duration.millis(Math.max(1, Math.floor(Duration.toMillis(leaseFor) / 3)))
  )
  return {
    workerId: options.workerId,
    batchSize,
    claimSize: { min: minBatchSize, max: batchSize },
    concurrency: Math.max(1, options.concurrency ?? batchSize),
    leaseFor,
    renewEvery,
    deadAfter: Duration.decode(options.deadAfter ?? Processes.deadAfter),
    lookupTimeout: Duration.decode(options.lookupTimeout ?? "10 seconds"),
    publishTimeout: Duration.decode(options.publishTimeout ?? "60 seconds"),
    pollInterval: Duration.decode(options.pollInterval ?? "1 second")
  }
}

// ---------------------------------------------------------------------------------------------------
// Outcomes
// ---------------------------------------------------------------------------------------------------

/** How a publish attempt ended, before it is turned into a store completion. */
export type Outcome =
  | { readonly _tag: "Published"; readonly result: PublishResult }
  | {
    readonly _tag: "Failed"
    readonly kind: PublishErrorKind
    readonly message: string
    readonly retryAfterSeconds?: number
    /**
     * Decided by the engine without calling the platform (post deleted, account inactive or already
     * known to need reconnection, no client): no reconnect event, nothing counted against the account
     * or the circuit breaker.
     */
    readonly local?: boolean
  }
  /** The worker died mid-publish; whether the platform got the post is unknown. */
  | { readonly _tag: "Unknown"; readonly message: string }
  /**
   * The worker died mid-publish and the platform confirmed the post is not there: due again at once
   * (nothing failed on the platform's side), unless that was the last attempt.
   */
  | { readonly _tag: "Absent"; readonly message: string }

/** Stored on a destination re-queued because its platform confirmed the abandoned attempt is absent. */
export const absentOutcomeMessage =
  "The worker publishing this destination stopped before it could record the outcome; the platform " +
  "confirmed the post was not published, so it was queued again."

export const unknownOutcomeMessage =
  "The worker publishing this destination stopped before it could record the outcome, so it is unknown " +
  "whether the platform received the post. It was not sent again automatically, to avoid a duplicate: check " +
  "the account, and if the post is missing, retry it with POST /posts/{post_id}/retry."

export interface RoundSummary {
  /** How many destinations this round asked for (`ClaimSize`). */
  readonly limit: number
  /** Destinations claimed this round. */
  readonly claimed: number
  readonly published: number
  readonly requeued: number
  readonly failed: number
  /** Destinations whose process died mid-publish, resolved this round (all three ways below). */
  readonly expired: number
  /** Of those, found on the platform (published) and confirmed absent (re-queued). */
  readonly settledFound: number
  readonly settledAbsent: number
  /** Completions not written because the claim had been lost (fencing). */
  readonly lost: number
}

type Recorded = "published" | "requeued" | "failed" | "lost"

// ---------------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------------

// The engine's own events are made of values it already holds typed: the class constructor (a schema
// validation per event, then copies) showed in the dispatch profiles, so it is skipped here.
const makeEvent = (organizationId: OrganizationId, type: EventType, data: EventData) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    const id = yield* ids.uuid
    const createdAt = yield* DateTime.now
    return unchecked(Event, { id: id as EventId, organizationId, type, data, createdAt, traceParent: Option.none() })
  })

/**
 * `makeEvent` for a batch, without an effect per event: the batch's `count` ids are made in one step,
 * every event is stamped with the batch's `now`, and each call takes the next id.
 */
const eventsAt = (count: number, createdAt: DateTime.Utc) =>
  Effect.map(
    Effect.flatMap(IdGenerator, (ids) => Effect.replicateEffect(ids.uuid, count)),
    (ids) => {
      let next = 0
      return (
        organizationId: OrganizationId,
        type: EventType,
        data: EventData,
        traceParent: Option.Option<string> = Option.none()
      ): Event => {
        if (next >= ids.length) throw new Error(`Dispatcher: a batch made more than its ${count} events`)
        return unchecked(Event, { id: ids[next++] as EventId, organizationId, type, data, createdAt, traceParent })
      }
    }
  )

const destinationData = (d: Destination) => ({
  post_id: d.postId,
  destination_id: d.id,
  platform: d.platform,
  account_id: d.accountId,
  account_name: d.accountName
})

// ---------------------------------------------------------------------------------------------------
// Building the request
// ---------------------------------------------------------------------------------------------------

const failure = (kind: PublishErrorKind, message: string): Outcome => ({ _tag: "Failed", kind, message })

const localFailure = (kind: PublishErrorKind, message: string): Outcome => ({
  _tag: "Failed",
  kind,
  message,
  local: true
})

const parseCredentials = (account: SocialAccount): Credentials => {
  const raw = Option.map(account.credentials, Redacted.value)
  const record: Record<string, string> = {}
  if (Option.isSome(raw)) {
    try {
      const parsed: unknown = JSON.parse(raw.value)
      if (typeof parsed === "object" && parsed !== null) {
        for (const [key, value] of Object.entries(parsed)) {
          if (typeof value === "string") record[key] = value
        }
      }
    } catch {
      // Not JSON: a single opaque token.
      record.token = raw.value
    }
  }
  return Redacted.make(record)
}

/**
 * An account's credentials parsed once per account read: a round reads each account once and sends
 * many destinations with it (a JSON parse per destination showed in the dispatch profile).
 */
const parsedCredentials = new WeakMap<SocialAccount, Credentials>()

const credentialsOf = (account: SocialAccount): Credentials => {
  const known = parsedCredentials.get(account)
  if (known !== undefined) return known
  const credentials = parseCredentials(account)
  parsedCredentials.set(account, credentials)
  return credentials
}

const resolveMedia = (organizationId: OrganizationId, ids: ReadonlyArray<MediaId>, target: MediaTarget) =>
  Effect.gen(function*() {
    if (ids.length === 0) return [] as ReadonlyArray<MediaRef>
    const media = yield* Effect.serviceOption(DispatchMedia)
    if (Option.isNone(media)) {
      return yield* new PublishError({ kind: "media", message: "Media storage is not configured on this server" })
    }
    return yield* media.value.resolve(organizationId, ids, target)
  })

/** The request for one destination, with the platform's override applied and thread parts in order. */
export const buildRequest = (
  post: Post,
  destination: Destination,
  account: SocialAccount,
  attempt: number
) =>
  Effect.gen(function*() {
    const override = post.platformContent[destination.platform]
    const target: MediaTarget = {
      platform: destination.platform,
      contentType: override?.contentType,
      settings: override?.settings
    }
    const main: PublishPart = {
      content: override?.content ?? post.content,
      media: yield* resolveMedia(post.organizationId, post.mediaIds, target)
    }
    const thread: Array<PublishPart> = []
    if (threadPlatforms.includes(destination.platform)) {
      for (const part of post.threadPosts) {
        thread.push({ content: part.content, media: yield* resolveMedia(post.organizationId, part.media_ids ?? [], { platform: destination.platform }) })
      }
    }
    return assemble(post, destination, account, attempt, main, thread)
  })

const noMedia: ReadonlyArray<MediaRef> = []

/**
 * `buildRequest` without an effect, for the common post that carries no media (nothing to resolve);
 * undefined when some part of the request has media.
 */
export const requestWithoutMedia = (
  post: Post,
  destination: Destination,
  account: SocialAccount,
  attempt: number
): PublishRequest | undefined => {
  if (post.mediaIds.length > 0) return undefined
  const thread: Array<PublishPart> = []
  if (threadPlatforms.includes(destination.platform)) {
    for (const part of post.threadPosts) {
      if (part.media_ids !== undefined && part.media_ids.length > 0) return undefined
      thread.push({ content: part.content, media: noMedia })
    }
  }
  const override = post.platformContent[destination.platform]
  const main: PublishPart = { content: override?.content ?? post.content, media: noMedia }
  return assemble(post, destination, account, attempt, main, thread)
}

const assemble = (
  post: Post,
  destination: Destination,
  account: SocialAccount,
  attempt: number,
  main: PublishPart,
  thread: Array<PublishPart>
): PublishRequest => {
  const override = post.platformContent[destination.platform]
  return {
    account,
    credentials: credentialsOf(account),
    main,
    contentType: Option.fromNullable(override?.contentType),
    settings: override?.settings ?? {},
    thread,
    destinationId: destination.id,
    attempt
  }
}

// ---------------------------------------------------------------------------------------------------
// Publishing one claim
// ---------------------------------------------------------------------------------------------------

export interface Loaded {
  readonly post: Option.Option<Post>
  /** How many destinations the post has; more than one means settlements must be serialized. */
  readonly destinationCount: number
  /** The account as read before publishing. */
  readonly account?: SocialAccount
}

/**
 * Accounts read once per round: a batch often holds many destinations of one account. An account
 * found dead during the round is re-read fresh before it is updated, so the cache never writes.
 */
type AccountCache = Map<string, Option.Option<SocialAccount>>

/**
 * The posts of a round's claims, read in one go (`PostStore.findMany`); `undefined` when that read
 * failed, and each claim reads its own post then.
 */
type Preloaded = ReadonlyMap<string, PostCount> | undefined

const preloadPosts = (claims: ReadonlyArray<Claim>) =>
  Effect.flatMap(PostStore, (posts) => posts.findMany(claims.map((c) => c.destination.postId))).pipe(
    Effect.map((records): Preloaded => new Map(records.map((r) => [r.post.id, r]))),
    Effect.catchAll((e) =>
      Effect.as(Effect.logWarning("Dispatcher: reading the round's posts failed; reading them one by one", e), undefined)
    )
  )

/**
 * The publish timeouts of a round, kept by one watchdog fiber: each publish runs in a fiber of its
 * own, which the watchdog interrupts once its deadline has passed; the publish then ends with the
 * timeout's error. (`Effect.timeoutFail` races two fibers and a sleep per publish, about a seventh
 * of the dispatcher's CPU per destination in the profile.) A publish that succeeded keeps its
 * success even when its deadline passed meanwhile: it reached the platform. Synchronous: the round
 * registers each publish fiber as it forks it and asks, when the fiber has ended, whether the
 * watchdog ended it.
 */
interface Deadlines {
  readonly watch: (fiber: Fiber.RuntimeFiber<unknown, unknown>, at: number) => void
  /** Stops watching `fiber`; true when the watchdog interrupted it. */
  readonly forget: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => boolean
}

const makeDeadlines = Effect.gen(function*() {
  const watched = new Map<Fiber.RuntimeFiber<unknown, unknown>, number>()
  const expired = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  // When the watchdog wakes next (Infinity: when a deadline is set), and how to wake it earlier.
  let target = Number.POSITIVE_INFINITY
  let wake: Deferred.Deferred<void> | undefined
  const watchdog = Effect.gen(function*() {
    while (true) {
      const now = yield* Clock.currentTimeMillis
      let next = Number.POSITIVE_INFINITY
      const due: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
      for (const [fiber, at] of watched) {
        if (at <= now) due.push(fiber)
        else if (at < next) next = at
      }
      for (const fiber of due) {
        watched.delete(fiber)
        expired.add(fiber)
        yield* Fiber.interruptFork(fiber)
      }
      const signal = yield* Deferred.make<void>()
      wake = signal
      target = next
      if (next === Number.POSITIVE_INFINITY) yield* Deferred.await(signal)
      else yield* Effect.raceFirst(Effect.sleep(Duration.millis(next - now)), Deferred.await(signal))
    }
  })
  yield* Effect.forkScoped(watchdog)
  const deadlines: Deadlines = {
    watch: (fiber, at) => {
      watched.set(fiber, at)
      if (at < target && wake !== undefined) {
        const signal = wake
        wake = undefined
        target = at
        Deferred.unsafeDone(signal, Exit.void)
      }
    },
    forget: (fiber) => {
      watched.delete(fiber)
      return expired.delete(fiber)
    }
  }
  return deadlines
})

/** The services a round's publishes use, looked up once per round. */
interface RoundServices {
  readonly posts: PostStore["Type"]
  readonly accounts: AccountStore["Type"]
  readonly platforms: Platforms["Type"]
}

/**
 * A claim made ready to send, or already decided without the platform. `send` is what the publish
 * fiber runs: the request itself when the post has no media (built synchronously), otherwise the
 * media resolution too, under the same deadline.
 */
type Prepared =
  | { readonly _tag: "Decided"; readonly outcome: Outcome; readonly loaded: Loaded }
  | {
    readonly _tag: "Send"
    readonly send: Effect.Effect<PublishResult, PublishError | PersistenceError>
    readonly timeout: Duration.Duration
    /** The synchronous request still needs the hold checked before it is sent. */
    readonly checkHold: boolean
    readonly loaded: Loaded
  }

const notHeld = () =>
  new PublishError({
    kind: "transient",
    message: "This worker could not keep its claim fresh (lease renewal or heartbeat failing), so the " +
      "post was not sent; it will be tried again"
  })

const deletedPost: Loaded = { post: Option.none(), destinationCount: 1 }

/** Each client's own publish timeout, decoded once (a text like "30 seconds" is parsed by `decode`). */
const clientTimeouts = new WeakMap<PlatformClient, Duration.Duration>()

/** The client's own publish timeout, or `fallback` when it names none. */
const clientTimeout = (client: PlatformClient, fallback: Duration.Duration): Duration.Duration => {
  if (client.timeout === undefined) return fallback
  const known = clientTimeouts.get(client)
  if (known !== undefined) return known
  const decoded = Duration.decode(client.timeout)
  clientTimeouts.set(client, decoded)
  return decoded
}

/**
 * Gets one claim ready to send: its post (from the round's preload), its account (read once per
 * account per round), its client and request. Fails only when storage fails before anything was sent.
 */
const prepareClaim = (
  claim: Claim,
  config: Resolved,
  services: RoundServices,
  cache: AccountCache,
  holds: Holds,
  preloaded: Preloaded
): Effect.Effect<Prepared, PersistenceError> => {
  const d = claim.destination
  const fromPreload = preloaded === undefined ? undefined : preloaded.get(d.postId)
  const withPost = (record: Option.Option<PostCount>): Effect.Effect<Prepared, PersistenceError> => {
    if (Option.isNone(record) || record.value.post.organizationId !== d.organizationId) {
      return Effect.succeed({
        _tag: "Decided",
        outcome: localFailure("permanent", "The post was deleted before it could be published"),
        loaded: deletedPost
      })
    }
    const post = record.value.post
    const loaded: Loaded = { post: Option.some(post), destinationCount: record.value.destinationCount }
    const cacheKey = `${d.organizationId}:${d.accountId}`
    const decide = (account: Option.Option<SocialAccount>): Prepared => {
      if (Option.isNone(account) || !account.value.isActive) {
        return {
          _tag: "Decided",
          outcome: localFailure("permanent", "The account is disconnected or inactive; reconnect it and retry"),
          loaded
        }
      }
      const withAccount: Loaded = { ...loaded, account: account.value }
      if (account.value.needsReconnection) {
        return {
          _tag: "Decided",
          outcome: localFailure("auth", "The account needs reconnection before it can publish; reconnect it and retry"),
          loaded: withAccount
        }
      }
      const client = services.platforms.get(d.platform)
      if (Option.isNone(client)) {
        return {
          _tag: "Decided",
          outcome: localFailure("permanent", `Publishing to ${d.platform} is not configured on this server`),
          loaded: withAccount
        }
      }
      const publish = client.value.publish
      const timeout = clientTimeout(client.value, config.publishTimeout)
      const request = requestWithoutMedia(post, d, account.value, d.attempts)
      if (request !== undefined) return { _tag: "Send", send: publish(request), timeout, checkHold: true, loaded: withAccount }
      const send = Effect.flatMap(buildRequest(post, d, account.value, d.attempts), (request) =>
        Effect.flatMap(holds.stillHeld(claim), (held) => held ? publish(request) : Effect.fail(notHeld())))
      return { _tag: "Send", send, timeout, checkHold: false, loaded: withAccount }
    }
    // The round's accounts were read up front: one already read is decided in this step.
    const cached = cache.get(cacheKey)
    if (cached !== undefined) return Effect.succeed(decide(cached))
    return Effect.map(services.accounts.findById(d.organizationId, d.accountId), (account) => {
      cache.set(cacheKey, account)
      return decide(account)
    })
  }
  if (fromPreload !== undefined) return withPost(Option.some(fromPreload))
  if (preloaded !== undefined) return withPost(Option.none())
  return Effect.flatMap(
    services.posts.findById(d.organizationId, d.postId),
    (record) => withPost(Option.map(record, (r) => ({ post: r.post, destinationCount: r.destinations.length })))
  )
}

const outcomeOf = (exit: Exit.Exit<PublishResult, PublishError | PersistenceError>): Outcome => {
  if (Exit.isSuccess(exit)) return { _tag: "Published", result: exit.value }
  const error = Cause.failureOption(exit.cause)
  if (Option.isSome(error)) {
    const e = error.value
    if (e._tag === "PublishError") {
      return {
        _tag: "Failed",
        kind: e.kind,
        message: e.message,
        ...(e.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: e.retryAfterSeconds })
      }
    }
    // Storage failed while resolving media: nothing was sent, so trying again later is safe.
    return failure("transient", "Storage was unavailable while preparing the publish")
  }
  // A defect in a client: the request may have left, so it is not retried automatically.
  return failure("permanent", "The platform client failed unexpectedly; retry the destination to try again")
}

// ---------------------------------------------------------------------------------------------------
// Recording an outcome
// ---------------------------------------------------------------------------------------------------

/**
 * Serializes the settlements of one post's destinations, so that exactly one of them sees the post
 * settled and fires `post.partially_failed`. The counter's upsert holds a row lock until commit on
 * Postgres (SQLite serializes every transaction anyway); its value is not used.
 */
export const lockPost = (postId: PostId): Effect.Effect<void, PersistenceError, UsageCounters> =>
  Effect.flatMap(UsageCounters, (counters) =>
    Effect.asVoid(counters.increment(`dispatch:settle:${postId}`, DateTime.unsafeMake(0), 1)))

/** One outcome to record. */
export interface Pending {
  readonly claim: Claim
  readonly outcome: Outcome
  readonly loaded: Loaded
  /**
   * The `traceparent` its events carry (the publish's span); when absent, the post's (`Post.traceParent`).
   */
  readonly trace?: Option.Option<string>
}

/** The `traceparent` the events of an outcome carry, so that their deliveries join the post's trace. */
const traceOf = (p: Pending): Option.Option<string> =>
  p.trace ?? (Option.isSome(p.loaded.post) ? p.loaded.post.value.traceParent : Option.none())

type RecordServices = DispatchStore | EventStore | AccountStore | PostStore | Transactor | IdGenerator | UsageCounters

const needsLock = (p: Pending): Option.Option<PostId> =>
  Option.isSome(p.loaded.post) && p.loaded.destinationCount > 1 ? Option.some(p.loaded.post.value.id) : Option.none()

/**
 * Writes outcomes and their events in ONE transaction: the fenced completions, then one append of
 * every event. Post locks are taken first, in id order, and accounts are touched in id order, so
 * concurrent batches of other workers cannot deadlock on them. A completion whose claim was lost
 * writes nothing and adds no event.
 */
export const recordAll = (
  pending: ReadonlyArray<Pending>
): Effect.Effect<ReadonlyArray<Recorded>, PersistenceError, RecordServices> =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const eventStore = yield* EventStore
    const transactor = yield* Transactor
    const now = yield* DateTime.now
    const locks = [...new Set(pending.flatMap((p) => Option.toArray(needsLock(p))))].sort()
    const order = pending.map((p, i) => ({ p, i })).sort((a, b) =>
      a.p.claim.destination.accountId - b.p.claim.destination.accountId || a.i - b.i
    )
    const recorded = yield* transactor.withTransaction(Effect.gen(function*() {
      for (const postId of locks) yield* lockPost(postId)
      const results: Array<Recorded> = new Array(pending.length)
      const events: Array<Event> = []
      const completions = order.map(({ p }) => completionOf(p.outcome, p.claim.destination, now))
      // Every fenced write of the batch in one statement; a lost claim is refused alone.
      const written = yield* dispatch.completeAll(
        order.map(({ p }, k) => ({ claim: p.claim, completion: completions[k]! }))
      )
      // One event for each written completion that is not a re-queue.
      const event = yield* eventsAt(
        completions.filter((c, k) => written[k] === true && c._tag !== "Requeued").length,
        now
      )
      // Accounts as this transaction left them: a batch of one account's publishes writes it once.
      const accountsNow = new Map<string, SocialAccount>()
      // Accounts whose success this batch offered the store, written or not (fresh, or another's).
      const successOffered = new Set<string>()
      // Posts of several destinations that a member of this batch settled (finished, not re-queued).
      const settling = new Map<string, Destination>()
      for (const [k, { i, p }] of order.entries()) {
        const { claim, loaded, outcome } = p
        const d = claim.destination
        const completion: Completion = completions[k]!
        if (written[k] !== true) {
          results[i] = "lost"
          continue
        }
        const base = destinationData(d)
        switch (completion._tag) {
          case "Published": {
            events.push(
              event(d.organizationId, "post.published", {
                ...base,
                published_at: DateTime.formatIso(completion.publishedAt),
                platform_post_id: completion.platformPostId
              }, traceOf(p))
            )
            break
          }
          case "Failed": {
            events.push(
              event(d.organizationId, "post.failed", {
                ...base,
                error: completion.error,
                attempts: d.attempts,
                failed_at: DateTime.formatIso(completion.failedAt)
              }, traceOf(p))
            )
            break
          }
          case "Requeued":
            break
        }
        const accountKey = `${d.organizationId}:${d.accountId}`
        const before = accountsNow.get(accountKey) ?? loaded.account
        const success = isPlainSuccess(outcome)
        if (!(success && successOffered.has(accountKey)) && touchesAccount(outcome, now, before)) {
          const updated = yield* updateAccount(d, outcome, now)
          if (success) successOffered.add(accountKey)
          if (Option.isSome(updated.account)) accountsNow.set(accountKey, updated.account.value)
          events.push(...updated.events)
        }
        const counts = outcome._tag === "Failed" && outcome.local !== true && isPermanent(outcome.kind)
        if (counts && Option.isSome(loaded.post)) {
          yield* countForBreaker(loaded.post.value)
        }
        // A post with one destination cannot end mixed.
        if (completion._tag !== "Requeued" && loaded.destinationCount > 1) settling.set(d.postId, d)
        results[i] = completion._tag === "Published" ? "published" : completion._tag === "Requeued"
          ? "requeued"
          : "failed"
      }
      // Once per post, after every write of the batch: several of one post's destinations may settle in
      // this transaction, and only the state they leave together says whether the post ended mixed.
      for (const d of settling.values()) {
        const settled = yield* settledEvent(d)
        if (Option.isSome(settled)) events.push(settled.value)
      }
      if (events.length > 0) yield* eventStore.append(events)
      return results
    }))
    // Counted once committed: a batch that fails is recorded again, one outcome at a time.
    for (let i = 0; i < pending.length; i++) countOutcome(pending[i]!, recorded[i]!)
    return recorded
  })

/** The error kind a failed or re-queued outcome is counted under. */
const errorKindOf = (outcome: Outcome): string =>
  outcome._tag === "Failed" ? outcome.kind : outcome._tag === "Unknown" ? "outcome_unknown" : "absent"

/** `EngineMetrics`' count of one recorded outcome. */
const countOutcome = (p: Pending, recorded: Recorded): void => {
  const platform = p.claim.destination.platform
  switch (recorded) {
    case "published":
      return EngineMetrics.destinationsPublished.record({ platform }, 1)
    case "requeued":
      return EngineMetrics.destinationsRequeued.record({ platform, error_kind: errorKindOf(p.outcome) }, 1)
    case "failed":
      return EngineMetrics.destinationsFailed.record({ platform, error_kind: errorKindOf(p.outcome) }, 1)
    case "lost":
      return EngineMetrics.destinationsLost.record({ platform }, 1)
  }
}

/** Writes one outcome and its events in one transaction. */
export const record = (
  claim: Claim,
  outcome: Outcome,
  loaded: Loaded
): Effect.Effect<Recorded, PersistenceError, RecordServices> =>
  Effect.map(recordAll([{ claim, outcome, loaded }]), (results) => results[0]!)

const isPermanent = (kind: PublishErrorKind): boolean =>
  kind === "permanent" || kind === "duplicate" || kind === "too_long" || kind === "media"

const completionOf = (outcome: Outcome, d: Destination, now: DateTime.Utc): Completion => {
  switch (outcome._tag) {
    case "Published":
      return {
        _tag: "Published",
        platformPostId: outcome.result.platformPostId,
        platformPostUrl: outcome.result.platformPostUrl,
        publishedAt: now
      }
    case "Unknown":
      return { _tag: "Failed", error: outcome.message, failedAt: now }
    case "Absent":
      // The attempt counts: a post that keeps killing its worker stops after the usual attempts.
      return d.attempts < DestinationLifecycle.maxAttempts
        ? { _tag: "Requeued", error: outcome.message, dueAt: now }
        : { _tag: "Failed", error: `${outcome.message} (gave up after ${d.attempts} attempts)`, failedAt: now }
    case "Failed": {
      const decision = DestinationLifecycle.decideAfterFailure({
        attempts: d.attempts,
        retryable: outcome.kind === "transient" || outcome.kind === "rate_limit",
        ...(outcome.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: outcome.retryAfterSeconds })
      })
      if (decision._tag === "Retry") {
        return { _tag: "Requeued", error: outcome.message, dueAt: DateTime.addDuration(now, decision.delay) }
      }
      const error = outcome.kind === "transient" || outcome.kind === "rate_limit"
        ? `${outcome.message} (gave up after ${d.attempts} attempts)`
        : outcome.message
      return { _tag: "Failed", error, failedAt: now }
    }
  }
}

/**
 * A healthy account whose last success is under a minute old is not rewritten on every publish
 * (`successPrecisionMillis`); the store applies the same rule to the row itself (`recordSuccess`).
 */
const isFresh = (account: SocialAccount, now: DateTime.Utc, result: PublishResult): boolean =>
  result.renewedCredentials === undefined &&
  account.recentFailures === 0 &&
  !account.needsReconnection &&
  Option.isSome(account.lastSuccessAt) &&
  DateTime.toEpochMillis(now) - DateTime.toEpochMillis(account.lastSuccessAt.value) < successPrecisionMillis

/** A publish that brought no new credentials: on the account it writes only the success. */
const isPlainSuccess = (outcome: Outcome): boolean =>
  outcome._tag === "Published" && outcome.result.renewedCredentials === undefined

/** Whether this outcome changes the account's health (`updateAccount` then writes it). */
const touchesAccount = (outcome: Outcome, now: DateTime.Utc, before: SocialAccount | undefined): boolean => {
  if (outcome._tag === "Unknown" || outcome._tag === "Absent") return false
  if (outcome._tag === "Failed") return outcome.local !== true && (outcome.kind === "auth" || isPermanent(outcome.kind))
  return before === undefined || !isFresh(before, now, outcome.result)
}

/**
 * Account health follows publishes: last success, permanent failures, reconnection. Returns the events
 * and the account as this transaction leaves it (none when it was not found or the outcome is not
 * the account's).
 */
const updateAccount = (d: Destination, outcome: Outcome, now: DateTime.Utc) =>
  Effect.gen(function*() {
    const events: Array<Event> = []
    const unchanged = { events, account: Option.none<SocialAccount>() }
    if (outcome._tag === "Unknown" || outcome._tag === "Absent") return unchanged
    const accounts = yield* AccountStore
    // A success without new credentials touches three columns, decided on the row as it is then: rounds
    // in flight together read the account before any of them wrote it, and the first to record writes
    // it; the others find it fresh, or (Postgres) held by that first writer, and leave it alone.
    if (isPlainSuccess(outcome)) {
      return { events, account: yield* accounts.recordSuccess(d.organizationId, d.accountId, now) }
    }
    // Read inside the transaction, just before writing, so a concurrent reconnect is not overwritten
    // with stale credentials.
    const current = yield* accounts.findById(d.organizationId, d.accountId)
    if (Option.isNone(current)) return unchanged
    const account = current.value
    let next: SocialAccount | undefined
    if (outcome._tag === "Published") {
      const renewed = outcome.result.renewedCredentials
      next = new SocialAccount({
        ...account,
        lastSuccessAt: Option.some(now),
        recentFailures: 0,
        ...(renewed === undefined ? {} : { credentials: Option.some(Redacted.make(JSON.stringify(renewed))) }),
        updatedAt: now
      })
    } else if (outcome.kind === "auth") {
      if (!account.needsReconnection) {
        next = new SocialAccount({ ...account, needsReconnection: true, updatedAt: now })
        events.push(
          yield* makeEvent(d.organizationId, "account.reconnect_needed", {
            account_id: account.id,
            platform: account.platform,
            account_name: account.accountName,
            reason: outcome.message,
            post_id: d.postId,
            destination_id: d.id
          })
        )
      }
    } else {
      next = new SocialAccount({ ...account, recentFailures: account.recentFailures + 1, updatedAt: now })
    }
    if (next === undefined) return unchanged
    yield* accounts.update(next)
    return { events, account: Option.some(next) }
  })

/** The same body failing permanently counts towards the circuit breaker of POST /posts. */
const countForBreaker = (post: Post) =>
  Option.match(post.requestHash, {
    onNone: () => Effect.void,
    onSome: (requestHash) => CircuitBreaker.recordPostFailure({ ...post, requestHash })
  })

/**
 * `post.partially_failed` when this completion settled the post's last destination and the post ended
 * with some published and some failed. Runs inside the completion's transaction, after the write.
 */
const settledEvent = (d: Destination) =>
  Effect.gen(function*() {
    const posts = yield* PostStore
    const current = yield* posts.findById(d.organizationId, d.postId)
    if (Option.isNone(current)) return Option.none<Event>()
    const destinations = current.value.destinations
    const outcome = PostLifecycle.settledOutcome(destinations.map((x) => x.status))
    if (outcome !== "partially_failed") return Option.none<Event>()
    const published = destinations.filter((x) => x.status === "published")
    const failed = destinations.filter((x) => x.status === "failed")
    return Option.some(
      yield* makeEvent(d.organizationId, "post.partially_failed", {
        post_id: d.postId,
        published_count: published.length,
        failed_count: failed.length,
        destinations: destinations.map((x) => ({
          destination_id: x.id,
          platform: x.platform,
          account_id: x.accountId,
          account_name: x.accountName,
          status: x.status,
          error: Option.getOrNull(x.error),
          platform_post_id: Option.getOrNull(x.platformPostId)
        }))
      })
    )
  })

// ---------------------------------------------------------------------------------------------------
// Rounds and the loop
// ---------------------------------------------------------------------------------------------------

/** Retries a recording a few times on storage errors; if it still fails, the lease runs out and the
 * destination is resolved as failed-with-unknown-outcome, never re-sent. */
const recordWithRetry = (claim: Claim, outcome: Outcome, loaded: Loaded) =>
  record(claim, outcome, loaded).pipe(
    Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") })
  )

/**
 * Asks the platform whether an abandoned attempt reached it. Anything short of a clear answer (no
 * client, no lookup, the post or account gone, an error, a timeout) is `Unknown`.
 */
export const askPlatform = (claim: Claim, post: Option.Option<Post>, config: Resolved) =>
  Effect.gen(function*() {
    const d = claim.destination
    const unknown = (reason: string): PublishedAnswer => ({ _tag: "Unknown", reason })
    if (Option.isNone(post)) return unknown("the post was deleted")
    const client = (yield* Platforms).get(d.platform)
    const findPublished = Option.isSome(client) ? client.value.findPublished : undefined
    if (findPublished === undefined) return unknown(`${d.platform} offers no lookup`)
    const account = yield* (yield* AccountStore).findById(d.organizationId, d.accountId)
    if (Option.isNone(account)) return unknown("the account is gone")
    const until = yield* DateTime.now
    return yield* findPublished({
      account: account.value,
      credentials: parseCredentials(account.value),
      destinationId: d.id,
      attempt: d.attempts,
      content: post.value.platformContent[d.platform]?.content ?? post.value.content,
      since: claim.claimedAt ?? d.dueAt,
      until
    }).pipe(
      Effect.timeoutFail({
        duration: config.lookupTimeout,
        onTimeout: () => new PublishError({ kind: "transient", message: "the lookup timed out" })
      }),
      Effect.catchAll((e) => Effect.succeed(unknown(e.message)))
    )
  }).pipe(Effect.catchAll((e) => Effect.succeed<PublishedAnswer>({ _tag: "Unknown", reason: e.message })))

/** What an abandoned attempt is recorded as, from the platform's answer. */
export const abandonedOutcome = (answer: PublishedAnswer): Outcome => {
  switch (answer._tag) {
    case "Found":
      return {
        _tag: "Published",
        result: { platformPostId: answer.platformPostId, platformPostUrl: answer.platformPostUrl }
      }
    case "Absent":
      return { _tag: "Absent", message: absentOutcomeMessage }
    case "Unknown":
      return { _tag: "Unknown", message: unknownOutcomeMessage }
  }
}

/**
 * Abandoned claims taken over per sweep: with `settleConcurrency` lookups at once, each bounded by the
 * lookup timeout (10 s), a batch is settled within two lookup timeouts, inside the 30 s lease it is
 * taken over under. A dead process that held more is settled batch after batch, at once.
 */
const settleBatch = 100

/** Platform lookups of one sweep in flight at once. */
const settleConcurrency = 50

/**
 * Takes over and resolves destinations whose process died while publishing (stale heartbeat or
 * expired lease), asking their platform first, up to `settleBatch` of them, and records their
 * outcomes together (one transaction, as a round's recorder does); then removes the dead processes'
 * rows.
 */
const resolveAbandoned = (config: Resolved) =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const posts = yield* PostStore
    const now = yield* DateTime.now
    const deadBefore = DateTime.subtractDuration(now, config.deadAfter)
    const abandoned = yield* dispatch.takeOverAbandoned({
      now,
      deadBefore,
      limit: Math.min(settleBatch, config.batchSize),
      leaseFor: config.leaseFor,
      workerId: config.workerId
    })
    const tally = { takenOver: abandoned.length, resolved: 0, found: 0, absent: 0 }
    // The batch's posts in one read (one by one if that fails).
    const preloaded = abandoned.length === 0 ? undefined : yield* preloadPosts(abandoned)
    const settled = yield* Effect.forEach(abandoned, (claim) =>
      Effect.gen(function*() {
        const d = claim.destination
        const known = preloaded?.get(d.postId)
        const loaded: Loaded = known !== undefined && known.post.organizationId === d.organizationId
          ? { post: Option.some(known.post), destinationCount: known.destinationCount }
          : Option.match(yield* posts.findById(d.organizationId, d.postId), {
            onNone: () => ({ post: Option.none(), destinationCount: 1 }),
            onSome: (r) => ({ post: Option.some(r.post), destinationCount: r.destinations.length })
          })
        const answer = yield* askPlatform(claim, loaded.post, config)
        const pending: Pending = { claim, outcome: abandonedOutcome(answer), loaded }
        return { pending, answer }
      }), { concurrency: settleConcurrency })
    const results = settled.length === 0
      ? []
      : yield* recordAll(settled.map((s) => s.pending)).pipe(
        Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") })
      )
    yield* Effect.forEach(settled, ({ answer, pending }, i) =>
      Effect.gen(function*() {
        const result = results[i] ?? "lost"
        yield* Effect.logWarning(`Dispatcher: abandoned attempt settled (platform answer: ${answer._tag})`).pipe(
          Effect.annotateLogs(answer._tag === "Unknown" ? { reason: answer.reason } : {})
        )
        yield* logOutcome(result, pending.outcome)
        if (result === "lost") return
        tally.resolved += 1
        if (answer._tag === "Found") tally.found += 1
        if (answer._tag === "Absent") tally.absent += 1
      }).pipe(Effect.annotateLogs(logAnnotations(pending.claim.destination))), { discard: true })
    const processes = yield* Effect.serviceOption(Processes.ProcessStore)
    if (Option.isSome(processes)) {
      const removed = yield* processes.value.removeDead(deadBefore)
      if (removed.length > 0) {
        yield* Effect.logWarning(`Dispatcher: removed dead processes ${removed.join(", ")}`)
      }
    }
    return tally
  })

/**
 * The claims of a round still in flight, renewed in the background: a claim whose renewal found it
 * taken over, or whose lease ran out locally (renewals failing), is not sent.
 */
interface Holds {
  readonly stillHeld: (claim: Claim) => Effect.Effect<boolean>
  readonly release: (claim: Claim) => void
}

const makeHolds = (claims: ReadonlyArray<Claim>, config: Resolved) =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const inFlight = new Map(claims.map((c) => [c.leaseToken, c]))
    const until = new Map(claims.map((c) => [c.leaseToken, DateTime.toEpochMillis(c.leaseExpiresAt)]))
    const renewOnce = Effect.gen(function*() {
      const current = [...inFlight.values()]
      if (current.length === 0) return
      const now = yield* DateTime.now
      const next = DateTime.addDuration(now, config.leaseFor)
      const renewed = yield* dispatch.renew(current, next)
      for (const c of current) {
        if (!inFlight.has(c.leaseToken)) continue
        until.set(c.leaseToken, renewed.has(c.leaseToken) ? DateTime.toEpochMillis(next) : 0)
      }
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Dispatcher: renewing leases failed", cause)))
    yield* Effect.forkScoped(
      Effect.repeat(renewOnce, Schedule.spaced(config.renewEvery)).pipe(Effect.delay(config.renewEvery))
    )
    const liveness = yield* Effect.serviceOption(Processes.Liveness)
    // Others may take a claim over once its lease ran out or this process's heartbeat is `deadAfter`
    // old: it is sent only while both are at least one renewal interval away (clock skew, a slow send).
    const margin = Duration.toMillis(config.renewEvery)
    const holds: Holds = {
      stillHeld: (claim) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const leased = (until.get(claim.leaseToken) ?? 0) - margin > now
          if (!leased || Option.isNone(liveness)) return Effect.succeed(leased)
          return Effect.map(liveness.value.lastBeatAt, (beat) => beat + Duration.toMillis(config.deadAfter) - margin > now)
        }),
      release: (claim) => {
        inFlight.delete(claim.leaseToken)
        until.delete(claim.leaseToken)
      }
    }
    return holds
  })

/**
 * Claims a batch and writes its `post.publishing` events in the claim's transaction. `onClaimed` is
 * told how many were claimed as soon as the claim's statement answers, inside that transaction.
 */
const claimBatch = (config: Resolved, limit: number, onClaimed: (claimed: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const eventStore = yield* EventStore
    const transactor = yield* Transactor
    const now = yield* DateTime.now
    const claims = yield* transactor.withTransaction(Effect.gen(function*() {
      const claims = yield* dispatch.claimDue({
        now,
        limit,
        leaseFor: config.leaseFor,
        workerId: config.workerId
      })
      yield* onClaimed(claims.length)
      if (claims.length > 0) {
        const event = yield* eventsAt(claims.length, now)
        const events = claims.map((claim) =>
          event(claim.destination.organizationId, "post.publishing", {
            ...destinationData(claim.destination),
            attempt: claim.destination.attempts
          })
        )
        yield* eventStore.append(events)
      }
      return claims
    }))
    for (const claim of claims) EngineMetrics.destinationsClaimed.record({ platform: claim.destination.platform }, 1)
    return claims
  })

/** The annotations of every log line about one destination, so a post's history can be grepped by id. */
const logAnnotations = (d: Destination) => ({
  post_id: d.postId,
  destination_id: d.id,
  platform: d.platform,
  account_id: d.accountId,
  attempt: d.attempts
})

/**
 * `Effect.annotateLogs(send, logAnnotations(d))` for the body of a fiber of its own (a publish): the
 * annotations are written once, not written and restored around `send` (every fiber-ref write copies
 * the fiber's refs and compares the old and new maps by hash): 3.4 instead of 6.6-7.0 us a publish,
 * measured in isolation. Only for a fiber that ends with `send`: nothing after it sees the annotations.
 */
const annotatedFiber = <A, E, R>(
  send: Effect.Effect<A, E, R>,
  annotations: HashMap.HashMap<string, unknown>
): Effect.Effect<A, E, R> => Effect.zipRight(FiberRef.set(FiberRef.currentLogAnnotations, annotations), send)

/** `annotations` with `logAnnotations(d)` added (the same keys, in its order), built in one step. */
const withDestination = (annotations: HashMap.HashMap<string, unknown>, d: Destination) =>
  HashMap.mutate(annotations, (draft) => {
    HashMap.set(draft, "post_id", d.postId)
    HashMap.set(draft, "destination_id", d.id)
    HashMap.set(draft, "platform", d.platform)
    HashMap.set(draft, "account_id", d.accountId)
    HashMap.set(draft, "attempt", d.attempts)
  })

/** One line per recorded outcome; `error` is the message stored on the destination (clients scrub it). */
const logOutcome = (recorded: Recorded, outcome: Outcome) => {
  const error = outcome._tag === "Published" ? undefined : outcome.message
  const line = recorded === "published"
    ? Effect.logInfo("Dispatcher: published")
    : recorded === "requeued"
    ? Effect.logWarning("Dispatcher: publish failed, re-queued")
    : recorded === "failed"
    ? Effect.logWarning("Dispatcher: publish failed")
    : Effect.logWarning("Dispatcher: claim lost before the outcome was recorded")
  return error === undefined ? line : Effect.annotateLogs(line, "error", error)
}

/**
 * A published destination's follow-ups (thread parts, first comment), run after `published` was
 * recorded: under their own timeout, never failing, never touching the destination again.
 */
const runFollowUps = (claim: Claim, config: Resolved, result: PublishResult) =>
  Effect.gen(function*() {
    const followUps = result.followUps
    if (followUps === undefined) return
    const platforms = yield* Platforms
    const client = platforms.get(claim.destination.platform)
    const chosen = Option.flatMap(client, (c) => Option.fromNullable(c.followUpTimeout ?? c.timeout))
    const timeout = Option.match(chosen, { onNone: () => config.publishTimeout, onSome: Duration.decode })
    yield* followUps.pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: () => `did not finish within ${Duration.format(timeout)}` }),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Dispatcher: follow-ups of a published post did not complete", cause)
      )
    )
  })

/**
 * A round's outcomes on their way from the publishes to the round's recorder: a publish hands its
 * outcome over and is done; the recorder writes whatever has arrived in one transaction, then logs
 * each outcome and starts its follow-ups. (A Deferred and a queue item per publish, and a fiber
 * waiting on each, were a third of the dispatcher's CPU per destination.)
 */
interface Outbox {
  readonly waiting: Array<Pending>
  /** Per claim of the round, in claim order: what became of it, once known. */
  readonly results: Array<Recorded | undefined>
  readonly index: ReadonlyMap<string, number>
  /** Claims whose outcome is neither recorded nor given up yet. */
  remaining: number
  /** Claims whose publish has not ended yet (handed over or given up). */
  unpublished: number
  /** Called once every publish of the round has ended. */
  readonly onPublished: () => void
  /** Completed when an outcome arrives while the recorder waits for one. */
  wake: Deferred.Deferred<void> | undefined
  /**
   * The log annotations each publish fiber ran with (`withDestination` over `annotationsBase`, the
   * publishes' fiber's own), kept until its outcome's line: the recorder, whose annotations are the
   * same map, uses them instead of building them again.
   */
  annotationsBase: HashMap.HashMap<string, unknown> | undefined
  readonly annotated: Map<Claim, HashMap.HashMap<string, unknown>>
}

const makeOutbox = (claims: ReadonlyArray<Claim>, onPublished: () => void): Outbox => ({
  waiting: [],
  results: new Array(claims.length),
  index: new Map(claims.map((c, i) => [c.leaseToken, i])),
  remaining: claims.length,
  unpublished: claims.length,
  onPublished,
  wake: undefined,
  annotationsBase: undefined,
  annotated: new Map()
})

/** One claim's publish has ended (its outcome handed over, or the claim given up). */
const publishEnded = (outbox: Outbox): void => {
  outbox.unpublished -= 1
  if (outbox.unpublished === 0) outbox.onPublished()
}

const wakeRecorderNow = (outbox: Outbox): void => {
  const wake = outbox.wake
  if (wake === undefined) return
  outbox.wake = undefined
  Deferred.unsafeDone(wake, Exit.void)
}

const settle = (outbox: Outbox, claim: Claim, recorded: Recorded) => {
  const i = outbox.index.get(claim.leaseToken)
  if (i !== undefined && outbox.results[i] === undefined) {
    outbox.results[i] = recorded
    outbox.remaining -= 1
  }
}

const recordFailed = (cause: Cause.Cause<unknown>) =>
  Effect.logError("Dispatcher: could not record a publish outcome; its lease will resolve it", cause)

/**
 * Starts a round's publishes from the round's own fiber, at most `concurrency` in flight: each claim
 * is prepared in place (no fiber of its own), its publish forked into one fiber that the deadline
 * watchdog watches, and its outcome handed to the recorder by that fiber's observer when it ends. A
 * claim decided without the platform goes to the recorder at once. (A fiber per claim from
 * `Effect.forEach`, another per publish for its deadline and the generator steps between them were
 * most of the dispatcher's CPU per destination.)
 */
const startPublishes = (
  claims: ReadonlyArray<Claim>,
  config: Resolved,
  services: RoundServices,
  outbox: Outbox,
  holds: Holds,
  preloaded: Preloaded,
  deadlines: Deadlines,
  /** Called once the round's reads are done, before its publishes start. */
  onRead: () => void
) =>
  Effect.gen(function*() {
    const cache: AccountCache = new Map()
    // The round's accounts read up front, several at once (a round trip each on Postgres); one that
    // fails to read is read again, and fails its claims, as each is prepared.
    const distinct = new Map(claims.map((c) => [`${c.destination.organizationId}:${c.destination.accountId}`, c.destination]))
    yield* Effect.forEach(distinct, ([key, d]) =>
      services.accounts.findById(d.organizationId, d.accountId).pipe(
        Effect.match({ onFailure: () => undefined, onSuccess: (account) => cache.set(key, account) })
      ), { concurrency: 8, discard: true })
    onRead()
    const annotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
    outbox.annotationsBase = annotations
    const clock = yield* Effect.clock
    let inFlight = 0
    let slot: Deferred.Deferred<void> | undefined
    const handOver = (pending: Pending) => {
      outbox.waiting.push(pending)
      publishEnded(outbox)
      wakeRecorderNow(outbox)
    }
    const ended = () => {
      inFlight -= 1
      const free = slot
      if (free !== undefined) {
        slot = undefined
        Deferred.unsafeDone(free, Exit.void)
      }
    }
    for (const claim of claims) {
      while (inFlight >= config.concurrency) {
        const free = yield* Deferred.make<void>()
        slot = free
        yield* Deferred.await(free)
      }
      const d = claim.destination
      const prepared = yield* Effect.exit(Effect.suspend(() => prepareClaim(claim, config, services, cache, holds, preloaded)))
      if (Exit.isFailure(prepared)) {
        if (Option.isSome(Cause.failureOption(prepared.cause))) {
          // Storage failed before anything was sent: safe to try again later.
          handOver({
            claim,
            outcome: localFailure("transient", "Storage was unavailable while preparing the publish"),
            loaded: deletedPost
          })
        } else {
          yield* Effect.annotateLogs(recordFailed(prepared.cause), logAnnotations(d))
          holds.release(claim)
          settle(outbox, claim, "lost")
          publishEnded(outbox)
          wakeRecorderNow(outbox)
        }
        continue
      }
      const ready = prepared.value
      if (ready._tag === "Decided") {
        handOver({ claim, outcome: ready.outcome, loaded: ready.loaded })
        continue
      }
      const loaded = ready.loaded
      const span = yield* publishSpan(d, loaded)
      const trace = span === undefined ? undefined : TraceContext.format(span)
      if (ready.checkHold && !(yield* holds.stillHeld(claim))) {
        handOver({ claim, outcome: outcomeOf(Exit.fail(notHeld())), loaded })
        continue
      }
      const startedAt = clock.unsafeCurrentTimeMillis()
      const at = startedAt + Duration.toMillis(ready.timeout)
      // A child of the round's fiber: a stopped round stops its publishes.
      const annotated = withDestination(annotations, d)
      outbox.annotated.set(claim, annotated)
      const send = span === undefined ? ready.send : Effect.withTracerEnabled(Effect.withParentSpan(ready.send, span), true)
      const fiber = yield* Effect.fork(annotatedFiber(send, annotated))
      inFlight += 1
      deadlines.watch(fiber, at)
      fiber.addObserver((exit) => {
        const timedOut = deadlines.forget(fiber)
        ended()
        span?.end(clock.unsafeCurrentTimeNanos(), exit)
        if (!Exit.isInterrupted(exit) || timedOut) {
          EngineMetrics.publishDuration.record(
            { platform: d.platform, outcome: Exit.isSuccess(exit) ? "success" : "failure" },
            (clock.unsafeCurrentTimeMillis() - startedAt) / 1000
          )
        }
        if (Exit.isFailure(exit) && Exit.isInterrupted(exit)) {
          if (timedOut) {
            const timeout = new PublishError({
              kind: "transient",
              message: `The platform did not answer within ${Duration.format(ready.timeout)}`
            })
            handOver({ claim, outcome: outcomeOf(Exit.fail(timeout)), loaded, ...(trace === undefined ? {} : { trace }) })
          } else {
            // The round itself was stopped: nothing is recorded, the lease resolves the claim.
            holds.release(claim)
            settle(outbox, claim, "lost")
            publishEnded(outbox)
            wakeRecorderNow(outbox)
          }
          return
        }
        handOver({ claim, outcome: outcomeOf(exit), loaded, ...(trace === undefined ? {} : { trace }) })
      })
    }
  })

/**
 * The span of one publish, child of the span that created the post (`Post.traceParent`), so that the
 * platform's calls (client spans of the HTTP client) join the creating request's trace; made, and its
 * publish traced, even where the loop itself is not (its polling would flood a trace backend). None
 * for a post created while nothing was traced: a span per publish would then be made for no one.
 */
const publishSpan = (d: Destination, loaded: Loaded): Effect.Effect<Tracer.Span | undefined> => {
  const stored = Option.isSome(loaded.post) ? loaded.post.value.traceParent : Option.none()
  const parent = Option.flatMap(stored, TraceContext.parse)
  if (Option.isNone(parent)) return Effect.succeed(undefined)
  return Effect.withTracerEnabled(
    Effect.makeSpan("Dispatcher.publish", {
      parent: parent.value,
      kind: "internal",
      captureStackTrace: false,
      attributes: {
        "herald.platform": d.platform,
        "herald.post_id": d.postId,
        "herald.destination_id": d.id,
        "herald.attempt": d.attempts
      }
    }),
    true
  )
}

/**
 * Records a round's outcomes as they arrive, many per transaction when many are waiting (one
 * transaction's fixed cost shared by the batch), one at a time otherwise; then logs each outcome and
 * starts the follow-ups of each published one (in `scope`, joined by the round). A batch that fails
 * (e.g. a deadlock the database broke) is recorded again one outcome at a time.
 */
const recordRound = (
  outbox: Outbox,
  config: Resolved,
  holds: Holds,
  followUps: Array<Fiber.RuntimeFiber<void>>,
  claimsFirst: ClaimsFirst.ClaimsFirst
) =>
  Effect.gen(function*() {
    const maxBatch = config.batchSize
    while (outbox.remaining > 0) {
      if (outbox.waiting.length === 0) {
        const wake = yield* Deferred.make<void>()
        // Checked and armed in one step: a hand-over cannot slip between them unseen.
        const armed = yield* Effect.sync(() => {
          if (outbox.waiting.length > 0 || outbox.remaining === 0) return false
          outbox.wake = wake
          return true
        })
        if (armed) yield* Deferred.await(wake)
        continue
      }
      // A claim of the loop under way goes first: its batch starts publishing sooner, and what
      // arrives meanwhile shares this transaction.
      yield* claimsFirst.clear
      // Publishes that ended together finish their own steps before they hand over: give them the
      // turn (twice in a row with nothing new means none is coming) so they share this transaction.
      let idle = 0
      while (outbox.waiting.length < Math.min(maxBatch, outbox.remaining) && idle < 2) {
        const before = outbox.waiting.length
        yield* Effect.yieldNow()
        idle = outbox.waiting.length === before ? idle + 1 : 0
      }
      const items = outbox.waiting.splice(0, maxBatch)
      const exits = yield* recordAll(items).pipe(
        Effect.map((r): ReadonlyArray<Exit.Exit<Recorded, unknown>> => r.map(Exit.succeed)),
        Effect.catchAllCause(() => Effect.forEach(items, (p) => Effect.exit(recordWithRetry(p.claim, p.outcome, p.loaded))))
      )
      // A line below the minimum level is not written: it is not built either (its annotations cost).
      const quietInfo = LogLevel.lessThan(LogLevel.Info, yield* FiberRef.get(FiberRef.currentMinimumLogLevel))
      // Each outcome's line carries its destination's annotations, written over the previous member's
      // and restored once after the batch, not written and restored around every line (`annotatedFiber`).
      const annotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
      yield* Effect.ensuring(
        Effect.gen(function*() {
          for (let i = 0; i < items.length; i++) {
            const { claim, outcome } = items[i]!
            const exit = exits[i]!
            holds.release(claim)
            if (Exit.isFailure(exit)) {
              settle(outbox, claim, "lost")
              yield* Effect.annotateLogs(recordFailed(exit.cause), logAnnotations(claim.destination))
              continue
            }
            const recorded = exit.value
            settle(outbox, claim, recorded)
            const annotated = outbox.annotated.get(claim)
            if (annotated !== undefined) outbox.annotated.delete(claim)
            if (!(quietInfo && recorded === "published")) {
              yield* FiberRef.set(
                FiberRef.currentLogAnnotations,
                annotated !== undefined && annotations === outbox.annotationsBase
                  ? annotated
                  : withDestination(annotations, claim.destination)
              )
              yield* logOutcome(recorded, outcome)
            }
            if (recorded === "published" && outcome._tag === "Published" && outcome.result.followUps !== undefined) {
              followUps.push(
                yield* Effect.forkDaemon(
                  Effect.annotateLogs(runFollowUps(claim, config, outcome.result), logAnnotations(claim.destination))
                )
              )
            }
          }
        }),
        FiberRef.set(FiberRef.currentLogAnnotations, annotations)
      )
    }
  })

/**
 * One round: resolves expired leases, claims up to a batch of due destinations and publishes them
 * (concurrently, bounded), recording each outcome with its events.
 */
export const runOnce = (options: Options, claimLimit?: number) => round(options, claimLimit)

/** What a round claimed, known before its publishes end. */
interface Claimed {
  readonly limit: number
  readonly claimed: number
  readonly expired: number
}

const noneAbandoned = { takenOver: 0, resolved: 0, found: 0, absent: 0 }

/** How a round of `run` tells its loop where it is, and gives way to the loop's next claim. */
interface InLoop {
  /**
   * Completed once the round's claim has answered, committed or, where claims overlap, not yet (none:
   * the round failed first).
   */
  readonly onClaimed: Deferred.Deferred<Option.Option<Claimed>>
  /** Completed once every publish of the round has ended (or the round ended without them). */
  readonly published: Deferred.Deferred<void>
  readonly claimsFirst: ClaimsFirst.ClaimsFirst
  /**
   * Ends this round's claim (`ClaimsFirst.begin`, called by the loop before the round starts, so
   * that no recorder slips in between two rounds' claims): from the sweep to the reads of the
   * claimed batch's posts and accounts; ended at the latest when the round ends.
   */
  readonly claimed: () => void
}

const round = (options: Options, claimLimit?: number, inLoop?: InLoop) =>
  Effect.gen(function*() {
    const config = resolve(options)
    const limit = Math.min(config.claimSize.max, Math.max(1, claimLimit ?? config.claimSize.min))
    const claimed = inLoop?.claimed ?? (() => {})
    const dispatch = yield* DispatchStore
    const body = Effect.gen(function*() {
      // The loop's rounds never settle abandoned claims themselves: its own sweep (`sweepLoop`) does,
      // beside them, so that settling a dead process's claims never holds up new work.
      const abandoned = inLoop === undefined ? yield* resolveAbandoned(config) : noneAbandoned
      const toLoop = (claimed: number) =>
        inLoop === undefined
          ? Effect.void
          : Effect.asVoid(Deferred.succeed(inLoop.onClaimed, Option.some({ limit, claimed, expired: abandoned.resolved })))
      // Where claims overlap (Postgres), the loop's next claim begins as soon as this one's statement
      // has answered, while this transaction still writes its events and commits (its rows stay
      // locked, so the next claim passes them by); elsewhere once this claim has committed.
      const claims = yield* claimBatch(config, limit, dispatch.claimsOverlap ? toLoop : () => Effect.void)
      yield* toLoop(claims.length)
      if (claims.length === 0) claimed()
      const results = claims.length === 0
        ? []
        : yield* publishAll(claims, config, inLoop?.claimsFirst ?? ClaimsFirst.none, claimed, () => {
          if (inLoop !== undefined) Deferred.unsafeDone(inLoop.published, Exit.void)
        })
      return { abandoned, claims, results }
    })
    const { abandoned, claims, results } = yield* Effect.ensuring(body, Effect.sync(claimed))
    const counts: Record<Recorded, number> = { published: 0, requeued: 0, failed: 0, lost: 0 }
    for (const r of results) counts[r] += 1
    const summary: RoundSummary = {
      limit,
      claimed: claims.length,
      published: counts.published,
      requeued: counts.requeued,
      failed: counts.failed,
      expired: abandoned.resolved,
      settledFound: abandoned.found,
      settledAbsent: abandoned.absent,
      lost: counts.lost
    }
    return summary
  }).pipe(Effect.withSpan("Dispatcher.runOnce"))

/** Publishes a round's claims and records their outcomes; what became of each, in claim order. */
const publishAll = (
  claims: ReadonlyArray<Claim>,
  config: Resolved,
  claimsFirst: ClaimsFirst.ClaimsFirst,
  onRead: () => void,
  onPublished: () => void
) =>
  Effect.scoped(Effect.gen(function*() {
    const services: RoundServices = {
      posts: yield* PostStore,
      accounts: yield* AccountStore,
      platforms: yield* Platforms
    }
    const outbox = makeOutbox(claims, onPublished)
    const followUps: Array<Fiber.RuntimeFiber<void>> = []
    const holds = yield* makeHolds(claims, config)
    const preloaded = yield* preloadPosts(claims)
    // Follow-ups outlive the recorder, never the round: a stopped round still waits for them.
    yield* Effect.addFinalizer(() => Fiber.interruptAll(followUps))
    const deadlines = yield* makeDeadlines
    const recording = yield* Effect.forkScoped(recordRound(outbox, config, holds, followUps, claimsFirst))
    yield* startPublishes(claims, config, services, outbox, holds, preloaded, deadlines, onRead)
    yield* Fiber.join(recording)
    yield* Fiber.awaitAll(followUps)
    return outbox.results.map((r) => r ?? "lost")
  }))

/**
 * While a backlog drains the loop claims the next round as soon as the last one has claimed, while
 * earlier rounds publish and record. At most this many rounds have publishes in flight (each round
 * bounds its own by `concurrency`): a round's slot frees when its publishes end, not when they are
 * recorded.
 */
const roundsPublishing = 4

/**
 * Claimed destinations not yet recorded, in batches of `batchSize`: the bound on outcomes held in
 * memory while claims go ahead of recording (`ClaimsFirst`); 16,000 at the default batch size, about
 * 20 MB. Their leases are renewed by their rounds until recorded.
 */
const unrecordedBatches = 32

/** A round of the loop in flight. */
interface Running {
  readonly fiber: Fiber.RuntimeFiber<Option.Option<RoundSummary>>
  readonly published: Deferred.Deferred<void>
  /** What it claimed (its limit until known). */
  claimed: number
}

/** How long to sleep before the next round: until the next due instant, at most the poll interval. */
const nextWait = (config: Resolved) =>
  Effect.gen(function*() {
    const dispatch = yield* DispatchStore
    const next = yield* dispatch.nextDueAt
    if (Option.isNone(next)) return config.pollInterval
    const now = yield* DateTime.now
    const untilDue = DateTime.toEpochMillis(next.value) - DateTime.toEpochMillis(now)
    // Due already but not claimable: another process holds it in an open claim. Back off briefly.
    if (untilDue <= 0) return Duration.millis(10)
    return Duration.min(Duration.millis(untilDue), config.pollInterval)
  })

/**
 * Every poll interval: takes over and resolves abandoned destinations (`resolveAbandoned`), waking the
 * loop when some were re-queued. Each sweep finishes once started, so stopping never strands a take-over.
 */
const sweepLoop = (config: Resolved) =>
  Effect.forever(
    Effect.uninterruptible(
      resolveAbandoned(config).pipe(
        Effect.tap((tally) => (tally.absent > 0 ? poke : Effect.void)),
        Effect.map((tally) => tally.takenOver >= Math.min(settleBatch, config.batchSize)),
        Effect.catchAllCause((cause) =>
          Effect.logError("Dispatcher: sweep of dead processes failed", cause).pipe(Effect.as(false))
        )
      )
    ).pipe(
      // A full batch: a dead process held more; the next batch at once, else the next poll.
      Effect.flatMap((more) => (more ? Effect.yieldNow() : Effect.sleep(config.pollInterval)))
    )
  )

/**
 * Runs rounds forever: straight on while there is more due work, otherwise asleep until the next due
 * instant, a poke from `DispatchSignal`, or the poll interval, whichever comes first.
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const config = resolve(options)
    const signal = yield* Effect.serviceOption(DispatchSignal)
    const wake = Option.match(signal, { onNone: () => Effect.never, onSome: (s) => s.take })
    // Dead processes are swept on their own schedule too, not only between rounds: a round may take as
    // long as its slowest publish, and the bound on noticing a death must not depend on it.
    yield* Effect.fork(sweepLoop(config))
    let limit = config.claimSize.min
    const claimsFirst = ClaimsFirst.make()
    // Rounds run in their own fibers that nobody interrupts: stopping the loop waits for every round
    // in flight, so no claimed destination is abandoned to its lease (each publish is bounded by its
    // timeout). Only a killed process leaves leases to run out.
    const rounds: Array<Running> = []
    const unrecorded = () => rounds.reduce((n, r) => n + (r.fiber.unsafePoll() === null ? r.claimed : 0), 0)
    const loop = Effect.gen(function*() {
      while (true) {
        if (Option.isSome(signal)) yield* signal.value.clear
        const claimed = yield* Deferred.make<Option.Option<Claimed>>()
        const published = yield* Deferred.make<void>()
        // Recorders of earlier rounds wait from here to the reads of this round's batch; the claim is
        // marked and its round forked in one step, so that a stopped loop cannot leave it marked.
        const fiber = yield* Effect.uninterruptibleMask((restore) =>
          Effect.suspend(() => {
            const claiming = claimsFirst.begin()
            const inLoop: InLoop = { onClaimed: claimed, published, claimsFirst, claimed: claiming }
            return Effect.forkDaemon(restore(round(options, limit, inLoop)).pipe(
              Effect.map(Option.some),
              Effect.catchAllCause((cause) =>
                Effect.logError("Dispatcher: round failed", cause).pipe(Effect.as(Option.none<RoundSummary>()))
              ),
              Effect.ensuring(Effect.sync(claiming)),
              Effect.ensuring(Effect.zipRight(Deferred.succeed(claimed, Option.none()), Deferred.succeed(published, undefined)))
            ))
          })
        )
        const running: Running = { fiber, published, claimed: limit }
        rounds.push(running)
        // A backlog: the next round claims as soon as this one has claimed (claims come fast when many
        // are due at once), within the bounds above.
        const early = yield* Deferred.await(claimed)
        if (Option.isSome(early) && (ClaimSize.full(early.value.limit, early.value.claimed) ||
          early.value.expired >= config.batchSize)) {
          running.claimed = early.value.claimed
          limit = ClaimSize.next(early.value.limit, early.value.claimed, config.claimSize)
          while (true) {
            const publishing = yield* Effect.filter(rounds, (r) => Effect.map(Deferred.isDone(r.published), (done) => !done))
            if (publishing.length < roundsPublishing) break
            yield* Deferred.await(publishing[0]!.published)
          }
          while (rounds.length > 0 && (rounds[0]!.fiber.unsafePoll() !== null || unrecorded() + limit > config.batchSize * unrecordedBatches)) {
            yield* Fiber.await(rounds[0]!.fiber)
            rounds.shift()
          }
          continue
        }
        // Otherwise every round in flight ends before the loop sleeps, as one round did before.
        const results = yield* Effect.forEach(rounds, (r) => Fiber.join(r.fiber))
        rounds.length = 0
        const last = results[results.length - 1]!
        if (Option.isNone(last)) {
          limit = config.claimSize.min
          yield* Effect.raceFirst(Effect.sleep(config.pollInterval), wake)
          continue
        }
        limit = ClaimSize.next(last.value.limit, last.value.claimed, config.claimSize)
        if (ClaimSize.full(last.value.limit, last.value.claimed) || last.value.expired >= config.batchSize) continue
        const wait = yield* nextWait(config).pipe(Effect.orElseSucceed(() => config.pollInterval))
        yield* Effect.raceFirst(Effect.sleep(wait), wake)
      }
    })
    return yield* loop.pipe(Effect.onInterrupt(() => Effect.suspend(() => Fiber.awaitAll(rounds.map((r) => r.fiber)))))
  }).pipe(Effect.withSpan("Dispatcher.run"))

// ---------------------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------------------

/**
 * How late the oldest due destination is: zero when nothing queued is past due. `GET /health` reports
 * it; a growing value means the workers do not keep up (or none runs).
 */
export const oldestDueLag: Effect.Effect<Duration.Duration, PersistenceError, DispatchStore> = Effect.gen(
  function*() {
    const dispatch = yield* DispatchStore
    const next = yield* dispatch.nextDueAt
    if (Option.isNone(next)) return Duration.zero
    const now = yield* DateTime.now
    const late = DateTime.toEpochMillis(now) - DateTime.toEpochMillis(next.value)
    return late > 0 ? Duration.millis(late) : Duration.zero
  }
)
