/**
 * The posting queue's allocation policy, pure: which instants a queue's recurring openings (weekday +
 * wall-clock `HH:MM` in the queue's IANA zone) name, and which one the next post takes.
 *
 * Daylight saving time (docs/decisions/queue.md "The posting queue"):
 * - an opening in a spring-forward gap (02:30 on the night New York jumps from 02:00 to 03:00) is
 *   shifted forward by the length of the gap (03:30): the post still goes out that day, as close as
 *   the clock allows, never earlier than the wall-clock asked for;
 * - an opening that is ambiguous in the fall (01:30 when 01:00-02:00 happens twice) is the earlier
 *   of the two instants; the repeated hour does not make a second opening.
 * This is the `compatible` disambiguation of `effect/DateTime` (and of Temporal). Two openings that
 * land on the same instant (02:30 shifted to 03:30 beside a 03:30 opening) are one opening.
 *
 * "Full" means no free opening within `horizonDays` (90) of now.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { QueueOpening } from "./Queue.js"

/** How far ahead allocation looks for a free opening; none free within it is a full queue. */
export const horizonDays = 90

export const weekdayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const
export type WeekdayName = typeof weekdayNames[number]

/** 1 = Monday ... 7 = Sunday. */
export const weekdayName = (weekday: number): WeekdayName => weekdayNames[(weekday - 1) % 7] as WeekdayName

export interface LocalDate {
  readonly year: number
  readonly month: number
  readonly day: number
}

/** A calendar date `offset` days after `date` (pure calendar arithmetic, no zone). */
export const addDays = (date: LocalDate, offset: number): LocalDate => {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + offset))
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }
}

/** 1 = Monday ... 7 = Sunday. */
export const weekdayOf = (date: LocalDate): number => {
  const sundayZero = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay()
  return sundayZero === 0 ? 7 : sundayZero
}

export const pad2 = (n: number): string => String(n).padStart(2, "0")

export const formatDate = (date: LocalDate): string => `${date.year}-${pad2(date.month)}-${pad2(date.day)}`

/** How a wall-clock time of a zone names an instant. */
export type WallClock =
  | { readonly _tag: "Exact"; readonly at: DateTime.Utc }
  /** In a spring-forward gap: `at` is the wall-clock shifted forward by `gapMinutes`. */
  | { readonly _tag: "Gap"; readonly at: DateTime.Utc; readonly gapMinutes: number }
  /** Happens twice (fall back): `at` is the earlier instant, `later` the other. */
  | { readonly _tag: "Ambiguous"; readonly at: DateTime.Utc; readonly later: DateTime.Utc }

const offsetMinutes = (zoned: DateTime.Zoned): number => Math.round(DateTime.zonedOffset(zoned) / 60_000)

/** The instant of `date` at `hours:minutes` in `zone`, with the DST rules above. */
export const resolveWallClock = (
  zone: DateTime.TimeZone,
  date: LocalDate,
  hours: number,
  minutes: number
): WallClock => {
  const parts = { year: date.year, month: date.month, day: date.day, hours, minutes, seconds: 0, millis: 0 }
  const make = (disambiguation: DateTime.Disambiguation) =>
    Option.getOrThrow(DateTime.makeZoned(parts, { timeZone: zone, adjustForTimeZone: true, disambiguation }))
  const compatible = make("compatible")
  const wall = DateTime.toParts(compatible)
  const at = DateTime.toUtc(compatible)
  if (wall.hours !== hours || wall.minutes !== minutes || wall.day !== date.day) {
    return { _tag: "Gap", at, gapMinutes: offsetMinutes(make("later")) - offsetMinutes(make("earlier")) }
  }
  // Outside a gap, `compatible` is the earlier instant; a later one means the time happens twice.
  const later = make("later")
  if (DateTime.toEpochMillis(later) !== DateTime.toEpochMillis(compatible)) {
    return { _tag: "Ambiguous", at, later: DateTime.toUtc(later) }
  }
  return { _tag: "Exact", at }
}

/** The calendar date, in `zone`, of an instant. */
export const localDateOf = (zone: DateTime.TimeZone, at: DateTime.Utc): LocalDate => {
  const parts = DateTime.toParts(DateTime.setZone(at, zone))
  return { year: parts.year, month: parts.month, day: parts.day }
}

/** One concrete occurrence of an opening. */
export interface Occurrence {
  readonly at: DateTime.Utc
  readonly date: LocalDate
  readonly weekday: number
  /** The opening's wall-clock time, as configured. */
  readonly time: string
  readonly dst: WallClock["_tag"]
}

const sortedOpenings = (openings: ReadonlyArray<QueueOpening>): ReadonlyArray<QueueOpening> =>
  [...openings].sort((a, b) => a.time.localeCompare(b.time))

/**
 * Every occurrence strictly after `after` and no later than `after + horizonDays`, in time order,
 * one per instant. Lazy: a caller that stops early computes only the days it reads.
 */
