/**
 * Rounds and the loop: a round claims, publishes and records; `run` keeps a few rounds in flight, wakes
 * on the due signal or the next due instant, and sweeps abandoned claims beside them.
 */
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { AccountStore } from "../accounts/AccountStore.js"
import * as ClaimSize from "./ClaimSize.js"
import * as ClaimsFirst from "./ClaimsFirst.js"
import { type Claim, DispatchStore } from "./DispatchStore.js"
import { Platforms } from "../platforms/Platforms.js"
import { PostStore } from "../posts/PostStore.js"
import { DispatchSignal, poke } from "../kernel/DispatchSignal.js"
import { Options, resolve, Resolved } from "./DispatchOptions.js"
import { Recorded, RoundSummary } from "./DispatchOutcome.js"
import { makeDeadlines, preloadPosts, RoundServices } from "./PublishClaim.js"
import { recordAll } from "./RecordOutcome.js"
import { recordWithRetry, resolveAbandoned, settleBatch } from "./AbandonedClaims.js"
import { claimBatch, Holds, makeHolds } from "./ClaimBatch.js"
import { logAnnotations, logOutcome, withDestination } from "./DispatchLogs.js"
import { makeOutbox, Outbox, recordFailed, runFollowUps, settle, startPublishes } from "./PublishRound.js"

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
        Effect.catchAllCause(() =>
          Effect.forEach(items, (p) => Effect.exit(recordWithRetry(p.claim, p.outcome, p.loaded)))
        )
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

export const round = (options: Options, claimLimit?: number, inLoop?: InLoop) =>
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
          : Effect.asVoid(
            Deferred.succeed(inLoop.onClaimed, Option.some({ limit, claimed, expired: abandoned.resolved }))
          )
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
            return Effect.forkDaemon(
              restore(round(options, limit, inLoop)).pipe(
                Effect.map(Option.some),
                Effect.catchAllCause((cause) =>
                  Effect.logError("Dispatcher: round failed", cause).pipe(Effect.as(Option.none<RoundSummary>()))
                ),
                Effect.ensuring(Effect.sync(claiming)),
                Effect.ensuring(
                  Effect.zipRight(Deferred.succeed(claimed, Option.none()), Deferred.succeed(published, undefined))
                )
              )
            )
          })
        )
        const running: Running = { fiber, published, claimed: limit }
        rounds.push(running)
        // A backlog: the next round claims as soon as this one has claimed (claims come fast when many
        // are due at once), within the bounds above.
        const early = yield* Deferred.await(claimed)
        if (
          Option.isSome(early) && (ClaimSize.full(early.value.limit, early.value.claimed) ||
            early.value.expired >= config.batchSize)
        ) {
          running.claimed = early.value.claimed
          limit = ClaimSize.next(early.value.limit, early.value.claimed, config.claimSize)
          while (true) {
            const publishing = yield* Effect.filter(rounds, (r) =>
              Effect.map(Deferred.isDone(r.published), (done) => !done))
            if (publishing.length < roundsPublishing) {
              break
            }
            yield* Deferred.await(publishing[0]!.published)
          }
          while (
            rounds.length > 0 &&
            (rounds[0]!.fiber.unsafePoll() !== null || unrecorded() + limit > config.batchSize * unrecordedBatches)
          ) {
            yield* Fiber.await(rounds[0]!.fiber)
            rounds.shift()
          }
          continue
        }
        // Otherwise every round in flight ends before the loop sleeps, as one round did before.
        const results = yield* Effect.forEach(rounds, (r) =>
          Fiber.join(r.fiber))
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
