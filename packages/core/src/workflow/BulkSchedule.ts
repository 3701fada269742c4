/**
 * `POST /posts/bulk-schedule`: rows of `date`, `time` (wall-clock in the batch's IANA `timezone`),
 * `content`, `platforms` (names or account ids joined with `+`) and an optional `media` filename of
 * the organization's media library. Each row is checked on its own (a bad row is a row error and
 * never stops the others); batch errors (the X daily limit of the plan) block the whole batch.
 * `dryRun` checks everything and creates nothing. Valid rows are created through `Posts.create`, one
 * transaction each, so every rule of a single create applies.
 *
 * Decisions (docs/decisions/bulk.md "POST /posts/bulk-schedule"):
 * - a time in a spring-forward gap is a row error naming the gap; a time that happens twice (fall
 *   back) takes the earlier instant and adds a batch warning;
 * - a platform name picks the organization's one active account of that platform, or the account
 *   `accountMapping` names; several accounts and no mapping is a row error;
 * - the X daily limit counts, per calendar day in the batch's zone, the batch's X destinations plus
 *   the X destinations already scheduled that day. Plans: trial 10, lite 10, starter 50, growth 150,
 *   scale 500 (the spec's "Pro" is Herald's top plan, Scale; Lite, below Starter, gets the trial's).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "../accounts/AccountStore.js"
import * as ApiKey from "../access/ApiKey.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import type { Media } from "../domain/Media.js"
import { MediaStore } from "../media/MediaStore.js"
import type { Plan } from "../access/Organization.js"
import { parseFilterPlatform, type Platform } from "../domain/Platform.js"
import * as PlatformRules from "../platforms/PlatformRules.js"
import * as Posts from "../posts/Posts.js"
import { PostStore } from "../posts/PostStore.js"
import * as QueuePolicy from "./QueuePolicy.js"

export const maxRows = 100

/** X posts per calendar day, per plan. */
export const xDailyLimits: Record<Plan, number> = { trial: 10, lite: 10, starter: 50, growth: 150, scale: 500 }

export const Row = Schema.Struct({
  date: Schema.String.annotations({ description: "YYYY-MM-DD" }),
  time: Schema.String.annotations({ description: "HH:MM, 24-hour, wall-clock in the batch's timezone" }),
  content: Schema.String,
  platforms: Schema.String.annotations({
    description: "Platform names or account ids joined with '+', mixed allowed (e.g. x+linkedin+42)"
  }),
  media: Schema.optional(Schema.NullOr(Schema.String.annotations({
    description: "Filename of a medium in the organization's media library, uploaded beforehand"
  })))
}).annotations({ identifier: "BulkScheduleRow" })

export const Body = Schema.Struct({
  posts: Schema.Array(Row).annotations({ description: `At most ${maxRows} rows` }),
  timezone: Schema.String.annotations({ description: "IANA zone of every row's date and time" }),
  dryRun: Schema.optional(Schema.Boolean),
  accountMapping: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Int }).annotations({
      description: "Platform name to account id: which account a platform name means"
    })
  )
}).annotations({ identifier: "BulkScheduleRequest" })
export type Body = typeof Body.Type

export type RowStatus = "scheduled" | "valid" | "error"

export interface RowResult {
  readonly row: number
  readonly status: RowStatus
  readonly postId: string | null
  readonly error: string | null
  readonly code: string | null
  readonly scheduledFor: string | null
}

export interface BatchIssue {
  readonly code: string
  readonly message: string
  readonly [extra: string]: unknown
}

export interface Result {
  readonly dryRun: boolean
  readonly scheduled: number
  readonly failed: number
  readonly results: ReadonlyArray<RowResult>
  readonly batchErrors: ReadonlyArray<BatchIssue>
  readonly batchWarnings: ReadonlyArray<BatchIssue>
  readonly summary: {
    readonly totalRows: number
    readonly validRows: number
    readonly errorRows: number
    readonly totalDestinations: number
    readonly platformBreakdown: Readonly<Record<string, number>>
  }
  /** The request's own fields, as sent (Versioning rule 4: every request field name comes back). */
  readonly posts: ReadonlyArray<typeof Row.Type>
  readonly timezone: string
  readonly accountMapping: Readonly<Record<string, number>> | null
}

/** A row that passed every row check. */
interface Planned {
  readonly row: number
  readonly at: DateTime.Utc
  readonly localDate: string
  readonly content: string
  readonly accounts: ReadonlyArray<SocialAccount>
  readonly media: Option.Option<Media>
}

