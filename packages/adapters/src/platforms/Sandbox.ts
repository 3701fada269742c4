/**
 * A simulated platform for demos, tests and benchmarks. It never leaves the process; it answers after a
 * configurable latency with plausible post ids and URLs for the platform it stands in for.
 *
 * Markers in the text (main post or any thread part) choose the outcome, deterministically:
 * - `[sandbox:fail]`  a permanent failure (the platform rejects the post);
 * - `[sandbox:flaky]` one transient failure, then success: the first attempt of a destination fails,
 *   later attempts succeed (by the attempt number the dispatcher passes, so it holds across processes);
 * - `[sandbox:auth]`  the token was revoked (an auth failure: the account needs reconnection).
 *
 * It can say whether an attempt reached it (`findPublished`): it remembers what it published in this
 * process, and with a ledger file (`ledger`, shared by every process of a deployment) what any process
 * published. Without a ledger it cannot speak for other processes, so a post it does not remember is
 * `Unknown` rather than `Absent`.
 */
import { type Platform, platforms } from "@herald/core/domain/Platform"
import {
  type ConnectedIdentity,
  type PlatformClient,
  type PublishedAnswer,
  type PublishedLookup,
  PublishError,
  type PublishRequest,
  type PublishResult
} from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import { appendPerLine, findInLedger, LedgerEntry, LineFiles, openLineFiles } from "./SandboxLedger.js"
import { fakeMetrics, fakePost, metricsAt, slug } from "./SandboxFakes.js"
import { avatarUrl } from "./SandboxAccounts.js"

export { findInLedger, openLineFiles, readLedger } from "./SandboxLedger.js"
export type { LedgerEntry, LineFiles } from "./SandboxLedger.js"
export { fakeMetrics, fakePost, metricsAt } from "./SandboxFakes.js"
export { bootstrapAccountId, bootstrapAccounts, fitPlan } from "./SandboxAccounts.js"

export const markers = {
  fail: "[sandbox:fail]",
  flaky: "[sandbox:flaky]",
  auth: "[sandbox:auth]"
} as const

/** One publish call the sandbox received. */
export interface SandboxSend {
  readonly platform: Platform
  readonly destinationId: string | undefined
  readonly attempt: number | undefined
  readonly accountId: number
  /** When the call reached the platform, before the simulated latency. */
  readonly at: DateTime.Utc
  readonly parts: number
  readonly outcome: "published" | "failed" | "flaky" | "auth"
  readonly platformPostId: string | undefined
  /** The media of every part as read through the blob store: bytes counted and hashed. */
  readonly media?: ReadonlyArray<SandboxMedium>
}

export interface SandboxMedium {
  readonly id: string
  readonly mimeType: string
  readonly size: number
  readonly sha256: string
}

const noMedia: ReadonlyArray<SandboxMedium> = []

const hasMedia = (request: PublishRequest): boolean =>
  request.main.media.length > 0 || request.thread.some((part) => part.media.length > 0)

/** Reads each medium's bytes (as a real platform upload would) and notes their size and SHA-256. */
const readMedia = (request: PublishRequest): Effect.Effect<ReadonlyArray<SandboxMedium>, PublishError> =>
  !hasMedia(request) ?
    Effect.succeed(noMedia) :
    Effect.forEach(
      [...request.main.media, ...request.thread.flatMap((part) => part.media)],
      (ref) =>
        Stream.runFold(ref.bytes, { hash: crypto.createHash("sha256"), size: 0 }, (acc, chunk) => {
          acc.hash.update(chunk)
          return { hash: acc.hash, size: acc.size + chunk.length }
        }).pipe(
          Effect.map(({ hash, size }) => ({ id: ref.id, mimeType: ref.mimeType, size, sha256: hash.digest("hex") })),
          Effect.mapError(() =>
            new PublishError({ kind: "media", message: `Sandbox: media ${ref.id} could not be read` })
          )
        )
    )

export interface SandboxOptions {
  /** A fixed latency, or a uniform range; default none. */
  readonly latency?: Duration.DurationInput | {
    readonly min: Duration.DurationInput
    readonly max: Duration.DurationInput
  }
  /** Appends one JSON line per publish call to this file, to count sends across processes. */
  readonly journal?: string
  /** Called with every publish call, in-process (tests, benchmarks). */
  readonly onSend?: (send: SandboxSend) => Effect.Effect<void>
  /**
   * The sandbox platform's own record of the posts it published, one JSON line each, appended before
   * the publish answers; shared by every process so that any of them can answer `findPublished`.
   */
  readonly ledger?: string
  /**
   * How many of its own publishes a client keeps in memory for `findPublished` (default 10,000; the
   * oldest go first), and as many flaky markers seen. A long-running sandbox (`herald serve --sandbox`
   * for a demo of days) must not grow without end; a lookup that finds nothing here asks the ledger,
   * as after a restart.
   */
  readonly remembered?: number
}

