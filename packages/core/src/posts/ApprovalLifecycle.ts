/**
 * The approval axis of a draft: `pending -> approved | changes_requested`. An edit of a post whose
 * changes were requested, or whose approval is unspent, resubmits it (`pending` again). One approval authorizes exactly one publish:
 * scheduling consumes it, and a consumed approval authorizes nothing more.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { Approval } from "../domain/Post.js"

export class ApprovalError extends Data.TaggedError("ApprovalError")<{
  readonly reason: "not_pending" | "note_required" | "not_approved" | "already_used"
  readonly message: string
}> {}

export const request = (): Approval => new Approval({ status: "pending", note: Option.none(), consumed: false })

export const approve = (approval: Approval, note: Option.Option<string>): Either.Either<Approval, ApprovalError> =>
  approval.status === "pending"
    ? Either.right(new Approval({ status: "approved", note, consumed: false }))
    : Either.left(new ApprovalError({ reason: "not_pending", message: `the post is ${approval.status}, not pending` }))

export const requestChanges = (approval: Approval, note: string): Either.Either<Approval, ApprovalError> => {
  if (note.trim() === "") {
    return Either.left(
      new ApprovalError({ reason: "note_required", message: "a note saying what to change is required" })
    )
  }
  return approval.status === "pending"
    ? Either.right(new Approval({ status: "changes_requested", note: Option.some(note), consumed: false }))
    : Either.left(new ApprovalError({ reason: "not_pending", message: `the post is ${approval.status}, not pending` }))
}

/**
 * An edit resubmits the post for review: a post whose changes were requested goes back to `pending`,
 * and so does an approved one whose approval is not yet spent, since the approval was for the content
 * as it was. A pending post stays pending; a spent approval (already scheduled) is left as it is.
 */
export const resubmitOnEdit = (approval: Approval): Approval =>
  approval.status === "changes_requested" || (approval.status === "approved" && !approval.consumed)
    ? new Approval({ status: "pending", note: Option.none(), consumed: false })
    : approval

export const mayPublish = (approval: Option.Option<Approval>): boolean =>
  Option.match(approval, { onNone: () => true, onSome: (a) => a.status === "approved" && !a.consumed })

/** Spends the approval on the publish it authorizes. A post that never asked for approval passes as is. */
export const consumeForPublish = (
  approval: Option.Option<Approval>
): Either.Either<Option.Option<Approval>, ApprovalError> => {
  if (Option.isNone(approval)) return Either.right(approval)
  const a = approval.value
  if (a.status !== "approved") {
    return Either.left(new ApprovalError({ reason: "not_approved", message: `the post is ${a.status}, not approved` }))
  }
  if (a.consumed) {
    return Either.left(
      new ApprovalError({ reason: "already_used", message: "the approval was already used for a publish" })
    )
  }
  return Either.right(Option.some(new Approval({ status: "approved", note: a.note, consumed: true })))
}
