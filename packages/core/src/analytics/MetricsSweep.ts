/**
 * The metrics sweep: views, likes, comments, shares, impressions, saves and clicks of published
 * destinations, fetched from their platforms on a decaying schedule after publishing (by default 1 h,
 * 6 h, 24 h, 3 d and 7 d; then never again), in every process that runs the dispatcher.
 *
 * - Claims are exclusive across processes and short-leased (`MetricsStore.claimDue`), so no
 *   destination is fetched twice for one step; a process dying mid-fetch leaves it due after the lease.
 *   A fetch starts only while the lease still covers its time-out.
 * - Each round takes at most `perPlatform[p]` destinations of a platform; a `rate_limit` answer stops
 *   that platform for the round and pushes its due destinations back by the platform's delay.
 * - Destinations are fetched account by account (one account read per round); where the client has
 *   `metricsBatch`, an account's posts are fetched in one call (chunked to `metricsBatchSize`).
 * - A failed fetch leaves the counts and the destination's status alone and moves to the next step;
 *   an `auth` failure does not mark the account for reconnection (publishing does that).
 * - A step missed while no process ran is not made up: after a fetch the schedule moves to the first
 *   step still ahead.
 * - Platforms whose client has no `metrics` are never claimed.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Redacted from "effect/Redacted"
import * as EngineMetrics from "../kernel/EngineMetrics.js"
import type { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "../accounts/AccountStore.js"
import type { PersistenceError } from "../kernel/Errors.js"
import { type MetricsClaim, type MetricsCompletion, MetricsStore } from "./MetricsStore.js"
import { type Platform, platforms as allPlatforms } from "../domain/Platform.js"
import {
  type Credentials,
  type PlatformClient,
  Platforms,
  PublishError,
  type ResolvedPost
} from "../platforms/Platforms.js"

/** When metrics are fetched, after publishing. */
export const defaultSchedule: ReadonlyArray<Duration.Duration> = [
  Duration.hours(1),
  Duration.hours(6),
  Duration.hours(24),
  Duration.days(3),
  Duration.days(7)
]

/** How often a process looks for due fetches. */
export const defaultInterval: Duration.Duration = Duration.minutes(1)

/** Fetches per platform per round (per process), well inside each platform's read limits. */
export const defaultPerPlatform: Readonly<Partial<Record<Platform, number>>> = {
  x: 5,
  facebook: 10,
  instagram: 10,
  threads: 10,
  // LinkedIn's member APIs have small per-member daily quotas.
  linkedin: 5,
  youtube: 20
}
export const defaultCap = 20

/** How long a platform is left alone after a rate limit that did not say. */
export const defaultRateLimitDelay: Duration.Duration = Duration.minutes(15)

export interface Options {
  /** Delays after publishing, ascending; default `defaultSchedule`. */
  readonly schedule?: ReadonlyArray<Duration.DurationInput>
  /** Time between rounds (jittered ±20 %); default 1 minute. */
  readonly every?: Duration.DurationInput
  /** Fetches per platform per round; default `defaultPerPlatform`, else `defaultCap`. */
  readonly perPlatform?: Readonly<Partial<Record<Platform, number>>>
  /** The claim's lease; default 2 minutes. */
  readonly leaseFor?: Duration.DurationInput
  /** One fetch's deadline, after which it counts as failed; default 30 seconds. */
  readonly timeout?: Duration.DurationInput
}

export interface Summary {
  readonly claimed: number
  readonly fetched: number
  readonly failed: number
  /** Not fetched because of a rate limit (claimed ones released, others pushed back). */
  readonly deferred: number
}

interface Resolved {
  readonly schedule: ReadonlyArray<Duration.Duration>
  readonly perPlatform: (platform: Platform) => number
  readonly leaseFor: Duration.Duration
  readonly timeout: Duration.Duration
}

const resolve = (options: Options): Resolved => {
  const schedule = (options.schedule ?? defaultSchedule).map((d) => Duration.decode(d))
  const caps = { ...defaultPerPlatform, ...options.perPlatform }
  return {
    schedule: [...schedule].sort(Duration.Order),
    perPlatform: (platform) => caps[platform] ?? defaultCap,
    leaseFor: Duration.max(
      Duration.decode(options.leaseFor ?? Duration.minutes(2)),
      Duration.times(Duration.decode(options.timeout ?? Duration.seconds(30)), 2)
    ),
    timeout: Duration.decode(options.timeout ?? Duration.seconds(30))
  }
}

