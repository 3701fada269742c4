/**
 * While a backlog drains, the next claim goes ahead of recording. On SQLite one connection serves
 * the claims and the recorders' transactions in turn, so a claim that queued behind a recording (and
 * joined its group commit) started its whole batch late: a 10,000 burst's last start came within
 * milliseconds of its last record. A round's recorder therefore opens no transaction while a claim of
 * the same loop is under way (from the take-over sweep before the claim to the reads of the batch's
 * posts and accounts); outcomes meanwhile wait in the round's outbox, bounded by the loop's limit on
 * claimed destinations not yet recorded, and are then recorded in fewer, larger transactions.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"

export interface ClaimsFirst {
  /** Marks a claim under way until the returned function is called (calling it again does nothing). */
  readonly begin: () => () => void
  /** Completes once no claim is under way (at once when none is). */
  readonly clear: Effect.Effect<void>
}

export const make = (): ClaimsFirst => {
  let claiming = 0
  let waiting: Array<Deferred.Deferred<void>> = []
  return {
    begin: () => {
      claiming += 1
      let open = true
      return () => {
        if (!open) return
        open = false
        claiming -= 1
        if (claiming > 0) return
        const woken = waiting
        waiting = []
        for (const deferred of woken) Deferred.unsafeDone(deferred, Exit.void)
      }
    },
    clear: Effect.suspend(() => {
      if (claiming === 0) return Effect.void
      const deferred = Deferred.unsafeMake<void>(FiberId.none)
      waiting.push(deferred)
      return Deferred.await(deferred)
    })
  }
}

/** For a round run on its own (`runOnce`): no claim of another round can be waiting. */
export const none: ClaimsFirst = { begin: () => () => {}, clear: Effect.void }
