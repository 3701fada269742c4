/**
 * Delivering events: one signed attempt over the guarded transport, the test delivery, and the
 * delivery loop (claims shared fairly across organizations, retries with back-off, a subscription
 * disabled after 20 dead deliveries in a row).
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import * as TraceContext from "../kernel/TraceContext.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import type { OrganizationId } from "../kernel/Ids.js"
import * as Processes from "../kernel/Processes.js"
import { DeliveryAttempt, WebhookSubscription } from "./Webhook.js"
import * as WebhookActivity from "./WebhookActivity.js"
import * as WebhookSignature from "./WebhookSignature.js"
import { type ClaimedDelivery, type DeliveryOutcome, type SubscriptionClaim, WebhookStore } from "./WebhookStore.js"
import { type WebhookResponse, type WebhookSendError, WebhookTransport } from "./WebhookTransport.js"
import { defaultTimeout, found, ManagerInput, managerOf } from "./WebhookSubscriptions.js"

export const isSuccess = (status: number): boolean => status >= 200 && status < 300

interface Sent {
  readonly attemptId: string
  readonly result: Either.Either<WebhookResponse, WebhookSendError>
}

/** Signs and sends one attempt of the event to the subscription. */
const send = (
  subscription: WebhookSubscription,
  event: WebhookSignature.PayloadEvent,
  attempt: number,
  timeout: Duration.Duration
) =>
  Effect.gen(function*() {
    const attemptId = yield* (yield* IdGenerator).uuid
    const body = WebhookSignature.buildPayload(event)
    const now = yield* DateTime.now
    const headers = yield* WebhookSignature.headers({
      secret: subscription.secret,
      event: { id: event.id, type: event.type },
      deliveryId: attemptId,
      attempt,
      timestamp: Math.floor(DateTime.toEpochMillis(now) / 1000),
      body
    })
    const transport = yield* WebhookTransport
    const result = yield* Effect.either(transport.send({ url: subscription.url, headers, body, timeout }))
    const sent: Sent = { attemptId, result }
    return sent
  })

/** What an attempt's answer means, in words, for the deliveries listing and the test endpoint. */
export const describe = (result: Either.Either<WebhookResponse, WebhookSendError>, timeout: Duration.Duration) =>
  Either.match(result, {
    onLeft: (error) => `No answer: ${error.message}`,
    onRight: (response) =>
      isSuccess(response.status)
        ? `The receiver answered ${response.status} in ${response.durationMs} ms`
        : `The receiver answered ${response.status}; only a 2xx answer within ${
          Duration.format(timeout)
        } counts as delivered`
  })

// ---------------------------------------------------------------------------------------------------
// Test delivery
// ---------------------------------------------------------------------------------------------------

export interface TestResult {
  readonly ok: boolean
  /** The receiver's HTTP status; None when it did not answer. */
  readonly status: Option.Option<number>
  readonly durationMs: number
  readonly message: string
}

/**
 * Sends one signed test delivery now, whatever the webhook's state. Its event is the webhook's first
 * subscribed event with `data.test: true`; a fresh event id; not recorded, not retried, not counted.
 */
export const test = (input: ManagerInput, id: string, options: { readonly timeout?: Duration.DurationInput } = {}) =>
  Effect.gen(function*() {
    const manager = managerOf(input)
    const organizationId = manager.organizationId
    const { subscription } = yield* found(manager, id)
    const timeout = Duration.decode(options.timeout ?? defaultTimeout)
    const event: WebhookSignature.PayloadEvent = {
      id: yield* (yield* IdGenerator).uuid,
      type: subscription.events[0] ?? "post.published",
      organizationId,
      createdAt: yield* DateTime.now,
      data: {
        test: true,
        webhook_id: subscription.id,
        message: "A test delivery from POST /webhooks/{id}/test; no post or account changed"
      }
    }
    const { result } = yield* send(subscription, event, 1, timeout)
    const out: TestResult = Either.match(result, {
      onLeft: (error) => ({
        ok: false,
        status: Option.none(),
        durationMs: Math.round(error.durationMs),
        message: describe(result, timeout)
      }),
      onRight: (response) => ({
        ok: isSuccess(response.status),
        status: Option.some(response.status),
        durationMs: Math.round(response.durationMs),
        message: describe(result, timeout)
      })
    })
    return out
  }).pipe(Effect.withSpan("Webhooks.test"))