/**
 * The step after `step`, fetched at `now`: the first one still ahead of `now`, with when it is due;
 * `steps` and none when the schedule is over.
 */
export const nextStep = (
  schedule: ReadonlyArray<Duration.Duration>,
  publishedAt: DateTime.Utc,
  step: number,
  now: DateTime.Utc
): { readonly step: number; readonly nextAt: Option.Option<DateTime.Utc> } => {
  for (let i = step + 1; i < schedule.length; i++) {
    const at = DateTime.addDuration(publishedAt, schedule[i])
    if (DateTime.greaterThan(at, now)) return { step: i, nextAt: Option.some(at) }
  }
  return { step: schedule.length, nextAt: Option.none() }
}

/** The account's credentials as the client takes them (a JSON object, or one opaque token). */
const credentialsOf = (account: SocialAccount): Credentials => {
  const record: Record<string, string> = {}
  if (Option.isSome(account.credentials)) {
    const raw = Redacted.value(account.credentials.value)
    try {
      const parsed: unknown = JSON.parse(raw)
      if (typeof parsed === "object" && parsed !== null) {
        for (const [key, value] of Object.entries(parsed)) {
          if (typeof value === "string") record[key] = value
        }
      }
    } catch {
      record.token = raw
    }
  }
  return Redacted.make(record)
}

/** A claim ready to fetch: its account is usable and the post has an id. */
interface Ready {
  readonly claim: MetricsClaim
  readonly next: { readonly step: number; readonly nextAt: Option.Option<DateTime.Utc> }
  readonly platformPostId: string
  readonly publishedAt: DateTime.Utc
  /** The final id and URL the platform gave since publishing, stored with the completion. */
  readonly resolved?: ResolvedPost
}

interface PlatformSummary {
  readonly fetched: number
  readonly failed: number
  readonly deferred: number
}

/**
 * One platform's claimed destinations, account by account, stopping at a rate limit. Fetches are
 * sequential, so a fetch is started only while the lease (taken at `claimedAt`) still covers its whole
 * time-out; the claims left then are released, due at once, for the next round.
 */
