/**
 * Running a round's publishes: each claim's publish started under its span, follow-ups after the
 * recorded publish, and the outbox that hands each outcome to the recorder as it arrives.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"
import type { Destination } from "../domain/Destination.js"
import { type Claim } from "./DispatchStore.js"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import * as TraceContext from "../kernel/TraceContext.js"
import { Platforms, PublishError, type PublishResult } from "../platforms/Platforms.js"
import { Resolved } from "./DispatchOptions.js"
import { Recorded } from "./DispatchOutcome.js"
import { localFailure } from "./PublishRequests.js"
import {
  AccountCache,
  Deadlines,
  deletedPost,
  Loaded,
  notHeld,
  outcomeOf,
  Preloaded,
  prepareClaim,
  RoundServices
} from "./PublishClaim.js"
import { Pending } from "./RecordOutcome.js"
import { Holds } from "./ClaimBatch.js"
import { annotatedFiber, logAnnotations, withDestination } from "./DispatchLogs.js"

/**
 * A published destination's follow-ups (thread parts, first comment), run after `published` was
 * recorded: under their own timeout, never failing, never touching the destination again.
 */
export const runFollowUps = (claim: Claim, config: Resolved, result: PublishResult) =>
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
export interface Outbox {
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

export const makeOutbox = (claims: ReadonlyArray<Claim>, onPublished: () => void): Outbox => ({
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

export const settle = (outbox: Outbox, claim: Claim, recorded: Recorded) => {
  const i = outbox.index.get(claim.leaseToken)
  if (i !== undefined && outbox.results[i] === undefined) {
    outbox.results[i] = recorded
    outbox.remaining -= 1
  }
}

export const recordFailed = (cause: Cause.Cause<unknown>) =>
  Effect.logError("Dispatcher: could not record a publish outcome; its lease will resolve it", cause)

/**
 * Starts a round's publishes from the round's own fiber, at most `concurrency` in flight: each claim
 * is prepared in place (no fiber of its own), its publish forked into one fiber that the deadline
 * watchdog watches, and its outcome handed to the recorder by that fiber's observer when it ends. A
 * claim decided without the platform goes to the recorder at once. (A fiber per claim from
 * `Effect.forEach`, another per publish for its deadline and the generator steps between them were
 * most of the dispatcher's CPU per destination.)
 */
export const startPublishes = (
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
    const distinct = new Map(
      claims.map((c) => [`${c.destination.organizationId}:${c.destination.accountId}`, c.destination])
    )
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
      const prepared = yield* Effect.exit(
        Effect.suspend(() => prepareClaim(claim, config, services, cache, holds, preloaded))
      )
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
      const send = span === undefined
        ? ready.send
        : Effect.withTracerEnabled(Effect.withParentSpan(ready.send, span), true)
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
            handOver({
              claim,
              outcome: outcomeOf(Exit.fail(timeout)),
              loaded,
              ...(trace === undefined ? {} : { trace })
            })
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
