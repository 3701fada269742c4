import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Either, FastCheck as fc, Layer, Option } from "effect"
import { OrganizationId, PostId, QueueId } from "../src/kernel/Ids.js"
import { Queue, QueueOpening } from "../src/workflow/Queue.js"
import * as QueuePolicy from "../src/workflow/QueuePolicy.js"
import * as Queues from "../src/workflow/Queues.js"
import { QueueStore } from "../src/workflow/QueueStore.js"

const org = OrganizationId.make("00000000-0000-4000-8000-000000000001")
const utc = (iso: string) => DateTime.unsafeMake(iso)
const iso = (t: DateTime.Utc) => DateTime.formatIso(t)

/** An in-memory QueueStore: one queue, claims as a map instant -> post. */
const memoryStore = (queue: Option.Option<Queue>) => {
  const claims = new Map<number, string>()
  const store = QueueStore.of({
    find: () => Effect.succeed(queue),
    save: () => Effect.void,
    taken: (_org, after, until) =>
      Effect.succeed(
        [...claims.keys()].filter((t) => t > DateTime.toEpochMillis(after) && t <= DateTime.toEpochMillis(until))
      ),
    claim: (_org, at, postId) =>
      Effect.sync(() => {
        const t = DateTime.toEpochMillis(at)
        if (claims.has(t)) return false
        claims.set(t, postId)
        return true
      }),
    pruneClaims: (before, limit) =>
      Effect.sync(() => {
        const old = [...claims.keys()].filter((t) => t < DateTime.toEpochMillis(before)).slice(0, limit)
        for (const t of old) claims.delete(t)
        return old.length
      })
  })
  return { claims, layer: Layer.succeed(QueueStore, store) }
}

const queueOf = (timezone: string, openings: ReadonlyArray<QueueOpening>) =>
  new Queue({
    id: QueueId.make("00000000-0000-4000-8000-00000000000a"),
    organizationId: org,
    timezone,
    openings,
    createdAt: utc("2026-01-01T00:00:00Z")
  })

const postId = (n: number) => PostId.make(`00000000-0000-4000-8000-${String(n).padStart(12, "0")}`)

describe("QueuePolicy.resolveWallClock", () => {
  const at = (zone: string, date: string, time: string) => {
    const [y, m, d] = date.split("-").map(Number) as [number, number, number]
    const [h, mm] = time.split(":").map(Number) as [number, number]
    return QueuePolicy.resolveWallClock(DateTime.zoneUnsafeMakeNamed(zone), { year: y, month: m, day: d }, h, mm)
  }

  it("a spring-forward gap is shifted forward by the gap (New York, 60 minutes)", () => {
    const r = at("America/New_York", "2026-03-08", "02:30")
    expect(r._tag).toBe("Gap")
    expect(iso(r.at)).toBe("2026-03-08T07:30:00.000Z") // 03:30 EDT
    expect(r._tag === "Gap" && r.gapMinutes).toBe(60)
  })

  it("Lord Howe's 30-minute gap is shifted by 30 minutes", () => {
    const r = at("Australia/Lord_Howe", "2026-10-04", "02:15")
    expect(r._tag).toBe("Gap")
    expect(r._tag === "Gap" && r.gapMinutes).toBe(30)
    expect(iso(r.at)).toBe("2026-10-03T15:45:00.000Z") // 02:45 at +11:00
  })

  it("a fall-back ambiguity takes the earlier instant", () => {
    const ny = at("America/New_York", "2026-11-01", "01:30")
    expect(ny._tag).toBe("Ambiguous")
    expect(iso(ny.at)).toBe("2026-11-01T05:30:00.000Z") // 01:30 EDT, not EST
    const london = at("Europe/London", "2026-10-25", "01:15")
    expect(london._tag).toBe("Ambiguous")
    expect(iso(london.at)).toBe("2026-10-25T00:15:00.000Z")
    const lordHowe = at("Australia/Lord_Howe", "2026-04-05", "01:45")
    expect(lordHowe._tag).toBe("Ambiguous")
    expect(iso(lordHowe.at)).toBe("2026-04-04T14:45:00.000Z") // 01:45 at +11:00
  })

  it("an ordinary time is exact (Kolkata has no DST, +05:30)", () => {
    const r = at("Asia/Kolkata", "2026-03-08", "09:00")
    expect(r._tag).toBe("Exact")
    expect(iso(r.at)).toBe("2026-03-08T03:30:00.000Z")
  })
})

describe("QueuePolicy.parseSlots", () => {
  it("reads days, ranges and times", () => {
    const parsed = QueuePolicy.parseSlots("mon-fri 09:00,12:30;sat 10:00")
    expect(Either.isRight(parsed)).toBe(true)
    const openings = Either.getOrThrow(parsed)
    expect(openings).toHaveLength(11)
    expect(openings.filter((o) => o.weekday === 6).map((o) => o.time)).toEqual(["10:00"])
    expect(openings.some((o) => o.weekday === 7)).toBe(false)
    expect(QueuePolicy.formatSlots(openings)).toBe(
      "mon 09:00,12:30;tue 09:00,12:30;wed 09:00,12:30;thu 09:00,12:30;fri 09:00,12:30;sat 10:00"
    )
  })
  it("wraps ranges over the week, merges duplicates, and reads the empty string as no openings", () => {
    expect(Either.getOrThrow(QueuePolicy.parseSlots("sat-mon 9:05;sun 09:05")).map((o) => o.weekday)).toEqual([1, 6, 7])
    expect(Either.getOrThrow(QueuePolicy.parseSlots(""))).toEqual([])
  })
  it("refuses unknown days and bad times", () => {
    expect(Either.isLeft(QueuePolicy.parseSlots("funday 09:00"))).toBe(true)
    expect(Either.isLeft(QueuePolicy.parseSlots("mon 24:00"))).toBe(true)
    expect(Either.isLeft(QueuePolicy.parseSlots("mon"))).toBe(true)
  })
})