const sweepPlatform = (
  client: PlatformClient,
  claims: ReadonlyArray<MetricsClaim>,
  config: Resolved,
  claimedAt: DateTime.Utc
) =>
  Effect.gen(function*() {
    const store = yield* MetricsStore
    const accounts = yield* AccountStore
    const fetch = client.metrics!
    let fetched = 0
    let failed = 0
    let deferred = 0
    let limitedUntil: DateTime.Utc | undefined
    const lastStart = DateTime.subtractDuration(DateTime.addDuration(claimedAt, config.leaseFor), config.timeout)

    const byAccount = new Map<string, Array<MetricsClaim>>()
    for (const claim of claims) {
      const key = `${claim.destination.organizationId}:${claim.destination.accountId}`
      byAccount.set(key, [...(byAccount.get(key) ?? []), claim])
    }

    const complete = (claim: MetricsClaim, completion: MetricsCompletion) =>
      store.complete(claim, completion).pipe(
        Effect.tap((written) =>
          written ? Effect.void : Effect.logWarning(`Metrics: the claim on ${claim.destination.id} was lost`)
        )
      )

    /** Completes a ready fetch, storing the post's resolved id and URL with a fetch or a skip. */
    const completeReady = (r: Ready, completion: MetricsCompletion) =>
      complete(
        r.claim,
        r.resolved !== undefined && completion._tag !== "Deferred"
          ? { ...completion, platformPost: r.resolved }
          : completion
      )

    const timed = <A>(self: Effect.Effect<A, PublishError>) =>
      self.pipe(
        Effect.timeoutFail({
          duration: config.timeout,
          onTimeout: () => new PublishError({ kind: "transient", message: "The metrics request timed out" })
        }),
        Effect.either
      )

    /** A failed fetch of `ready`: a rate limit defers them and the platform; anything else moves them on. */
    const failedFetch = (error: PublishError, ready: ReadonlyArray<Ready>, now: DateTime.Utc) =>
      Effect.gen(function*() {
        if (error.kind === "rate_limit") {
          const delay = error.retryAfterSeconds !== undefined && error.retryAfterSeconds > 0
            ? Duration.seconds(error.retryAfterSeconds)
            : defaultRateLimitDelay
          const until = DateTime.addDuration(now, delay)
          limitedUntil = until
          for (const r of ready) yield* completeReady(r, { _tag: "Deferred", nextAt: until })
          deferred += ready.length
          yield* Effect.logWarning(
            `Metrics: ${client.platform} answered with a rate limit; its fetches wait until ${
              DateTime.formatIso(until)
            }`
          )
          return
        }
        // The counts stay as they were; the destination's status is not the sweep's to change.
        for (const r of ready) yield* completeReady(r, { _tag: "Skipped", ...r.next })
        failed += ready.length
        yield* Effect.logInfo(
          `Metrics: fetching ${ready.map((r) => r.claim.destination.id).join(", ")} from ${client.platform} ` +
            `failed (${error.kind}): ${error.message}`
        )
      })

    for (const group of byAccount.values()) {
      const first = group[0].destination
      const account = yield* accounts.findById(first.organizationId, first.accountId)
      const ready: Array<Ready> = []
      for (const claim of group) {
        const d = claim.destination
        const now = yield* DateTime.now
        if (limitedUntil !== undefined) {
          yield* complete(claim, { _tag: "Deferred", nextAt: limitedUntil })
          deferred++
          continue
        }
        const next = nextStep(config.schedule, Option.getOrElse(d.publishedAt, () => now), claim.step, now)
        if (
          Option.isNone(account) || !account.value.isActive || account.value.needsReconnection ||
          Option.isNone(d.platformPostId) || Option.isNone(d.publishedAt)
        ) {
          yield* complete(claim, { _tag: "Skipped", ...next })
          failed++
          continue
        }
        const context = { account: account.value, publishedAt: d.publishedAt.value }
        const resolved = client.resolvePost === undefined
          ? undefined
          : yield* timed(client.resolvePost(credentialsOf(account.value), d.platformPostId.value, context)).pipe(
            Effect.flatMap((answer) =>
              answer._tag === "Right"
                ? Effect.succeed(Option.getOrUndefined(answer.right))
                : Effect.as(
                  Effect.logInfo(
                    `Metrics: resolving ${d.id} on ${client.platform} failed (${answer.left.kind}): ${answer.left.message}`
                  ),
                  undefined
                )
            )
          )
        ready.push({
          claim,
          next,
          platformPostId: resolved?.platformPostId ?? d.platformPostId.value,
          publishedAt: d.publishedAt.value,
          ...(resolved === undefined ? {} : { resolved })
        })
      }
      if (ready.length === 0 || Option.isNone(account)) continue
      const credentials = credentialsOf(account.value)
      const batch = client.metricsBatch
      if (batch !== undefined && ready.length > 1) {
        // One call for the account's posts, chunked to what the platform takes.
        const size = Math.max(1, client.metricsBatchSize ?? 100)
        for (let i = 0; i < ready.length; i += size) {
          const chunk = ready.slice(i, i + size)
          const now = yield* DateTime.now
          if (limitedUntil !== undefined || DateTime.greaterThan(now, lastStart)) {
            for (const r of chunk) yield* completeReady(r, { _tag: "Deferred", nextAt: limitedUntil ?? now })
            deferred += chunk.length
            continue
          }
          const result = yield* timed(batch(credentials, chunk.map((r) => r.platformPostId)))
          if (result._tag === "Left") {
            yield* failedFetch(result.left, chunk, now)
            continue
          }
          for (const r of chunk) {
            const metrics = result.right.get(r.platformPostId)
            if (metrics === undefined) {
              yield* failedFetch(
                new PublishError({ kind: "permanent", message: "the post is not in the answer (deleted?)" }),
                [r],
                now
              )
            } else {
              yield* completeReady(r, { _tag: "Fetched", metrics, fetchedAt: now, ...r.next })
              fetched++
            }
          }
        }
        continue
      }
      for (const r of ready) {
        const now = yield* DateTime.now
        if (limitedUntil !== undefined || DateTime.greaterThan(now, lastStart)) {
          yield* completeReady(r, { _tag: "Deferred", nextAt: limitedUntil ?? now })
          deferred++
          continue
        }
        const result = yield* timed(
          fetch(credentials, r.platformPostId, { account: account.value, publishedAt: r.publishedAt })
        )
        if (result._tag === "Left") {
          yield* failedFetch(result.left, [r], now)
        } else {
          yield* completeReady(r, { _tag: "Fetched", metrics: result.right, fetchedAt: now, ...r.next })
          fetched++
        }
      }
    }
    if (limitedUntil !== undefined) {
      deferred += yield* store.deferPlatform({
        platform: client.platform,
        until: limitedUntil,
        steps: config.schedule.length,
        firstAfter: config.schedule[0]
      })
    }
    const summary: PlatformSummary = { fetched, failed, deferred }
    return summary
  })

