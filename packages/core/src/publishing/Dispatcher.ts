/**
 * The publishing engine: claims due destinations, publishes them through their platform client and
 * records each outcome with its events in one transaction (the outbox).
 *
 * - A claim is exclusive and leased (`DispatchStore.claimDue`); its `post.publishing` events are written
 *   in the claim's transaction.
 * - An outcome is written fenced by the claim (`DispatchStore.complete`); events are appended only when
 *   the fenced write took effect, so a worker that lost its lease writes nothing.
 * - Leases are short (30 s) and renewed every 5 s while a publish is in flight, so a long upload keeps
 *   its claim. A destination whose process died mid-publish (its heartbeat went stale, or its lease ran
 *   out) is taken over by any live process's sweep and never re-sent blindly: its platform is asked
 *   whether the attempt reached it (`PlatformClient.findPublished`). Found: `published`. Absent:
 *   re-queued. The platform cannot tell: `failed` with an error saying the outcome is unknown.
 * - The publish deadline covers the main post only. A client's follow-ups (`PublishResult.followUps`:
 *   thread parts, first comment) run after `published` is recorded, under their own timeout, and never
 *   change the destination: a slow follow-up cannot make the engine retry a post that is out.
 *
 * This module is the engine's entry point; its parts are modules of their own: the ports it uses
 * (`kernel/DispatchSignal`, `media/DispatchMedia`), options (`DispatchOptions`), outcomes (`DispatchOutcome`) and events
 * (`DispatchEvents`), building a request (`PublishRequests`), publishing one claim (`PublishClaim`),
 * recording outcomes (`RecordOutcome`), settling abandoned attempts (`AbandonedClaims`), claiming and
 * holding a batch (`ClaimBatch`), a round's publishes (`PublishRound`), the loop (`DispatchLoop`) and
 * its log lines (`DispatchLogs`).
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DispatchStore } from "./DispatchStore.js"
import type { PersistenceError } from "../kernel/Errors.js"

export { DispatchMedia } from "../media/DispatchMedia.js"
export type { MediaTarget } from "../media/DispatchMedia.js"
export { DispatchSignal, layerSignal, makeSignal, poke } from "../kernel/DispatchSignal.js"
export type { Options } from "./DispatchOptions.js"
export { absentOutcomeMessage, unknownOutcomeMessage } from "./DispatchOutcome.js"
export type { Outcome, RoundSummary } from "./DispatchOutcome.js"
export { buildRequest, requestWithoutMedia } from "./PublishRequests.js"
export type { Loaded } from "./PublishClaim.js"
export { lockPost } from "../posts/PostLock.js"
export { record, recordAll } from "./RecordOutcome.js"
export type { Pending } from "./RecordOutcome.js"
export { abandonedOutcome, askPlatform } from "./AbandonedClaims.js"
export { run, runOnce } from "./DispatchLoop.js"

// ---------------------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------------------

/**
 * How late the oldest due destination is: zero when nothing queued is past due. `GET /health` reports
 * it; a growing value means the workers do not keep up (or none runs).
 */
export const oldestDueLag: Effect.Effect<Duration.Duration, PersistenceError, DispatchStore> = Effect.gen(
  function*() {
    const dispatch = yield* DispatchStore
    const next = yield* dispatch.nextDueAt
    if (Option.isNone(next)) return Duration.zero
    const now = yield* DateTime.now
    const late = DateTime.toEpochMillis(now) - DateTime.toEpochMillis(next.value)
    return late > 0 ? Duration.millis(late) : Duration.zero
  }
)
