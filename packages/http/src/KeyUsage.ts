/**
 * "Last used" of API keys for the developer page. Writing it on every request would add a store
 * write to every API call, so each process records a key's use at most once a minute, in a fiber of
 * its own (the response never waits for it, and a failed write only leaves the instant older).
 */
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import type { ApiKeyId } from "@herald/core/kernel/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { globalValue } from "effect/GlobalValue"

/** How stale "last used" may be. */
export const resolutionMillis = 60_000

const recorded = globalValue(Symbol.for("@herald/http/KeyUsage/recorded"), () => new Map<ApiKeyId, number>())

/** Records the key's use at `now` unless this process did so within the last minute. */
export const markUsed = (id: ApiKeyId, now: DateTime.Utc): Effect.Effect<void, never, ApiKeyStore> =>
  Effect.suspend(() => {
    const at = DateTime.toEpochMillis(now)
    const last = recorded.get(id)
    if (last !== undefined && at - last < resolutionMillis) return Effect.void
    // A process serving very many keys forgets the memo now and then (one more write per key).
    if (recorded.size >= 10_000) recorded.clear()
    recorded.set(id, at)
    return Effect.flatMap(ApiKeyStore, (keys) => Effect.forkDaemon(keys.markUsed(id, now).pipe(Effect.ignore))).pipe(
      Effect.asVoid
    )
  })