// ---------------------------------------------------------------------------------------------------
// Delivery
// ---------------------------------------------------------------------------------------------------

export interface DeliveryOptions {
  /** Subscriptions claimed per round, and in flight at once in `run`; default 16. */
  readonly subscriptions?: number
  /**
   * Subscriptions of one organization in flight at once (of `subscriptions`); default a quarter of
   * them (4 of 16), so that one organization's hanging receivers leave the other slots to others.
   */
  readonly perOrganization?: number
  /** Deliveries of one subscription claimed at once (sent one after another); default 10. */
  readonly perSubscription?: number
  /**
   * How long one claim keeps its slot: no further delivery of it starts once it has held the slot
   * this long (the rest stay due, in order, for the next claim); default the timeout. A hanging
   * receiver then holds a slot for one timeout, not one per claimed delivery.
   */
  readonly holdFor?: Duration.DurationInput
  /** A receiver's time to answer; default 10 seconds (the transport also caps it). */
  readonly timeout?: Duration.DurationInput
  /** The claim's lease; default long enough for every claimed delivery to time out, plus a minute. */
  readonly leaseFor?: Duration.DurationInput
  /** The longest `run` sleeps without looking for due deliveries; default 1 second. */
  readonly pollInterval?: Duration.DurationInput
  /**
   * This process's id in the process table (`Processes`): claims name it, and claims held by a process
   * that is not alive are taken over at once instead of when their lease runs out. Without it, only an
   * expired lease frees a claim.
   */
  readonly processId?: string
  /** A process whose heartbeat is older than this is dead; default `Processes.deadAfter` (20 s). */
  readonly deadAfter?: Duration.DurationInput
}

interface Resolved {
  readonly subscriptions: number
  readonly perOrganization: number
  readonly perSubscription: number
  readonly holdFor: Duration.Duration
  readonly timeout: Duration.Duration
  readonly leaseFor: Duration.Duration
  readonly pollInterval: Duration.Duration
  readonly processId: string | undefined
  readonly deadAfter: Duration.Duration
}

/** Time kept free at the end of a lease to record the last outcome. */
const leaseMargin = Duration.seconds(5)

const resolve = (options: DeliveryOptions): Resolved => {
  const perSubscription = Math.max(1, Math.trunc(options.perSubscription ?? 10))
  const timeout = Duration.decode(options.timeout ?? defaultTimeout)
  const needed = Duration.sum(
    Duration.times(Duration.sum(timeout, leaseMargin), perSubscription),
    Duration.minutes(1)
  )
  const subscriptions = Math.max(1, Math.trunc(options.subscriptions ?? 16))
  return {
    subscriptions,
    perOrganization: Math.max(1, Math.trunc(options.perOrganization ?? Math.ceil(subscriptions / 4))),
    perSubscription,
    holdFor: options.holdFor === undefined ? timeout : Duration.decode(options.holdFor),
    timeout,
    leaseFor: options.leaseFor === undefined ? needed : Duration.decode(options.leaseFor),
    pollInterval: Duration.decode(options.pollInterval ?? "1 second"),
    processId: options.processId,
    deadAfter: Duration.decode(options.deadAfter ?? Processes.deadAfter)
  }
}

export interface RoundSummary {
  /** Subscriptions claimed. */
  readonly subscriptions: number
  readonly attempted: number
  readonly delivered: number
  /** Failed attempts with another attempt due later. */
  readonly retrying: number
  readonly dead: number
  /** Attempts whose outcome could not be written (claim lost); they will be sent again. */
  readonly lost: number
}

type Recorded = "delivered" | "retrying" | "dead" | "lost"

/** The outcome of attempt `attempt` ending at `at`. */
export const outcomeOf = (ok: boolean, attempt: number, at: DateTime.Utc): DeliveryOutcome => {
  if (ok) return { _tag: "Delivered" }
  return Option.match(WebhookActivity.nextAttemptDelay(attempt), {
    onNone: (): DeliveryOutcome => ({ _tag: "Dead" }),
    onSome: (delay): DeliveryOutcome => ({ _tag: "Retry", at: DateTime.addDuration(at, delay) })
  })
}

/**
 * One delivery attempt as a child of the span that caused its event (`Event.traceParent`), so that a
 * post's `post.published` delivery joins the trace of the request that created the post; traced even
 * where the delivery loop is not. An event caused by nothing traced gets no span of its own.
 */
