/**
 * Publishing one claim: the platform client's call under the publish deadline, the circuit breaker,
 * the auth retry, and the outcome it comes to.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "../accounts/AccountStore.js"
import { type Claim } from "./DispatchStore.js"
import type { PersistenceError } from "../kernel/Errors.js"
import { type PlatformClient, Platforms, PublishError, type PublishResult } from "../platforms/Platforms.js"
import type { Post } from "../domain/Post.js"
import { type PostCount, PostStore } from "../posts/PostStore.js"
import { Resolved } from "./DispatchOptions.js"
import { Outcome } from "./DispatchOutcome.js"
import { buildRequest, failure, localFailure, requestWithoutMedia } from "./PublishRequests.js"
import { Holds } from "./ClaimBatch.js"

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
export type AccountCache = Map<string, Option.Option<SocialAccount>>

/**
 * The posts of a round's claims, read in one go (`PostStore.findMany`); `undefined` when that read
 * failed, and each claim reads its own post then.
 */
export type Preloaded = ReadonlyMap<string, PostCount> | undefined

export const preloadPosts = (claims: ReadonlyArray<Claim>) =>
  Effect.flatMap(PostStore, (posts) => posts.findMany(claims.map((c) => c.destination.postId))).pipe(
    Effect.map((records): Preloaded => new Map(records.map((r) => [r.post.id, r]))),
    Effect.catchAll((e) =>
      Effect.as(
        Effect.logWarning("Dispatcher: reading the round's posts failed; reading them one by one", e),
        undefined
      )
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
export interface Deadlines {
  readonly watch: (fiber: Fiber.RuntimeFiber<unknown, unknown>, at: number) => void
  /** Stops watching `fiber`; true when the watchdog interrupted it. */
  readonly forget: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => boolean
}

export const makeDeadlines = Effect.gen(function*() {
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
export interface RoundServices {
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

export const notHeld = () =>
  new PublishError({
    kind: "transient",
    message: "This worker could not keep its claim fresh (lease renewal or heartbeat failing), so the " +
      "post was not sent; it will be tried again"
  })

export const deletedPost: Loaded = { post: Option.none(), destinationCount: 1 }

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
export const prepareClaim = (
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
      if (request !== undefined) {
        return { _tag: "Send", send: publish(request), timeout, checkHold: true, loaded: withAccount }
      }
      const send = Effect.flatMap(
        buildRequest(post, d, account.value, d.attempts),
        (request) => Effect.flatMap(holds.stillHeld(claim), (held) => held ? publish(request) : Effect.fail(notHeld()))
      )
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

export const outcomeOf = (exit: Exit.Exit<PublishResult, PublishError | PersistenceError>): Outcome => {
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
