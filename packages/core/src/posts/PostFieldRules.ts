/**
 * The field rules a post must meet beyond its body's shape: accounts in the organization, platform
 * settings and overrides, thread parts, schedule times, campaigns, limits.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SocialAccount } from "../domain/Account.js"
import { AccountStore } from "../accounts/AccountStore.js"
import * as ApiKey from "../access/ApiKey.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import { MediaId } from "../kernel/Ids.js"
import { type Platform } from "../domain/Platform.js"
import { PlatformContent, ThreadPost } from "../domain/Post.js"
import { Caller, maxAccountsPerPost, PostMedia } from "./PostPorts.js"
import { invalid } from "./PostBodies.js"

const isoPattern =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(?:\s*([Zz]|[+-]\d{2}(?::?\d{2})?))?$/

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * An ISO 8601 date-time (or date); without an offset it is read as UTC. None when it is not ISO 8601
 * or names no real instant (month 13, February 30...).
 */
export const parseInstant = (raw: string): Option.Option<DateTime.Utc> => {
  const m = isoPattern.exec(raw.trim())
  if (m === null) return Option.none()
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((s) => Number(s ?? "0"))
  const fraction = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000)
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return Option.none()
  if (hour > 23 || minute > 59 || second > 59) return Option.none()
  let offsetMinutes = 0
  const zone = m[8]
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "")
    const h = Number(digits.slice(0, 2))
    const mm = digits.length > 2 ? Number(digits.slice(2, 4)) : 0
    if (h > 23 || mm > 59) return Option.none()
    offsetMinutes = (zone.startsWith("-") ? -1 : 1) * (h * 60 + mm)
  }
  const millis = Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offsetMinutes * 60_000
  return Number.isFinite(millis) ? Option.some(DateTime.unsafeMake(millis)) : Option.none()
}

const ianaShape = /^(?:UTC|[A-Za-z][A-Za-z_-]*(?:\/[A-Za-z0-9_+-]+)*)$/

/** An IANA zone name (`Europe/Paris`, `UTC`); offsets such as `+02:00` are not zones. */
export const isIanaZone = (zone: string): boolean => ianaShape.test(zone) && Option.isSome(DateTime.zoneMakeNamed(zone))

export const checkTimezone = (zone: string | null | undefined): Effect.Effect<Option.Option<string>, DomainError> => {
  if (zone === undefined || zone === null) return Effect.succeed(Option.none())
  return isIanaZone(zone)
    ? Effect.succeed(Option.some(zone))
    : DomainError.fail(
      "invalid_timezone",
      `'${zone}' is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)`,
      {
        timezone: zone
      }
    )
}

/** `scheduled_for`, or its deprecated alias `scheduled_at`; both given must agree. */
export const scheduledValue = (
  body: { readonly scheduled_for?: string | null | undefined; readonly scheduled_at?: string | null | undefined }
): Effect.Effect<{ readonly raw: string | null | undefined; readonly field: string }, DomainError> => {
  const primary = body.scheduled_for
  const alias = body.scheduled_at
  if (primary !== undefined && primary !== null && alias !== undefined && alias !== null && primary !== alias) {
    const a = parseInstant(primary)
    const b = parseInstant(alias)
    if (Option.isNone(a) || Option.isNone(b) || !DateTime.Equivalence(a.value, b.value)) {
      return Effect.fail(invalid("scheduled_at", "scheduled_at is a deprecated alias of scheduled_for; they disagree"))
    }
  }
  if (primary !== undefined) return Effect.succeed({ raw: primary ?? alias, field: "scheduled_for" })
  return Effect.succeed({ raw: alias, field: "scheduled_at" })
}

export const parseScheduled = (raw: string, field: string): Effect.Effect<DateTime.Utc, DomainError> =>
  Option.match(parseInstant(raw), {
    onNone: () =>
      DomainError.fail("invalid_datetime", `${field} must be an ISO 8601 date-time, e.g. 2026-07-01T09:30:00Z`, {
        field,
        value: raw
      }),
    onSome: Effect.succeed
  })