describe("Queues.allocate", () => {
  it.effect("missing, empty and full queues are told apart", () =>
    Effect.gen(function*() {
      const now = utc("2026-03-01T00:00:00Z")
      const missing = memoryStore(Option.none())
      expect((yield* Queues.allocate(org, now, postId(1)).pipe(Effect.provide(missing.layer)))._tag).toBe("Missing")
      const empty = memoryStore(Option.some(queueOf("UTC", [])))
      expect((yield* Queues.allocate(org, now, postId(1)).pipe(Effect.provide(empty.layer)))._tag).toBe("Empty")
      // One weekly opening: 13 weeks of the 90-day horizon, then full.
      const weekly = memoryStore(Option.some(queueOf("UTC", [new QueueOpening({ weekday: 1, time: "09:00" })])))
      const tags: Array<string> = []
      for (let i = 0; i < 14; i++) {
        tags.push((yield* Queues.allocate(org, now, postId(i)).pipe(Effect.provide(weekly.layer)))._tag)
      }
      expect(tags.filter((t) => t === "Slot")).toHaveLength(13)
      expect(tags.at(-1)).toBe("Full")
    }))
})

// ---------------------------------------------------------------------------------------------------
// Property: never two posts in one opening, never in the past, across DST transitions
// ---------------------------------------------------------------------------------------------------

const zones = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata"] as const

/** Instants a few days before DST transitions of 2026 in those zones. */
const transitionStarts = [
  "2026-03-06T00:00:00Z", // New York springs forward 03-08
  "2026-03-27T12:00:00Z", // London 03-29
  "2026-04-03T00:00:00Z", // Lord Howe falls back 04-05
  "2026-10-02T00:00:00Z", // Lord Howe springs forward 10-04
  "2026-10-23T00:00:00Z", // London falls back 10-25
  "2026-10-30T00:00:00Z" // New York falls back 11-01
].map((s) => DateTime.toEpochMillis(utc(s)))

/** Times close to the transitions (00:00-03:59, quarter hours) plus ordinary ones. */
const timeArb = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(0, 15, 30, 45)),
  fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
).map(([h, m]) => `${QueuePolicy.pad2(h)}:${QueuePolicy.pad2(m)}`)

const openingArb = fc.record({ weekday: fc.integer({ min: 1, max: 7 }), time: timeArb })
  .map((o) => new QueueOpening(o))

const scenarioArb = fc.record({
  zone: fc.constantFrom(...zones),
  openings: fc.array(openingArb, { minLength: 1, maxLength: 8 }),
  start: fc.constantFrom(...transitionStarts),
  /** Minutes the clock moves before each allocation. */
  steps: fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 30 })
})

describe("queue allocation (property)", () => {
  it.prop(
    "every allocation is after its now, takes an opening's wall-clock (or the DST rule's instant), and no two share one",
    [scenarioArb],
    ([s]) => {
      const { claims, layer } = memoryStore(Option.some(queueOf(s.zone, s.openings)))
      const zone = DateTime.zoneUnsafeMakeNamed(s.zone)
      let now = s.start
      const allocated: Array<number> = []
      s.steps.forEach((step, i) => {
        now += step * 60_000
        const at = DateTime.unsafeMake(now)
        const result = Effect.runSync(Queues.allocate(org, at, postId(i)).pipe(Effect.provide(layer)))
        if (result._tag !== "Slot") throw new Error(`expected a slot, got ${result._tag}`)
        const t = DateTime.toEpochMillis(result.at)
        expect(t).toBeGreaterThan(now)
        allocated.push(t)
        // The instant is an opening's wall-clock on that date, resolved by the DST rule.
        const date = QueuePolicy.localDateOf(zone, result.at)
        const candidates = [date, QueuePolicy.addDays(date, -1)].flatMap((d) =>
          s.openings.filter((o) => o.weekday === QueuePolicy.weekdayOf(d)).map((o) => {
            const [h, m] = o.time.split(":").map(Number) as [number, number]
            return DateTime.toEpochMillis(QueuePolicy.resolveWallClock(zone, d, h, m).at)
          })
        )
        expect(candidates).toContain(t)
        // And it is the earliest free one: no opening between now and it was free.
        const earlier = QueuePolicy.occurrences(zone, s.openings, at).filter((o) => DateTime.toEpochMillis(o.at) < t)
        for (const o of earlier) expect(claims.has(DateTime.toEpochMillis(o.at))).toBe(true)
      })
      expect(new Set(allocated).size).toBe(allocated.length)
    },
    { fastCheck: { numRuns: 150 } }
  )
})
