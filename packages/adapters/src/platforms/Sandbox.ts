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
import type { SocialAccount } from "@herald/core/accounts/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as Organization from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { Metrics } from "@herald/core/posts/Destination"
import { Event } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { EventId, type OrganizationId } from "@herald/core/kernel/Ids"
import { credentialPlatforms, type Platform, platforms } from "@herald/core/platforms/Platform"
import {
  type ConnectedIdentity,
  type PlatformClient,
  type PublishedAnswer,
  type PublishedLookup,
  PublishError,
  type PublishRequest,
  type PublishResult
} from "@herald/core/platforms/Platforms"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as crypto from "node:crypto"
import * as fs from "node:fs"

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
  !hasMedia(request) ? Effect.succeed(noMedia) : Effect.forEach([...request.main.media, ...request.thread.flatMap((part) => part.media)], (ref) =>
    Stream.runFold(ref.bytes, { hash: crypto.createHash("sha256"), size: 0 }, (acc, chunk) => {
      acc.hash.update(chunk)
      return { hash: acc.hash, size: acc.size + chunk.length }
    }).pipe(
      Effect.map(({ hash, size }) => ({ id: ref.id, mimeType: ref.mimeType, size, sha256: hash.digest("hex") })),
      Effect.mapError(() => new PublishError({ kind: "media", message: `Sandbox: media ${ref.id} could not be read` }))
    ))

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

/** One post the sandbox published, as its ledger keeps it. */
export interface LedgerEntry {
  readonly platform: Platform
  readonly destinationId: string
  readonly attempt: number
  readonly platformPostId: string
  readonly platformPostUrl: string
  readonly at: number
}

/** The ledger's entries; a line cut short by a killed process is not a whole entry and is skipped. */
export const readLedger = (file: string): ReadonlyArray<LedgerEntry> => {
  if (!fs.existsSync(file)) return []
  return fs.readFileSync(file, "utf8").split("\n").flatMap((line) => {
    if (line.length === 0) return []
    try {
      return [JSON.parse(line) as LedgerEntry]
    } catch {
      return []
    }
  })
}

/**
 * The ledger's entries by platform, destination and attempt, read incrementally: each lookup reads
 * only the bytes appended since the last one (a dead process's take-over asks once per destination it
 * held; re-reading the whole ledger each time made settling 1,400 claims take minutes). A line still
 * being written is left for the next read; a file that shrank (replaced) is read again from the start.
 */
interface LedgerIndex {
  offset: number
  tail: string
  readonly entries: Map<string, LedgerEntry>
}

const ledgerIndexes = new Map<string, LedgerIndex>()

const ledgerKey = (platform: string, destinationId: string, attempt: number) => `${platform}\u0000${destinationId}\u0000${attempt}`

/** The ledger entry for one attempt, if any process of the deployment recorded it. */
export const findInLedger = (
  file: string,
  platform: Platform,
  destinationId: string,
  attempt: number
): LedgerEntry | undefined => {
  let index = ledgerIndexes.get(file)
  if (index === undefined) {
    index = { offset: 0, tail: "", entries: new Map() }
    ledgerIndexes.set(file, index)
  }
  if (!fs.existsSync(file)) return undefined
  const fd = fs.openSync(file, "r")
  try {
    const size = fs.fstatSync(fd).size
    if (size < index.offset) {
      index.offset = 0
      index.tail = ""
      index.entries.clear()
    }
    if (size > index.offset) {
      const buffer = Buffer.alloc(size - index.offset)
      let read = 0
      while (read < buffer.length) {
        const n = fs.readSync(fd, buffer, read, buffer.length - read, index.offset + read)
        if (n === 0) break
        read += n
      }
      index.offset += read
      const lines = (index.tail + buffer.subarray(0, read).toString("utf8")).split("\n")
      index.tail = lines.pop() ?? ""
      for (const line of lines) {
        if (line.length === 0) continue
        try {
          const entry = JSON.parse(line) as LedgerEntry
          index.entries.set(ledgerKey(entry.platform, entry.destinationId, entry.attempt), entry)
        } catch {
          // A line cut short by a killed process, followed by the next process's whole lines.
        }
      }
    }
  } finally {
    fs.closeSync(fd)
  }
  return index.entries.get(ledgerKey(platform, destinationId, attempt))
}

/**
 * Where the sandbox appends its lines (ledger, journal). Each line is one whole `write` on a file opened
 * with O_APPEND, so lines of several processes never interleave mid-line, and a line is in the file
 * when `append` returns; a process killed mid-write leaves at most a cut last line, which readers skip.
 */
export interface LineFiles {
  readonly append: (file: string, line: string) => void
}

/** Opens, writes and closes the file per line (`appendFileSync`): for clients made outside a scope. */
const appendPerLine: LineFiles = { append: (file, line) => fs.appendFileSync(file, line, { mode: 0o600 }) }

