import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc, Option } from "effect"
import * as ApprovalLifecycle from "../src/posts/ApprovalLifecycle.js"
import { Approval, type ApprovalStatus } from "../src/domain/Post.js"

const approvalArb = fc.record({
  status: fc.constantFrom<ApprovalStatus>("pending", "approved", "changes_requested"),
  note: fc.option(fc.string(), { nil: undefined }),
  consumed: fc.boolean()
}).map((a) => new Approval({ status: a.status, note: Option.fromNullable(a.note), consumed: a.consumed }))
const runs = { fastCheck: { numRuns: 500 } }

describe("approval", () => {
  it.prop(
    "only a pending post can be approved",
    [approvalArb, fc.option(fc.string(), { nil: undefined })],
    ([a, note]) => {
      const result = ApprovalLifecycle.approve(a, Option.fromNullable(note))
      expect(Either.isRight(result)).toBe(a.status === "pending")
      if (Either.isRight(result)) {
        expect(result.right.status).toBe("approved")
        expect(result.right.consumed).toBe(false)
      }
    },
    runs
  )

  it.prop(
    "changes can be requested only on a pending post, and only with a note",
    [approvalArb, fc.string()],
    ([a, note]) => {
      const result = ApprovalLifecycle.requestChanges(a, note)
      expect(Either.isRight(result)).toBe(a.status === "pending" && note.trim() !== "")
      if (Either.isRight(result)) expect(result.right.note).toEqual(Option.some(note))
    },
    runs
  )

  it.prop("an edit resubmits a post with changes requested or an unspent approval, and leaves the others alone", [
    approvalArb
  ], ([a]) => {
    const after = ApprovalLifecycle.resubmitOnEdit(a)
    if (a.status === "changes_requested" || (a.status === "approved" && !a.consumed)) {
      expect([after.status, after.consumed]).toEqual(["pending", false])
    } else expect(after).toBe(a)
  }, runs)

  it.prop("one approval authorizes exactly one publish", [fc.option(fc.string(), { nil: undefined })], ([note]) => {
    const approved = Either.getOrThrow(
      ApprovalLifecycle.approve(ApprovalLifecycle.request(), Option.fromNullable(note))
    )
    expect(ApprovalLifecycle.mayPublish(Option.some(approved))).toBe(true)
    const spent = Either.getOrThrow(ApprovalLifecycle.consumeForPublish(Option.some(approved)))
    expect(ApprovalLifecycle.mayPublish(spent)).toBe(false)
    const again = ApprovalLifecycle.consumeForPublish(spent)
    expect(Either.isLeft(again) && again.left.reason).toBe("already_used")
  }, runs)

  it.prop("publishing needs an approved, unused approval (or none asked for)", [
    fc.option(approvalArb, { nil: undefined })
  ], ([a]) => {
    const approval = Option.fromNullable(a)
    const expected = a === undefined || (a.status === "approved" && !a.consumed)
    expect(ApprovalLifecycle.mayPublish(approval)).toBe(expected)
    expect(Either.isRight(ApprovalLifecycle.consumeForPublish(approval))).toBe(expected)
  }, runs)

  type Op = "approve" | "requestChanges" | "requestChangesNoNote" | "edit" | "publish"
  const op = fc.constantFrom<Op>("approve", "requestChanges", "requestChangesNoNote", "edit", "publish")

  it.prop("over any sequence of reviews, edits and publishes, each publish spends its own approval", [
    fc.array(op, { maxLength: 40 })
  ], ([ops]) => {
    let current = Option.some(ApprovalLifecycle.request())
    let unspentApprovals = 0
    let publishes = 0
    for (const o of ops) {
      const a = Option.getOrThrow(current)
      if (o === "approve" || o === "requestChanges" || o === "requestChangesNoNote") {
        const next = o === "approve"
          ? ApprovalLifecycle.approve(a, Option.none())
          : ApprovalLifecycle.requestChanges(a, o === "requestChanges" ? "fix the link" : "  ")
        if (Either.isRight(next)) {
          current = Option.some(next.right)
          if (o === "approve") unspentApprovals++
        }
        if (o === "requestChangesNoNote") expect(Either.isLeft(next)).toBe(true)
      } else if (o === "edit") {
        // The approval was for the content before the edit: an unspent one is withdrawn.
        if (a.status === "approved" && !a.consumed) unspentApprovals--
        current = Option.some(ApprovalLifecycle.resubmitOnEdit(a))
      } else {
        const spent = ApprovalLifecycle.consumeForPublish(current)
        if (Either.isRight(spent)) {
          publishes++
          unspentApprovals--
          current = spent.right
        }
      }
      expect(unspentApprovals).toBeGreaterThanOrEqual(0)
      expect(ApprovalLifecycle.mayPublish(current)).toBe(unspentApprovals > 0)
    }
    expect(publishes).toBeLessThanOrEqual(1)
  }, runs)

  it.prop("a post sent back cannot be approved until it is edited, then it can", [
    fc.string({ minLength: 1 }).filter((n) => n.trim() !== "")
  ], ([note]) => {
    const back = Either.getOrThrow(ApprovalLifecycle.requestChanges(ApprovalLifecycle.request(), note))
    expect(back.status).toBe("changes_requested")
    const early = ApprovalLifecycle.approve(back, Option.none())
    expect(Either.isLeft(early) && early.left.reason).toBe("not_pending")
    const edited = ApprovalLifecycle.resubmitOnEdit(back)
    expect(edited.status).toBe("pending")
    expect(Either.isRight(ApprovalLifecycle.approve(edited, Option.none()))).toBe(true)
  }, runs)
})