export function* occurrencesLazy(
  zone: DateTime.TimeZone,
  openings: ReadonlyArray<QueueOpening>,
  after: DateTime.Utc,
  days: number = horizonDays
): Generator<Occurrence> {
  const start = addDays(localDateOf(zone, after), -1)
  const from = DateTime.toEpochMillis(after)
  const end = from + days * 86_400_000
  const sorted = sortedOpenings(openings)
  const seen = new Set<number>()
  for (let i = 0; i <= days + 2; i++) {
    const date = addDays(start, i)
    const weekday = weekdayOf(date)
    // Within one local day the instants follow the times, except where a gap shifts one forward.
    const today: Array<Occurrence> = []
    for (const opening of sorted) {
      if (opening.weekday !== weekday) continue
      const [h, m] = opening.time.split(":").map(Number) as [number, number]
      const resolved = resolveWallClock(zone, date, h, m)
      const millis = DateTime.toEpochMillis(resolved.at)
      if (millis <= from || millis > end || seen.has(millis)) continue
      seen.add(millis)
      today.push({ at: resolved.at, date, weekday, time: opening.time, dst: resolved._tag })
    }
    today.sort((a, b) => DateTime.toEpochMillis(a.at) - DateTime.toEpochMillis(b.at))
    yield* today
  }
}

export const occurrences = (
  zone: DateTime.TimeZone,
  openings: ReadonlyArray<QueueOpening>,
  after: DateTime.Utc,
  days: number = horizonDays
): ReadonlyArray<Occurrence> => [...occurrencesLazy(zone, openings, after, days)]

/** The free occurrences (not in `taken`, epoch millis) after `now`, earliest first, at most `count`. */
export function* freeOccurrences(
  zone: DateTime.TimeZone,
  openings: ReadonlyArray<QueueOpening>,
  now: DateTime.Utc,
  taken: ReadonlySet<number>
): Generator<Occurrence> {
  for (const o of occurrencesLazy(zone, openings, now)) {
    if (!taken.has(DateTime.toEpochMillis(o.at))) yield o
  }
}

/** The first `count` free occurrences. */
export const nextFree = (
  zone: DateTime.TimeZone,
  openings: ReadonlyArray<QueueOpening>,
  now: DateTime.Utc,
  taken: ReadonlySet<number>,
  count: number
): ReadonlyArray<Occurrence> => {
  const out: Array<Occurrence> = []
  if (count <= 0) return out
  for (const o of freeOccurrences(zone, openings, now, taken)) {
    out.push(o)
    if (out.length >= count) break
  }
  return out
}

// ---------------------------------------------------------------------------------------------------
// The operators' slot notation: "mon-fri 09:00,12:30;sat 10:00"
// ---------------------------------------------------------------------------------------------------

const dayAliases: Record<string, number> = {
  mon: 1,
  monday: 1,
  tue: 2,
  tues: 2,
  tuesday: 2,
  wed: 3,
  wednesday: 3,
  thu: 4,
  thur: 4,
  thurs: 4,
  thursday: 4,
  fri: 5,
  friday: 5,
  sat: 6,
  saturday: 6,
  sun: 7,
  sunday: 7
}

const timePattern = /^([01]?\d|2[0-3]):([0-5]\d)$/

const parseDays = (raw: string): Either.Either<ReadonlyArray<number>, string> => {
  const days: Array<number> = []
  for (const part of raw.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "")) {
    if (part === "daily" || part === "everyday" || part === "all") {
      days.push(1, 2, 3, 4, 5, 6, 7)
      continue
    }
    const [a, b, ...rest] = part.split("-")
    const from = a === undefined ? undefined : dayAliases[a]
    const to = b === undefined ? from : dayAliases[b]
    if (rest.length > 0 || from === undefined || to === undefined) {
      return Either.left(`unknown day '${part}' (use mon..sun, a range such as mon-fri, or daily)`)
    }
    // A range may wrap the week: fri-mon is Friday to Monday.
    for (let d = from, n = 0; n < 7; d = d % 7 + 1, n++) {
      days.push(d)
      if (d === to) break
    }
  }
  return days.length === 0 ? Either.left(`no day in '${raw}'`) : Either.right(days)
}

/**
 * Parses `"mon-fri 09:00,12:30;sat 10:00"`: groups separated by `;`, each days then times. The empty
 * string is an empty queue. Duplicates are merged; the openings are sorted by weekday and time.
 */
export const parseSlots = (raw: string): Either.Either<ReadonlyArray<QueueOpening>, string> => {
  const openings = new Map<string, QueueOpening>()
  for (const group of raw.split(";").map((s) => s.trim()).filter((s) => s !== "")) {
    const match = /^(\S+)\s+(.+)$/.exec(group)
    if (match === null) return Either.left(`'${group}' needs days then times, e.g. "mon-fri 09:00,12:30"`)
    const days = parseDays(match[1] as string)
    if (Either.isLeft(days)) return Either.left(days.left)
    for (const t of (match[2] as string).split(/[,\s]+/).filter((s) => s !== "")) {
      const tm = timePattern.exec(t)
      if (tm === null) return Either.left(`'${t}' is not a 24-hour HH:MM time`)
      const time = `${pad2(Number(tm[1]))}:${tm[2]}`
      for (const weekday of days.right) openings.set(`${weekday} ${time}`, new QueueOpening({ weekday, time }))
    }
  }
  return Either.right(
    [...openings.values()].sort((a, b) => a.weekday - b.weekday || a.time.localeCompare(b.time))
  )
}

/** The openings back in the notation, one group per weekday: `"mon 09:00,12:30;sat 10:00"`. */
export const formatSlots = (openings: ReadonlyArray<QueueOpening>): string => {
  const byDay = new Map<number, Array<string>>()
  for (const o of openings) byDay.set(o.weekday, [...(byDay.get(o.weekday) ?? []), o.time])
  return [...byDay.entries()].sort(([a], [b]) => a - b)
    .map(([d, times]) => `${weekdayName(d).slice(0, 3)} ${[...times].sort().join(",")}`).join(";")
}
