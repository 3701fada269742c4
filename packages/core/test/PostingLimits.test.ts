import { describe, expect, it } from "@effect/vitest"
import { ApiKey } from "@herald/core/access/ApiKey"
import { ApiKeyId, OrganizationId, UserId } from "@herald/core/kernel/Ids"
import * as PostingLimits from "@herald/core/access/PostingLimits"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"

/** An in-memory UsageCounters, enough for the pure windows. */
const memoryCounters = Layer.sync(UsageCounters, () => {
  const counts = new Map<string, number>()
  const id = (key: string, end: DateTime.Utc) => `${key}@${DateTime.toEpochMillis(end)}`
  return UsageCounters.of({
    increment: (key, end, amount) =>
      Effect.sync(() => {
        const next = (counts.get(id(key, end)) ?? 0) + amount
        counts.set(id(key, end), next)
        return next
      }),
    get: (key, end) => Effect.sync(() => counts.get(id(key, end)) ?? 0),
    purge: () => Effect.succeed(0)
  })
})

const key = (createdBy: Option.Option<string>) =>
  new ApiKey({
    id: ApiKeyId.make("00000000-0000-4000-8000-0000000000aa"),
    organizationId: OrganizationId.make("00000000-0000-4000-8000-0000000000bb"),
    createdBy: Option.map(createdBy, UserId.make),
    name: "k",
    hint: "pe_live_0000",
    hash: "h",
    scopes: ["read", "write"],
    accountIds: Option.none(),
    expiresAt: Option.none(),
    revokedAt: Option.none(),
    createdAt: DateTime.unsafeMake(0)
  })

const start = DateTime.unsafeMake("2026-07-01T10:00:30Z")

describe("PostingLimits", () => {
  it("counts against the key's creating user, else the key's organization (a key is an organization credential)", () => {
    expect(PostingLimits.subjectOf(key(Option.some("00000000-0000-4000-8000-0000000000cc")))).toBe(
      "user:00000000-0000-4000-8000-0000000000cc"
    )
    const orgKey = key(Option.none())
    expect(PostingLimits.subjectOf(orgKey)).toBe(`org:${orgKey.organizationId}`)
  })

  it("windows are aligned to the UTC minute, hour and day", () => {
    expect(DateTime.formatIso(PostingLimits.windowEnd(start, "minute"))).toBe("2026-07-01T10:01:00.000Z")
    expect(DateTime.formatIso(PostingLimits.windowEnd(start, "hour"))).toBe("2026-07-01T11:00:00.000Z")
    expect(DateTime.formatIso(PostingLimits.windowEnd(start, "day"))).toBe("2026-07-02T00:00:00.000Z")
  })

  it("scheduled posts have no daily cap", () => {
    expect(PostingLimits.periodsOf(PostingLimits.defaults, "scheduled")).toEqual([["minute", 100], ["hour", 1000]])
    expect(PostingLimits.periodsOf(PostingLimits.defaults, "immediate")).toEqual([
      ["minute", 20],
      ["hour", 200],
      ["day", 1000]
    ])
  })

  it.effect("the 21st immediate publish of a minute is refused with post_limit_reached", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(start))
      for (let i = 0; i < 20; i++) yield* PostingLimits.consume("user:u", "immediate")
      const error = yield* Effect.flip(PostingLimits.consume("user:u", "immediate"))
      expect(error._tag).toBe("DomainError")
      if (error._tag !== "DomainError") return
      expect(error.code).toBe("post_limit_reached")
      expect(error.details).toEqual({
        limit: 20,
        remaining: 0,
        reset_at: "2026-07-01T10:01:00.000Z",
        publish_mode: "immediate",
        period: "minute"
      })
      // Scheduled posts use their own allowance, untouched by the immediate one.
      yield* PostingLimits.consume("user:u", "scheduled")
      // Another user is not affected.
      yield* PostingLimits.consume("user:other", "immediate")
      // The next minute is a new window.
      yield* TestClock.adjust("1 minute")
      yield* PostingLimits.consume("user:u", "immediate")
    }).pipe(Effect.provide(memoryCounters)))

  it.effect("the day's 1001st immediate publish is daily_limit_reached", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(start))
      const allowances: PostingLimits.Allowances = { immediate: { day: 3 }, scheduled: {} }
      const consume = PostingLimits.consume("user:u", "immediate").pipe(
        Effect.provideService(PostingLimits.PostingAllowances, allowances)
      )
      yield* consume
      yield* consume
      yield* consume
      const error = yield* Effect.flip(consume)
      expect(error._tag === "DomainError" && error.code).toBe("daily_limit_reached")
      expect(PostingLimits.exceeded("immediate", "day", 1000, start).code).toBe("daily_limit_reached")
    }).pipe(Effect.provide(memoryCounters)))

  it.effect("101 scheduled posts in a minute: the 101st is refused, with publish_mode scheduled", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(start))
      for (let i = 0; i < 100; i++) yield* PostingLimits.consume("user:u", "scheduled")
      const error = yield* Effect.flip(PostingLimits.consume("user:u", "scheduled"))
      expect(error._tag === "DomainError" && error.details).toMatchObject({ limit: 100, publish_mode: "scheduled" })
    }).pipe(Effect.provide(memoryCounters)))
})