/** One round over every platform whose client has `metrics`. Fails only when storage fails. */
export const runOnce = (options: Options = {}): Effect.Effect<
  Summary,
  PersistenceError,
  MetricsStore | AccountStore | Platforms
> =>
  Effect.gen(function*() {
    const config = resolve(options)
    if (config.schedule.length === 0) return { claimed: 0, fetched: 0, failed: 0, deferred: 0 }
    const store = yield* MetricsStore
    const registry = yield* Platforms
    const now = yield* DateTime.now
    const clients = allPlatforms.flatMap((p) => {
      const client = registry.get(p)
      return Option.isSome(client) && client.value.metrics !== undefined ? [client.value] : []
    })
    const results = yield* Effect.forEach(clients, (client) =>
      Effect.gen(function*() {
        const claims = yield* store.claimDue({
          platform: client.platform,
          now,
          limit: config.perPlatform(client.platform),
          steps: config.schedule.length,
          firstAfter: config.schedule[0],
          leaseFor: config.leaseFor
        })
        if (claims.length === 0) return { claimed: 0, fetched: 0, failed: 0, deferred: 0 }
        const s = yield* sweepPlatform(client, claims, config, now)
        return { claimed: claims.length, ...s }
      }), { concurrency: 4 })
    const summary: Summary = {
      claimed: results.reduce((n, r) => n + r.claimed, 0),
      fetched: results.reduce((n, r) => n + r.fetched, 0),
      failed: results.reduce((n, r) => n + r.failed, 0),
      deferred: results.reduce((n, r) => n + r.deferred, 0)
    }
    return summary
  }).pipe(Effect.withSpan("MetricsSweep.runOnce"))

/** `base` times a random factor in [0.8, 1.2). */
const jittered = (base: Duration.Duration) =>
  Effect.map(Random.nextRange(0.8, 1.2), (f) => Duration.millis(Math.round(Duration.toMillis(base) * f)))

/** Sweeps forever, a round every interval (jittered); a round that fails is logged and tried again. */
export const run = (options: Options = {}) =>
  Effect.gen(function*() {
    const every = Duration.decode(options.every ?? defaultInterval)
    while (true) {
      yield* runOnce(options).pipe(
        Effect.tap((s) =>
          Effect.sync(() => {
            EngineMetrics.metricsSweepRounds.record({ result: "ok" }, 1)
            EngineMetrics.metricsSweepDestinations.record({ result: "fetched" }, s.fetched)
            EngineMetrics.metricsSweepDestinations.record({ result: "failed" }, s.failed)
            EngineMetrics.metricsSweepDestinations.record({ result: "deferred" }, s.deferred)
          })
        ),
        Effect.tap((s) =>
          s.claimed > 0
            ? Effect.logDebug(
              `Metrics: ${s.fetched} fetched, ${s.failed} failed, ${s.deferred} deferred of ${s.claimed} claimed`
            )
            : Effect.void
        ),
        Effect.catchAllCause((cause) =>
          Effect.zipRight(
            Effect.sync(() => EngineMetrics.metricsSweepRounds.record({ result: "failed" }, 1)),
            Effect.logWarning("Metrics: the sweep failed", cause)
          )
        )
      )
      yield* Effect.sleep(yield* jittered(every))
    }
  }).pipe(Effect.withSpan("MetricsSweep.run"))
