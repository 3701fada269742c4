import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { DestinationStatus } from "../src/Destination.js"
import { derivePostStatus, settledOutcome } from "../src/PostLifecycle.js"

const status = fc.constantFrom<DestinationStatus>("queued", "publishing", "published", "failed")
const statuses = fc.array(status, { maxLength: 12 })
const settled = fc.constantFrom<DestinationStatus>("published", "failed")
const runs = { fastCheck: { numRuns: 500 } }

describe("post status derived from destinations", () => {
  it.prop("a draft is a draft whatever its destinations", [statuses], ([ds]) => {
    expect(derivePostStatus({ isDraft: true, destinations: ds })).toBe("draft")
  }, runs)

  it.prop("all published is published", [fc.integer({ min: 1, max: 12 })], ([n]) => {
    expect(derivePostStatus({ isDraft: false, destinations: Array(n).fill("published") })).toBe("published")
  }, runs)

  it.prop("all failed is failed", [fc.integer({ min: 1, max: 12 })], ([n]) => {
    expect(derivePostStatus({ isDraft: false, destinations: Array(n).fill("failed") })).toBe("failed")
  }, runs)

  it.prop("nothing started is scheduled", [fc.integer({ min: 0, max: 12 })], ([n]) => {
    expect(derivePostStatus({ isDraft: false, destinations: Array(n).fill("queued") })).toBe("scheduled")
  }, runs)

  it.prop("any publishing destination makes the post publishing", [statuses, statuses], ([a, b]) => {
    expect(derivePostStatus({ isDraft: false, destinations: [...a, "publishing", ...b] })).toBe("publishing")
  }, runs)

  it.prop("queued beside settled destinations is still publishing", [fc.array(settled, { minLength: 1 }), fc.integer({ min: 1, max: 5 })], ([done, q]) => {
    expect(derivePostStatus({ isDraft: false, destinations: [...done, ...Array(q).fill("queued")] })).toBe("publishing")
  }, runs)

  it.prop("a settled mix is partially_failed", [fc.array(settled), fc.array(settled)], ([a, b]) => {
    const ds: Array<DestinationStatus> = [...a, "published", ...b, "failed"]
    expect(derivePostStatus({ isDraft: false, destinations: ds })).toBe("partially_failed")
  }, runs)

  it.prop("the order of destinations does not matter", [statuses, fc.integer()], ([ds, seed]) => {
    const shuffled = [...ds].sort((x, y) => ((x.charCodeAt(0) * seed) % 7) - ((y.charCodeAt(0) * seed) % 7))
    expect(derivePostStatus({ isDraft: false, destinations: shuffled })).toBe(
      derivePostStatus({ isDraft: false, destinations: ds })
    )
  }, runs)

  it.prop("settledOutcome agrees with the status once nothing is in flight", [fc.array(settled, { minLength: 1 })], ([ds]) => {
    expect(settledOutcome(ds)).toBe(derivePostStatus({ isDraft: false, destinations: ds }))
  }, runs)

  it.prop("settledOutcome is unsettled while anything is queued or publishing", [statuses, fc.constantFrom<DestinationStatus>("queued", "publishing")], ([ds, open]) => {
    expect(settledOutcome([...ds, open])).toBe("unsettled")
  }, runs)

  it("an empty destination list is unsettled", () => {
    expect(settledOutcome([])).toBe("unsettled")
  })
})