const deliverySpan =
  (claim: SubscriptionClaim, claimed: ClaimedDelivery) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const parent = Option.flatMap(claimed.event.traceParent, TraceContext.parse)
    if (Option.isNone(parent)) return self
    return Effect.withTracerEnabled(
      Effect.withSpan(self, "Webhooks.deliver", {
        parent: parent.value,
        captureStackTrace: false,
        attributes: {
          "herald.webhook_id": claim.subscription.id,
          "herald.event_id": claimed.event.id,
          "herald.event_type": claimed.event.type,
          "herald.attempt": claimed.attempt
        }
      }),
      true
    )
  }

const attemptOne = (claim: SubscriptionClaim, claimed: ClaimedDelivery, config: Resolved) =>
  Effect.gen(function*() {
    const store = yield* WebhookStore
    const { attemptId, result } = yield* send(claim.subscription, claimed.event, claimed.attempt, config.timeout)
    const attemptedAt = yield* DateTime.now
    const ok = Either.isRight(result) && isSuccess(result.right.status)
    const outcome = outcomeOf(ok, claimed.attempt, attemptedAt)
    const record = new DeliveryAttempt({
      id: attemptId,
      deliveryId: claimed.delivery.id,
      subscriptionId: claim.subscription.id,
      eventId: claimed.event.id,
      eventType: claimed.event.type,
      attempt: claimed.attempt,
      ok,
      statusCode: Either.match(result, { onLeft: () => Option.none(), onRight: (r) => Option.some(r.status) }),
      durationMs: Math.max(
        0,
        Math.round(Either.match(result, { onLeft: (e) => e.durationMs, onRight: (r) => r.durationMs }))
      ),
      responseBody: Either.match(result, { onLeft: () => "", onRight: (r) => r.body }),
      error: ok ? Option.none() : Option.some(describe(result, config.timeout)),
      attemptedAt
    })
    const written = yield* store.complete(claim, claimed, outcome, record).pipe(
      Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") })
    )
    const recorded: Recorded = written._tag === "Lost"
      ? "lost"
      : outcome._tag === "Delivered"
      ? "delivered"
      : outcome._tag === "Retry"
      ? "retrying"
      : "dead"
    EngineMetrics.webhookDeliveries.record({ outcome: recorded, attempt: String(claimed.attempt) }, 1)
    EngineMetrics.webhookDeliveryDuration.record({ outcome: ok ? "success" : "failure" }, record.durationMs / 1000)
    yield* (ok ? Effect.logDebug("Webhooks: delivered") : Effect.logInfo("Webhooks: delivery attempt failed")).pipe(
      Effect.annotateLogs({
        webhook_id: claim.subscription.id,
        event: claimed.event.type,
        event_id: claimed.event.id,
        attempt: claimed.attempt,
        status: Either.match(result, { onLeft: (e) => e.reason, onRight: (r) => String(r.status) }),
        outcome: recorded
      })
    )
    return { recorded, stillActive: written._tag === "Recorded" && written.isActive }
  }).pipe(deliverySpan(claim, claimed))

/**
 * Sends a claimed subscription's deliveries one after another, in event order, while its lease leaves
 * room for another attempt and it has held its slot less than `holdFor`; stops early when the
 * subscription is disabled or the claim is lost. What it did not send stays due.
 */
const deliverClaim = (claim: SubscriptionClaim, config: Resolved) =>
  Effect.gen(function*() {
    const results: Array<Recorded> = []
    const heldUntil = DateTime.addDuration(yield* DateTime.now, config.holdFor)
    for (const [i, claimed] of claim.deliveries.entries()) {
      const now = yield* DateTime.now
      const latestStart = DateTime.subtractDuration(claim.leaseExpiresAt, Duration.sum(config.timeout, leaseMargin))
      if (DateTime.greaterThan(now, latestStart)) break
      if (i > 0 && DateTime.greaterThanOrEqualTo(now, heldUntil)) break
      const { recorded, stillActive } = yield* attemptOne(claim, claimed, config)
      results.push(recorded)
      if (recorded === "lost" || !stillActive) break
    }
    return results
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.logError("Webhooks: could not record a delivery attempt; it stays due", cause).pipe(
        Effect.as([] as Array<Recorded>)
      )
    ),
    Effect.ensuring(Effect.flatMap(WebhookStore, (store) => store.release(claim)).pipe(Effect.ignore))
  )