const texts = (request: PublishRequest): ReadonlyArray<string> => [
  request.main.content,
  ...request.thread.map((part) => part.content)
]

const has = (request: PublishRequest, marker: string): boolean =>
  request.main.content.includes(marker) || (request.thread.length > 0 && texts(request).some((t) => t.includes(marker)))

const latencyOf = (options: SandboxOptions): Effect.Effect<Duration.Duration> => {
  const latency = options.latency
  if (latency === undefined) return Effect.succeed(Duration.zero)
  if (typeof latency === "object" && latency !== null && "min" in latency && "max" in latency) {
    const min = Duration.toMillis(Duration.decode(latency.min))
    const max = Duration.toMillis(Duration.decode(latency.max))
    return Effect.map(Random.nextIntBetween(Math.floor(min), Math.floor(max) + 1), Duration.millis)
  }
  return Effect.succeed(Duration.decode(latency as Duration.DurationInput))
}

/**
 * A sandbox client standing in for `platform`. Its ledger and journal lines go through `files`: by
 * default each line opens and closes its file; `makeAllScoped` keeps them open.
 */
export const make = (
  platform: Platform,
  options: SandboxOptions = {},
  files: LineFiles = appendPerLine
): PlatformClient => {
  // Without an attempt number (a caller other than the dispatcher), flakiness is remembered here.
  const flakySeen = new Set<string>()
  // What this process published lately, by destination and attempt, oldest first.
  const published = new Map<string, { readonly id: string; readonly url: string }>()
  const keep = Math.max(1, options.remembered ?? 10_000)
  const attemptKey = (destinationId: string, attempt: number) => `${destinationId}:${attempt}`

  const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
    Effect.sync((): PublishedAnswer => {
      const remembered = published.get(attemptKey(lookup.destinationId, lookup.attempt))
      if (remembered !== undefined) {
        return { _tag: "Found", platformPostId: remembered.id, platformPostUrl: remembered.url }
      }
      if (options.ledger === undefined) {
        return { _tag: "Unknown", reason: "the sandbox keeps no ledger (HERALD_SANDBOX_LEDGER)" }
      }
      const entry = findInLedger(options.ledger, platform, lookup.destinationId, lookup.attempt)
      return entry === undefined
        ? { _tag: "Absent" }
        : { _tag: "Found", platformPostId: entry.platformPostId, platformPostUrl: entry.platformPostUrl }
    })

  const remember = (
    request: PublishRequest,
    post: { readonly id: string; readonly url: string },
    at: DateTime.Utc
  ): void => {
    if (request.destinationId === undefined || request.attempt === undefined) return
    published.set(attemptKey(request.destinationId, request.attempt), post)
    if (published.size > keep) published.delete(published.keys().next().value!)
    if (options.ledger === undefined) return
    const entry: LedgerEntry = {
      platform,
      destinationId: request.destinationId,
      attempt: request.attempt,
      platformPostId: post.id,
      platformPostUrl: post.url,
      at: DateTime.toEpochMillis(at)
    }
    files.append(options.ledger, JSON.stringify(entry) + "\n")
  }

  const journal = (send: SandboxSend): void => {
    if (options.journal === undefined) return
    files.append(options.journal, JSON.stringify({ ...send, at: DateTime.toEpochMillis(send.at) }) + "\n")
  }

  /** The journal line, then `onSend`. */
  const note = (send: SandboxSend): Effect.Effect<void> => {
    const onSend = options.onSend
    return onSend === undefined
      ? Effect.sync(() => journal(send))
      : Effect.zipRight(Effect.sync(() => journal(send)), onSend(send))
  }

  /**
   * The platform's answer once its latency has passed: `at` is when the call reached it, `now` when it
   * answers. Few steps of its own: with no latency and no media it is all of a publish.
   */
  const answer = (
    request: PublishRequest,
    media: ReadonlyArray<SandboxMedium>,
    at: DateTime.Utc,
    now: DateTime.Utc
  ): Effect.Effect<PublishResult, PublishError> => {
    const sendOf = (outcome: SandboxSend["outcome"], platformPostId: string | undefined): SandboxSend => {
      const send: SandboxSend = {
        platform,
        destinationId: request.destinationId,
        attempt: request.attempt,
        accountId: request.account.id,
        at,
        parts: 1 + request.thread.length,
        outcome,
        platformPostId
      }
      return media.length === 0 ? send : { media, ...send }
    }
    if (has(request, markers.auth)) {
      return Effect.zipRight(
        note(sendOf("auth", undefined)),
        new PublishError({
          kind: "auth",
          message: `Sandbox ${platform}: the access token was revoked (${markers.auth})`
        })
      )
    }
    if (has(request, markers.fail)) {
      return Effect.zipRight(
        note(sendOf("failed", undefined)),
        new PublishError({
          kind: "permanent",
          message: `Sandbox ${platform}: the platform rejected the post (${markers.fail})`
        })
      )
    }
    if (has(request, markers.flaky)) {
      const firstAttempt = request.attempt !== undefined
        ? request.attempt <= 1
        : !flakySeen.has(`${request.destinationId ?? request.account.id}:${request.main.content}`)
      if (request.attempt === undefined) {
        flakySeen.add(`${request.destinationId ?? request.account.id}:${request.main.content}`)
        if (flakySeen.size > keep) flakySeen.delete(flakySeen.values().next().value!)
      }
      if (firstAttempt) {
        return Effect.zipRight(
          note(sendOf("flaky", undefined)),
          new PublishError({
            kind: "transient",
            message: `Sandbox ${platform}: temporary outage (${markers.flaky}); a retry will succeed`
          })
        )
      }
    }
    const post = fakePost(platform, request.account.accountName)
    const result: PublishResult = { platformPostId: post.id, platformPostUrl: post.url }
    const send = sendOf("published", post.id)
    // The platform has it from here on: the ledger first, then the test journal.
    const recorded = Effect.sync(() => {
      remember(request, post, now)
      journal(send)
      return result
    })
    const onSend = options.onSend
    return onSend === undefined ? recorded : Effect.zipLeft(recorded, Effect.suspend(() => onSend(send)))
  }

  const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
    options.latency === undefined && !hasMedia(request)
      ? Effect.flatMap(DateTime.now, (at) => answer(request, noMedia, at, at))
      : Effect.gen(function*() {
        const at = yield* DateTime.now
        const media = yield* readMedia(request)
        const latency = yield* latencyOf(options)
        const waits = Duration.toMillis(latency) > 0
        if (waits) yield* Effect.sleep(latency)
        return yield* answer(request, media, at, waits ? yield* DateTime.now : at)
      })

  return {
    platform,
    publish,
    connectWithCredentials: (input) =>
      Effect.succeed<ConnectedIdentity>({
        platformAccountId: `sandbox-${platform}-${slug(input.name ?? input.handle ?? "account")}`,
        accountName: input.name ?? input.handle ?? `Sandbox ${platform}`,
        avatarUrl: avatarUrl(platform),
        credentials: { sandbox: "true" },
        tokenExpiresAt: Option.none()
      }),
    refresh: () =>
      Effect.succeed<ConnectedIdentity>({
        platformAccountId: `sandbox-${platform}`,
        accountName: `Sandbox ${platform}`,
        avatarUrl: avatarUrl(platform),
        credentials: { sandbox: "true" },
        tokenExpiresAt: Option.none()
      }),
    metrics: (_credentials, platformPostId, context) =>
      context === undefined
        ? Effect.succeed(fakeMetrics(platformPostId))
        : Effect.map(DateTime.now, (now) =>
          metricsAt(platformPostId, Duration.millis(DateTime.distance(context.publishedAt, now)))),
    findPublished,
    timeout: "30 seconds"
  }
}

/** A sandbox client for every platform of the spec. */
export const makeAll = (
  options: SandboxOptions = {},
  files: LineFiles = appendPerLine
): ReadonlyArray<PlatformClient> => platforms.map((platform) => make(platform, options, files))

/**
 * A sandbox client for every platform, sharing one open file per ledger and journal for the life of the
 * scope (instead of an open, write and close per line).
 */
export const makeAllScoped = (
  options: SandboxOptions = {}
): Effect.Effect<ReadonlyArray<PlatformClient>, never, Scope.Scope> =>
  Effect.map(openLineFiles, (files) => makeAll(options, files))