const writeWhole = (fd: number, line: string): void => {
  const bytes = Buffer.from(line, "utf8")
  let offset = 0
  // A regular file takes the whole line in one write(); the loop only covers a short write.
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset)
}

/**
 * Files opened once, on their first line (a file nothing was written to is not created), with O_APPEND,
 * and closed when the scope closes.
 */
export const openLineFiles: Effect.Effect<LineFiles, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => new Map<string, number>()),
  (fds) =>
    Effect.sync(() => {
      for (const fd of fds.values()) fs.closeSync(fd)
      fds.clear()
    })
).pipe(Effect.map((fds): LineFiles => ({
  append: (file, line) => {
    let fd = fds.get(file)
    if (fd === undefined) {
      fd = fs.openSync(file, "a", 0o600)
      fds.set(file, fd)
    }
    writeWhole(fd, line)
  }
})))

const digits = (n: number): string => {
  let out = String(1 + crypto.randomInt(9))
  while (out.length < n) out += String(crypto.randomInt(10))
  return out
}

const alnum = (n: number, alphabet = "abcdefghijklmnopqrstuvwxyz234567"): string => {
  let out = ""
  for (let i = 0; i < n; i++) out += alphabet[crypto.randomInt(alphabet.length)]
  return out
}

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "") || "sandbox"

