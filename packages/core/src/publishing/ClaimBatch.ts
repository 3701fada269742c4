/**
 * Claiming a batch of due destinations and holding their leases while their publishes run (renewed in
 * the background; a claim found taken over is not sent).
 */
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { type Claim, DispatchStore } from "./DispatchStore.js"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import { EventStore } from "../webhooks/EventStore.js"
import * as Processes from "../kernel/Processes.js"
import { Transactor } from "../kernel/Transactor.js"
import { Resolved } from "./DispatchOptions.js"
import { destinationData, eventsAt } from "./DispatchEvents.js"

/**
 * The claims of a round still in flight, renewed in the background: a claim whose renewal found it
 * taken over, or whose lease ran out locally (renewals failing), is not sent.
 */
export interface Holds {
  readonly stillHeld: (claim: Claim) => Effect.Effect<boolean>
  readonly release: (claim: Claim) => void
}

export const makeHolds = (claims: ReadonlyArray<Claim>, config: Resolved) =>
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
          return Effect.map(liveness.value.lastBeatAt, (beat) =>
            beat + Duration.toMillis(config.deadAfter) - margin > now)
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
export const claimBatch = (config: Resolved, limit: number, onClaimed: (claimed: number) => Effect.Effect<void>) =>
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
