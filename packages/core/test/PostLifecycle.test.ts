import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc } from "effect"
import { DestinationStatus } from "../src/domain/Destination.js"
import type { PostStatus } from "../src/domain/Post.js"
import { derivePostStatus, settledOutcome } from "../src/posts/PostLifecycle.js"

const status = Arbitrary.make(DestinationStatus)
const statuses = fc.array(status, { maxLength: 12 })
const settled = fc.constantFrom<DestinationStatus>("published", "failed")
const runs = { fastCheck: { numRuns: 500 } }

const live = (destinations: ReadonlyArray<DestinationStatus>) => derivePostStatus({ isDraft: false, destinations })

/**
 * The lead's rule written out as a table over which statuses are present (the SQL filter computes the
 * same thing): it depends on nothing else, neither order nor multiplicity.
 */
const byPresence = (ds: ReadonlyArray<DestinationStatus>): PostStatus => {
  const has = (s: DestinationStatus) => ds.includes(s)
  const key = `${has("queued") ? "q" : "-"}${has("publishing") ? "p" : "-"}${has("published") ? "P" : "-"}${
    has("failed") ? "F" : "-"
  }`
  const table: Record<string, PostStatus> = {
    "----": "scheduled",
    "q---": "scheduled",
    "-p--": "publishing",
    "qp--": "publishing",
    "-pP-": "publishing",
    "-p-F": "publishing",
    "-pPF": "publishing",
    "qpP-": "publishing",
    "qp-F": "publishing",
    "qpPF": "publishing",
    "q-P-": "publishing",
    "q--F": "publishing",
    "q-PF": "publishing",
    "--P-": "published",
    "---F": "failed",
    "--PF": "partially_failed"
  }
  return table[key]!
}

describe("post status derived from destinations", () => {
  it.prop("matches the rule table for every destination list", [statuses], ([ds]) => {
    expect(live(ds)).toBe(byPresence(ds))
  }, { fastCheck: { numRuns: 1000 } })

  it.prop("a draft is a draft whatever its destinations", [statuses], ([ds]) => {
    expect(derivePostStatus({ isDraft: true, destinations: ds })).toBe("draft")
  }, runs)

  it.prop("all published is published", [fc.integer({ min: 1, max: 12 })], ([n]) => {
    expect(live(Array(n).fill("published"))).toBe("published")
  }, runs)

  it.prop("all failed is failed", [fc.integer({ min: 1, max: 12 })], ([n]) => {
    expect(live(Array(n).fill("failed"))).toBe("failed")
  }, runs)

  it.prop("nothing started (no destinations, or all queued) is scheduled", [fc.integer({ min: 0, max: 12 })], ([n]) => {
    expect(live(Array(n).fill("queued"))).toBe("scheduled")
  }, runs)

  it.prop("any publishing destination makes the post publishing", [statuses, statuses], ([a, b]) => {
    expect(live([...a, "publishing", ...b])).toBe("publishing")
  }, runs)

  it.prop("an immediate publish whose destinations are all queued (due now) is publishing, not scheduled", [
    fc.integer({ min: 1, max: 12 })
  ], ([n]) => {
    expect(derivePostStatus({ isDraft: false, destinations: Array(n).fill("queued"), immediate: true })).toBe(
      "publishing"
    )
    expect(derivePostStatus({ isDraft: false, destinations: [], immediate: true })).toBe("scheduled")
    expect(derivePostStatus({ isDraft: true, destinations: [], immediate: true })).toBe("draft")
  })

  it.prop("queued beside settled destinations is still publishing", [
    fc.array(settled, { minLength: 1 }),
    fc.integer({ min: 1, max: 5 })
  ], ([done, q]) => {
    expect(live([...done, ...Array(q).fill("queued")])).toBe("publishing")
  }, runs)

  it.prop("a settled mix is partially_failed", [fc.array(settled), fc.array(settled)], ([a, b]) => {
    expect(live([...a, "published", ...b, "failed"])).toBe("partially_failed")
  }, runs)

  it.prop("adding a published destination to an all-published set keeps it published", [
    fc.integer({ min: 1, max: 12 })
  ], ([n]) => {
    const all: Array<DestinationStatus> = Array(n).fill("published")
    expect(live([...all, "published"])).toBe(live(all))
  }, runs)

  it.prop("one failure among published destinations makes it partially_failed, and one success among failed ones too", [
    fc.integer({ min: 1, max: 12 })
  ], ([n]) => {
    expect(live([...Array<DestinationStatus>(n).fill("published"), "failed"])).toBe("partially_failed")
    expect(live([...Array<DestinationStatus>(n).fill("failed"), "published"])).toBe("partially_failed")
  }, runs)

  it.prop(
    "the order of destinations does not matter",
    [statuses.chain((ds) => fc.tuple(fc.constant(ds), fc.shuffledSubarray(ds, { minLength: ds.length })))],
    ([[ds, permuted]]) => {
      expect(live(permuted)).toBe(live(ds))
    },
    runs
  )

  it.prop(
    "settledOutcome agrees with the status once nothing is in flight",
    [fc.array(settled, { minLength: 1 })],
    ([ds]) => {
      expect(settledOutcome(ds)).toBe(live(ds))
    },
    runs
  )

  it.prop("settledOutcome is unsettled exactly while the status is scheduled or publishing", [statuses], ([ds]) => {
    const s = live(ds)
    expect(settledOutcome(ds) === "unsettled").toBe(s === "scheduled" || s === "publishing")
  }, runs)

  it.prop("settledOutcome is unsettled while anything is queued or publishing", [
    statuses,
    fc.constantFrom<DestinationStatus>("queued", "publishing")
  ], ([ds, open]) => {
    expect(settledOutcome([...ds, open])).toBe("unsettled")
  }, runs)

  it("an empty destination list is unsettled", () => {
    expect(settledOutcome([])).toBe("unsettled")
  })
})