/** A post id and URL shaped like the platform's own. */
export const fakePost = (platform: Platform, handle: string): { readonly id: string; readonly url: string } => {
  const h = slug(handle)
  switch (platform) {
    case "x": {
      const id = digits(19)
      return { id, url: `https://x.com/${h}/status/${id}` }
    }
    case "instagram": {
      const code = alnum(11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
      return { id: digits(17), url: `https://www.instagram.com/p/${code}/` }
    }
    case "facebook": {
      const page = digits(15)
      const post = digits(16)
      return { id: `${page}_${post}`, url: `https://www.facebook.com/${page}/posts/${post}` }
    }
    case "linkedin": {
      const id = `urn:li:share:${digits(19)}`
      return { id, url: `https://www.linkedin.com/feed/update/${id}/` }
    }
    case "youtube": {
      const id = alnum(11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
      return { id, url: `https://www.youtube.com/watch?v=${id}` }
    }
    case "tiktok": {
      const id = digits(19)
      return { id, url: `https://www.tiktok.com/@${h}/video/${id}` }
    }
    case "threads": {
      const code = alnum(11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
      return { id: digits(17), url: `https://www.threads.net/@${h}/post/${code}` }
    }
    case "pinterest": {
      const id = digits(18)
      return { id, url: `https://www.pinterest.com/pin/${id}/` }
    }
    case "bluesky": {
      const rkey = alnum(13)
      return {
        id: `at://did:plc:${alnum(24)}/app.bsky.feed.post/${rkey}`,
        url: `https://bsky.app/profile/${h}.bsky.social/post/${rkey}`
      }
    }
    case "telegram": {
      const id = String(1 + crypto.randomInt(999_999))
      return { id, url: `https://t.me/${h}/${id}` }
    }
    case "discord": {
      const id = digits(19)
      return { id, url: `https://discord.com/channels/${digits(18)}/${digits(18)}/${id}` }
    }
  }
}

const hashInt = (text: string, salt: string, max: number): number =>
  crypto.createHash("sha256").update(`${salt}:${text}`).digest().readUInt32BE(0) % max

/** Plausible, stable metrics for a sandbox post. */
export const fakeMetrics = (platformPostId: string): Metrics => {
  const views = hashInt(platformPostId, "views", 5000)
  return new Metrics({
    views,
    impressions: views + hashInt(platformPostId, "impressions", 2000),
    likes: hashInt(platformPostId, "likes", Math.max(1, Math.floor(views / 10))),
    comments: hashInt(platformPostId, "comments", 40),
    shares: hashInt(platformPostId, "shares", 60),
    saves: hashInt(platformPostId, "saves", 30),
    clicks: hashInt(platformPostId, "clicks", 200)
  })
}

/**
 * The sandbox post's metrics `age` after it was published: `fakeMetrics` reached along a curve that
 * rises fast and levels off (a third after 6 hours, two thirds after a day), at least one view once
 * published. Deterministic: the same post at the same age has the same numbers.
 */
export const metricsAt = (platformPostId: string, age: Duration.Duration): Metrics => {
  const ms = Math.max(0, Duration.toMillis(age))
  const share = ms / (ms + Duration.toMillis(Duration.hours(12)))
  const final = fakeMetrics(platformPostId)
  const grown = (n: number) => Math.floor(n * share)
  return new Metrics({
    views: Math.max(ms > 0 ? 1 : 0, grown(final.views)),
    impressions: Math.max(ms > 0 ? 1 : 0, grown(final.impressions)),
    likes: grown(final.likes),
    comments: grown(final.comments),
    shares: grown(final.shares),
    saves: grown(final.saves),
    clicks: grown(final.clicks)
  })
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
export const make = (platform: Platform, options: SandboxOptions = {}, files: LineFiles = appendPerLine): PlatformClient => {
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

  const remember = (request: PublishRequest, post: { readonly id: string; readonly url: string }, at: DateTime.Utc): void => {
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
        new PublishError({ kind: "auth", message: `Sandbox ${platform}: the access token was revoked (${markers.auth})` })
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
        : Effect.map(DateTime.now, (now) => metricsAt(platformPostId, Duration.millis(DateTime.distance(context.publishedAt, now)))),
    findPublished,
    timeout: "30 seconds"
  }
}

/** A sandbox client for every platform of the spec. */
export const makeAll = (options: SandboxOptions = {}, files: LineFiles = appendPerLine): ReadonlyArray<PlatformClient> =>
  platforms.map((platform) => make(platform, options, files))

/**
 * A sandbox client for every platform, sharing one open file per ledger and journal for the life of the
 * scope (instead of an open, write and close per line).
 */
export const makeAllScoped = (options: SandboxOptions = {}): Effect.Effect<ReadonlyArray<PlatformClient>, never, Scope.Scope> =>
  Effect.map(openLineFiles, (files) => makeAll(options, files))

const avatarUrl = (platform: Platform): string => `https://sandbox.herald.invalid/avatars/${platform}.png`

/** The platform account id of the bootstrap sandbox account of `platform`. */
export const bootstrapAccountId = (platform: Platform): string => `sandbox-${platform}`

/**
 * Connects one sandbox account per platform, named `Sandbox <platform>`, to the organization, with its
 * `account.connected` event. Accounts already there are left alone, so running it on every start is safe.
 */
export const bootstrapAccounts = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const accounts = yield* AccountStore
    const events = yield* EventStore
    const transactor = yield* Transactor
    const ids = yield* IdGenerator
    const created: Array<SocialAccount> = []
    for (const platform of platforms) {
      const existing = yield* accounts.findByPlatformAccountId(organizationId, platform, bootstrapAccountId(platform))
      if (Option.isSome(existing)) continue
      const now = yield* DateTime.now
      const account = yield* transactor.withTransaction(Effect.gen(function*() {
        const account = yield* accounts.insert({
          organizationId,
          platform,
          platformAccountId: bootstrapAccountId(platform),
          accountName: `Sandbox ${platform}`,
          avatarUrl: avatarUrl(platform),
          isActive: true,
          connectionFlow: (credentialPlatforms as ReadonlyArray<Platform>).includes(platform) ? "credential" : "direct",
          needsReconnection: false,
          tokenExpiresAt: Option.none(),
          lastSuccessAt: Option.none(),
          recentFailures: 0,
          credentials: Option.some(Redacted.make(JSON.stringify({ sandbox: "true" }))),
          createdAt: now,
          updatedAt: now
        })
        yield* events.append([
          new Event({
            id: EventId.make(yield* ids.uuid),
            organizationId,
            type: "account.connected",
            data: { account_id: account.id, platform, account_name: account.accountName },
            createdAt: now
          })
        ])
        return account
      }))
      created.push(account)
    }
    return created
  })

/** The plans from the smallest allowance of social accounts up. */
const plansByAccounts: ReadonlyArray<Organization.Plan> = (Object.keys(Organization.planAllowances) as Array<Organization.Plan>)
  .filter((plan) => plan !== "trial")
  .sort((a, b) => Organization.planAllowances[a].socialAccounts - Organization.planAllowances[b].socialAccounts)

/**
 * The sandbox's organization must hold its sandbox accounts and still take a connect: when its plan
 * allows no more accounts than it has, it moves to the smallest plan that allows more (the largest
 * plan when none does). Its subscription status is left as it is. Returns the plan it moved to, if any.
 */
export const fitPlan = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const orgs = yield* OrganizationStore
    const org = yield* orgs.findById(organizationId)
    if (Option.isNone(org)) return Option.none<Organization.Plan>()
    const count = (yield* (yield* AccountStore).list(organizationId)).length
    if (Organization.planAllowances[org.value.plan].socialAccounts > count) return Option.none<Organization.Plan>()
    const plan = plansByAccounts.find((p) => Organization.planAllowances[p].socialAccounts > count) ??
      plansByAccounts[plansByAccounts.length - 1]!
    if (plan === org.value.plan) return Option.none<Organization.Plan>()
    yield* orgs.update(new Organization.Organization({ ...org.value, plan }))
    return Option.some(plan)
  })