export const mustBeAfter = (at: DateTime.Utc, earliest: DateTime.Utc, field: string, lead: string) =>
  DateTime.greaterThan(at, earliest)
    ? Effect.void
    : DomainError.fail("past_schedule_time", `${field} must be ${lead}`, {
      field,
      scheduled_for: DateTime.formatIso(at),
      earliest: DateTime.formatIso(earliest)
    })

/** `disableValidation` for class instances built from values that are already decoded. */
export const trusted = true

export const dedupe = <A>(xs: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(xs)]

/**
 * Resolves the targeted accounts: at most `maxAccountsPerPost`, each in the organization, allowed to
 * the key, and active. Duplicates are merged (first occurrence kept).
 */
export const resolveAccounts = (
  caller: Caller,
  ids: ReadonlyArray<number>
): Effect.Effect<ReadonlyArray<SocialAccount>, DomainError | PersistenceError, AccountStore> =>
  Effect.map(resolveAccountsFrom(caller, ids, "fresh"), (resolved) => resolved.accounts)

/**
 * `resolveAccounts`, on `AccountStore.listForWrite` when `source` is "for write": `fresh` false when
 * the list may be stale (the caller then decides no error on it and has the write re-validate).
 */
export const resolveAccountsFrom = (
  caller: Caller,
  ids: ReadonlyArray<number>,
  source: "fresh" | "for write"
): Effect.Effect<
  { readonly accounts: ReadonlyArray<SocialAccount>; readonly fresh: boolean },
  DomainError | PersistenceError,
  AccountStore
> =>
  Effect.gen(function*() {
    if (ids.length > maxAccountsPerPost) {
      return yield* DomainError.fail(
        "too_many_accounts",
        `A post may target at most ${maxAccountsPerPost} accounts; ${ids.length} were given`,
        { limit: maxAccountsPerPost, received: ids.length }
      )
    }
    const unique = dedupe(ids)
    if (unique.length === 0) return { accounts: [], fresh: true }
    const store = yield* AccountStore
    const listed = source === "fresh"
      ? { accounts: yield* store.list(caller.key.organizationId), fresh: true }
      : yield* store.listForWrite(caller.key.organizationId)
    const all = listed.accounts
    const byId = new Map(all.map((a) => [a.id as number, a]))
    const bad: Array<number> = []
    const inactive: Array<number> = []
    const found: Array<SocialAccount> = []
    for (const id of unique) {
      const account = byId.get(id)
      if (account === undefined || !ApiKey.canUseAccount(caller.key, account.id)) bad.push(id)
      else if (!account.isActive) inactive.push(id)
      else found.push(account)
    }
    if (bad.length > 0 || inactive.length > 0) {
      const parts = [
        ...(bad.length > 0 ? [`not found in this organization: ${bad.join(", ")}`] : []),
        ...(inactive.length > 0 ? [`inactive (reconnect them first): ${inactive.join(", ")}`] : [])
      ]
      return yield* DomainError.fail("invalid_accounts", `Invalid account_ids: ${parts.join("; ")}`, {
        invalid_account_ids: [...bad, ...inactive],
        not_found: bad,
        inactive
      })
    }
    return { accounts: found, fresh: listed.fresh }
  })

export const requireAccounts = (ids: ReadonlyArray<number> | null | undefined) =>
  ids === undefined || ids === null || ids.length === 0
    ? DomainError.fail(
      "invalid_accounts",
      "account_ids is required: give at least one account id (GET /accounts lists them), or save a draft with draft: true",
      { invalid_account_ids: [] }
    )
    : Effect.succeed(ids)

export const checkMedia = (
  caller: Caller,
  post: { readonly mediaIds: ReadonlyArray<MediaId>; readonly threadPosts: ReadonlyArray<ThreadPost> },
  platforms: ReadonlyArray<Platform>,
  platformContent: PlatformContent,
  mode: "draft" | "publish"
) =>
  Effect.flatMap(Effect.serviceOption(PostMedia), (media) =>
    Option.match(media, {
      onNone: () => Effect.void,
      onSome: (m) =>
        m.check({
          organizationId: caller.key.organizationId,
          mediaIds: post.mediaIds,
          threadMediaIds: post.threadPosts.flatMap((p) => p.media_ids ?? []),
          platforms,
          platformContent,
          mode
        })
    }))