class RowError {
  constructor(readonly code: string, readonly message: string) {}
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/
const timePattern = /^([01]\d|2[0-3]):([0-5]\d)$/

export type Requirements = Posts.CreateRequirements | MediaStore

/**
 * Checks the batch (400 for the body itself), then every row, then the batch limits. Fails with a
 * 422 `validation_error` carrying the whole result in `details` when batch errors block scheduling.
 */
export const run = (
  caller: Posts.Caller,
  plan: Plan,
  raw: unknown
): Effect.Effect<Result, DomainError | PersistenceError, Requirements> =>
  Effect.gen(function*() {
    if (!isObject(raw)) {
      return yield* DomainError.fail("validation_error", "The body must be a JSON object", {
        validation_errors: [{ path: "", message: "The body must be a JSON object" }]
      })
    }
    if (Array.isArray(raw["posts"]) && raw["posts"].length > maxRows) {
      return yield* DomainError.fail(
        "bulk_limit_exceeded",
        `POST /posts/bulk-schedule takes at most ${maxRows} rows; ${raw["posts"].length} were sent`,
        { limit: maxRows, received: raw["posts"].length }
      )
    }
    const body = yield* Posts.decodeBody(Body, raw)
    if (body.posts.length === 0) {
      return yield* DomainError.fail("validation_error", "posts must hold at least one row", {
        validation_errors: [{ path: "posts", message: "posts must hold at least one row" }]
      })
    }
    if (!Posts.isIanaZone(body.timezone)) {
      return yield* DomainError.fail(
        "invalid_timezone",
        `'${body.timezone}' is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)`,
        { timezone: body.timezone }
      )
    }
    const zone = DateTime.zoneUnsafeMakeNamed(body.timezone)
    const dryRun = body.dryRun === true
    const now = yield* DateTime.now
    const organizationId = caller.key.organizationId
    const all = yield* (yield* AccountStore).list(organizationId)
    const usable = all.filter((a) => ApiKey.canUseAccount(caller.key, a.id))

    // accountMapping: every entry names a platform and an account of it (400 otherwise).
    const mapping = new Map<Platform, SocialAccount>()
    for (const [name, id] of Object.entries(body.accountMapping ?? {})) {
      const platform = parseFilterPlatform(name)
      const account = usable.find((a) => a.id === id)
      const problem = platform === undefined
        ? `'${name}' is not a platform`
        : account === undefined
        ? `account ${id} is not in this organization`
        : account.platform !== platform
        ? `account ${id} is a ${account.platform} account, not ${platform}`
        : !account.isActive
        ? `account ${id} is inactive (reconnect it first)`
        : undefined
      if (problem !== undefined || platform === undefined || account === undefined) {
        return yield* DomainError.fail("validation_error", `accountMapping.${name}: ${problem}`, {
          validation_errors: [{ path: `accountMapping.${name}`, message: problem }]
        })
      }
      mapping.set(platform, account)
    }

    const mediaByName = yield* mediaIndex(organizationId, body.posts)
    const warnings: Array<BatchIssue> = []
    const rowErrors = new Map<number, RowError>()
    const planned: Array<Planned> = []

    body.posts.forEach((row, i) => {
      const result = checkRow(row, i, { zone, timezone: body.timezone, now, usable, mapping, mediaByName, warnings })
      if (result instanceof RowError) rowErrors.set(i, result)
      else planned.push(result)
    })
    // Content rules (lengths, required media) per row, as a single create checks them.
    for (const p of [...planned]) {
      const checked = yield* Effect.either(PlatformRules.check({
        platforms: p.accounts.map((a) => a.platform),
        content: p.content,
        platformContent: {},
        threadPosts: [],
        hasMedia: Option.isSome(p.media),
        mode: "publish"
      }))
      if (checked._tag === "Left") {
        rowErrors.set(p.row, new RowError(checked.left.code, checked.left.message))
        planned.splice(planned.indexOf(p), 1)
      }
    }

    // Batch limits: X posts per calendar day of the batch's zone.
    const batchErrors: Array<BatchIssue> = []
    const xLimit = xDailyLimits[plan]
    const xPerDay = new Map<string, number>()
    for (const p of planned) {
      const xs = p.accounts.filter((a) => a.platform === "x").length
      if (xs > 0) xPerDay.set(p.localDate, (xPerDay.get(p.localDate) ?? 0) + xs)
    }
    for (const [date, requested] of [...xPerDay.entries()].sort()) {
      const existing = yield* existingX(organizationId, zone, date)
      if (existing + requested > xLimit) {
        batchErrors.push({
          code: "x_daily_limit_exceeded",
          message: `X allows ${xLimit} posts per day on the ${plan} plan; ${date} (${body.timezone}) would have ` +
            `${existing + requested} (${existing} already scheduled, ${requested} in this batch)`,
          date,
          platform: "x",
          limit: xLimit,
          existing,
          requested,
          plan
        })
      }
    }

    const created = new Map<number, string>()
    const scheduledAt = new Map<number, string>()
    for (const p of planned) scheduledAt.set(p.row, DateTime.formatIso(p.at))
    if (!dryRun && batchErrors.length === 0) {
      for (const p of planned) {
        const outcome = yield* Posts.create(caller, {
          content: p.content,
          account_ids: p.accounts.map((a) => a.id),
          scheduled_for: DateTime.formatIso(p.at),
          timezone: body.timezone,
          ...(Option.isSome(p.media) ? { media_ids: [p.media.value.id] } : {})
        }).pipe(Effect.either)
        if (outcome._tag === "Right") created.set(p.row, outcome.right.record.post.id)
        else if (outcome.left._tag === "DomainError") {
          rowErrors.set(p.row, new RowError(outcome.left.code, outcome.left.message))
        } else return yield* Effect.fail(outcome.left)
      }
    }

    const results: Array<RowResult> = body.posts.map((_, row) => {
      const error = rowErrors.get(row)
      const postId = created.get(row)
      return {
        row,
        status: error !== undefined ? "error" : postId !== undefined ? "scheduled" : "valid",
        postId: postId ?? null,
        error: error?.message ?? null,
        code: error?.code ?? null,
        scheduledFor: error === undefined ? scheduledAt.get(row) ?? null : null
      }
    })
    const breakdown: Record<string, number> = {}
    const valid = planned.filter((p) => !rowErrors.has(p.row))
    for (const p of valid) for (const a of p.accounts) breakdown[a.platform] = (breakdown[a.platform] ?? 0) + 1
    const result: Result = {
      dryRun,
      scheduled: created.size,
      failed: rowErrors.size,
      results,
      batchErrors,
      batchWarnings: warnings,
      summary: {
        totalRows: body.posts.length,
        validRows: valid.length,
        errorRows: rowErrors.size,
        totalDestinations: valid.reduce((n, p) => n + p.accounts.length, 0),
        platformBreakdown: breakdown
      },
      posts: body.posts,
      timezone: body.timezone,
      accountMapping: body.accountMapping ?? null
    }
    if (batchErrors.length > 0) {
      return yield* DomainError.fail(
        "validation_error",
        `Nothing was scheduled: ${batchErrors.map((e) => e.message).join("; ")}`,
        { ...result },
        422
      )
    }
    return result
  }).pipe(Effect.withSpan("BulkSchedule.run"))

interface RowContext {
  readonly zone: DateTime.TimeZone
  readonly timezone: string
  readonly now: DateTime.Utc
  readonly usable: ReadonlyArray<SocialAccount>
  readonly mapping: ReadonlyMap<Platform, SocialAccount>
  readonly mediaByName: ReadonlyMap<string, Media>
  readonly warnings: Array<BatchIssue>
}

const checkRow = (row: typeof Row.Type, i: number, ctx: RowContext): Planned | RowError => {
  const d = datePattern.exec(row.date.trim())
  const t = timePattern.exec(row.time.trim())
  if (d === null) return new RowError("invalid_datetime", `date '${row.date}' is not YYYY-MM-DD`)
  if (t === null) return new RowError("invalid_datetime", `time '${row.time}' is not HH:MM (24-hour)`)
  const date = { year: Number(d[1]), month: Number(d[2]), day: Number(d[3]) }
  const check = QueuePolicy.addDays(date, 0)
  if (date.month < 1 || date.month > 12 || check.day !== date.day || check.month !== date.month) {
    return new RowError("invalid_datetime", `date '${row.date}' does not exist`)
  }
  const hours = Number(t[1])
  const minutes = Number(t[2])
  const wall = QueuePolicy.resolveWallClock(ctx.zone, date, hours, minutes)
  const local = `${row.date.trim()} ${row.time.trim()}`
  if (wall._tag === "Gap") {
    return new RowError(
      "invalid_datetime",
      `${local} does not exist in ${ctx.timezone}: it falls in the daylight-saving gap when clocks move forward ` +
        `${wall.gapMinutes} minutes (the first valid time after it is ` +
        `${DateTime.formatIsoOffset(DateTime.setZone(wall.at, ctx.zone)).slice(11, 16)})`
    )
  }
  if (wall._tag === "Ambiguous") {
    ctx.warnings.push({
      code: "ambiguous_time",
      message: `Row ${i}: ${local} happens twice in ${ctx.timezone} (clocks go back); the earlier one, ` +
        `${DateTime.formatIso(wall.at)}, is used`,
      row: i
    })
  }
  if (!DateTime.greaterThan(wall.at, ctx.now)) {
    return new RowError("past_schedule_time", `${local} (${ctx.timezone}) is in the past`)
  }
  if (row.content.trim() === "") return new RowError("validation_error", "content is required")

  const accounts: Array<SocialAccount> = []
  const tokens = row.platforms.split("+").map((s) => s.trim()).filter((s) => s !== "")
  if (tokens.length === 0) return new RowError("invalid_accounts", "platforms names no platform or account id")
  for (const token of tokens) {
    let account: SocialAccount | undefined
    if (/^\d+$/.test(token)) {
      account = ctx.usable.find((a) => a.id === Number(token))
      if (account === undefined) return new RowError("invalid_accounts", `account ${token} is not in this organization`)
      if (!account.isActive) {
        return new RowError("invalid_accounts", `account ${token} is inactive (reconnect it first)`)
      }
    } else {
      const platform = parseFilterPlatform(token)
      if (platform === undefined) {
        return new RowError("invalid_accounts", `'${token}' is neither a platform nor an account id`)
      }
      account = ctx.mapping.get(platform)
      if (account === undefined) {
        const candidates = ctx.usable.filter((a) => a.platform === platform && a.isActive)
        if (candidates.length === 0) {
          return new RowError("invalid_accounts", `no active ${platform} account is connected`)
        }
        if (candidates.length > 1) {
          return new RowError(
            "invalid_accounts",
            `${candidates.length} ${platform} accounts are connected (${candidates.map((a) => a.id).join(", ")}): ` +
              `name one by id, or set accountMapping.${platform}`
          )
        }
        account = candidates[0]
      }
    }
    if (account !== undefined && !accounts.some((a) => a.id === account.id)) accounts.push(account)
  }
  if (accounts.length > Posts.maxAccountsPerPost) {
    return new RowError("too_many_accounts", `A post may target at most ${Posts.maxAccountsPerPost} accounts`)
  }

  let media = Option.none<Media>()
  const name = row.media?.trim()
  if (name !== undefined && name !== "") {
    const found = ctx.mediaByName.get(name)
    if (found === undefined) {
      return new RowError("file_not_uploaded", `no medium named '${name}' in the media library (upload it first)`)
    }
    media = Option.some(found)
  }
  return {
    row: i,
    at: wall.at,
    localDate: QueuePolicy.formatDate(date),
    content: row.content,
    accounts,
    media
  }
}

/**
 * The media the rows name, by filename: the newest usable (not failed) medium with that exact
 * filename. Reads the library page by page, only when a row names a medium.
 */
const mediaIndex = (
  organizationId: Posts.Caller["key"]["organizationId"],
  rows: ReadonlyArray<typeof Row.Type>
): Effect.Effect<ReadonlyMap<string, Media>, PersistenceError, MediaStore> =>
  Effect.gen(function*() {
    const wanted = new Set(rows.flatMap((r) => (r.media?.trim() ? [r.media.trim()] : [])))
    const found = new Map<string, Media>()
    if (wanted.size === 0) return found
    const store = yield* MediaStore
    const limit = 100
    for (let offset = 0;; offset += limit) {
      const page = yield* store.list(organizationId, { limit, offset })
      for (const m of page.items) {
        if (wanted.has(m.filename) && !found.has(m.filename) && m.status !== "failed") found.set(m.filename, m)
      }
      if (found.size === wanted.size || page.items.length < limit) return found
    }
  })

/** X destinations already scheduled on `date` (a calendar day of `zone`). */
const existingX = (
  organizationId: Posts.Caller["key"]["organizationId"],
  zone: DateTime.TimeZone,
  date: string
): Effect.Effect<number, PersistenceError, PostStore> =>
  Effect.gen(function*() {
    const [y, m, d] = date.split("-").map(Number) as [number, number, number]
    const start = QueuePolicy.resolveWallClock(zone, { year: y, month: m, day: d }, 0, 0).at
    const next = QueuePolicy.addDays({ year: y, month: m, day: d }, 1)
    const end = QueuePolicy.resolveWallClock(zone, next, 0, 0).at
    const page = yield* (yield* PostStore).list({
      organizationId,
      platforms: ["x"],
      scheduledAfter: start,
      scheduledBefore: DateTime.subtract(end, { millis: 1 }),
      sort: "scheduled_for",
      order: "asc",
      limit: 100,
      offset: 0
    })
    const counted = page.items.reduce(
      (n, r) => n + Math.max(1, r.destinations.filter((dd) => dd.platform === "x").length),
      0
    )
    return counted + Math.max(0, page.total - page.items.length)
  })