const summarize = (claimed: number, results: ReadonlyArray<Recorded>): RoundSummary => {
  const count = (r: Recorded) => results.filter((x) => x === r).length
  return {
    subscriptions: claimed,
    attempted: results.length,
    delivered: count("delivered"),
    retrying: count("retrying"),
    dead: count("dead"),
    lost: count("lost")
  }
}

const claim = (config: Resolved, subscriptions: number, held: ReadonlyMap<OrganizationId, number> = new Map()) =>
  Effect.gen(function*() {
    const store = yield* WebhookStore
    const now = yield* DateTime.now
    return yield* store.claimDue({
      now,
      subscriptions,
      perSubscription: config.perSubscription,
      perOrganization: config.perOrganization,
      held,
      leaseFor: config.leaseFor,
      ...(config.processId === undefined
        ? {}
        : { holder: { processId: config.processId, deadBefore: DateTime.subtractDuration(now, config.deadAfter) } })
    })
  })

/**
 * One round: claims due deliveries (up to `subscriptions` subscriptions, at most `perOrganization` of
 * one organization) and sends them, subscriptions concurrently, each subscription's deliveries in
 * event order; returns once all are recorded.
 */
export const deliverDue = (options: DeliveryOptions = {}) =>
  Effect.gen(function*() {
    const config = resolve(options)
    const claims = yield* claim(config, config.subscriptions)
    const results = yield* Effect.forEach(claims, (c) => deliverClaim(c, config), { concurrency: "unbounded" })
    return summarize(claims.length, results.flat())
  }).pipe(Effect.withSpan("Webhooks.deliverDue"))

/**
 * Delivers forever. Each claimed subscription is worked in its own fiber, up to `subscriptions` at once,
 * and the loop claims more as soon as one finishes: a slow or hanging receiver holds only its own
 * fiber, never the deliveries of others. Organizations share the slots: at most `perOrganization` of
 * them hold one organization's subscriptions, and a freed slot goes to the organization with the
 * fewest here, so one organization's hanging receivers never keep another's deliveries waiting.
 * Interrupting the loop interrupts the attempts in flight; their deliveries stay due (not counted)
 * and are sent again.
 */
export const run = (options: DeliveryOptions = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const config = resolve(options)
    const store = yield* WebhookStore
    const freed = yield* Queue.sliding<void>(1)
    let inFlight = 0
    const held = new Map<OrganizationId, number>()
    const hold = (organizationId: OrganizationId, by: number) => {
      const n = (held.get(organizationId) ?? 0) + by
      if (n > 0) held.set(organizationId, n)
      else held.delete(organizationId)
    }
    while (true) {
      const room = config.subscriptions - inFlight
      let claimed = 0
      if (room > 0) {
        const claims = yield* claim(config, room, held).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logError("Webhooks: claiming deliveries failed", cause).pipe(
              Effect.as([] as ReadonlyArray<SubscriptionClaim>)
            )
          )
        )
        claimed = claims.length
        for (const c of claims) {
          inFlight += 1
          hold(c.subscription.organizationId, 1)
          yield* Effect.forkScoped(
            deliverClaim(c, config).pipe(
              Effect.ensuring(Effect.suspend(() => {
                inFlight -= 1
                hold(c.subscription.organizationId, -1)
                return Queue.offer(freed, undefined)
              }))
            )
          )
        }
      }
      let wait = config.pollInterval
      if (room - claimed > 0) {
        const next = yield* store.nextDueAt.pipe(Effect.orElseSucceed(() => Option.none<DateTime.Utc>()))
        if (Option.isSome(next)) {
          const untilDue = DateTime.toEpochMillis(next.value) - DateTime.toEpochMillis(yield* DateTime.now)
          // Due already yet not claimed: its subscription is held elsewhere, or its organization has its
          // share of this process's slots; a freed slot wakes the loop, else the poll interval does.
          if (untilDue > 0) wait = Duration.min(Duration.millis(Math.max(10, untilDue)), config.pollInterval)
        }
      }
      yield* Effect.raceFirst(Effect.sleep(wait), Queue.take(freed))
    }
  })).pipe(Effect.withSpan("Webhooks.run"))
