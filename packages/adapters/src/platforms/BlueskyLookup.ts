/**
 * Whether a publish attempt whose outcome is unknown reached the account's Bluesky repo: its posts
 * read back newest first, ordered by the creation time their record keys (TIDs) carry.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { PublishedAnswer, PublishedLookup, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { field, stringField } from "./internal/PlatformHttp.js"
import { postUrl } from "./BlueskyPublish.js"
import * as BlueskySession from "./BlueskySession.js"
import { unexpected, type Xrpc } from "./BlueskyXrpc.js"

const tidAlphabet = "234567abcdefghijklmnopqrstuvwxyz"

/**
 * The creation time (ms) a TID record key carries, or undefined for a key that is not a TID. Record
 * keys of posts are TIDs minted when the record was created, so they order a repo's posts by creation
 * even when a client backdated `createdAt`.
 */
export const tidMillis = (rkey: string): number | undefined => {
  if (!/^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/.test(rkey)) return undefined
  let value = 0n
  for (const c of rkey) value = value * 32n + BigInt(tidAlphabet.indexOf(c))
  return Number((value >> 10n) / 1000n)
}

/** How far `createdAt` (the publishing host's clock) may sit outside the attempt's window. */
const lookupSkewMillis = 60_000
/** Pages of 100 posts read at most; an account that posted more inside the window cannot be told. */
const lookupMaxPages = 5

/**
 * Whether an attempt reached the account's repo: its posts newest first (`listRecords` at the PDS,
 * which answers for its own repo at once), looking for a top-level post with exactly the text sent,
 * created inside the attempt's window. Absent only once the listing went past the window.
 */
export const findPublished = (
  xrpc: Xrpc,
  defaultService: string,
  lookup: PublishedLookup
): Effect.Effect<PublishedAnswer, PublishError> =>
  Effect.gen(function*() {
    const scope = yield* BlueskySession.open(xrpc, defaultService, Redacted.value(lookup.credentials))
    const since = lookup.since.epochMillis - lookupSkewMillis
    const until = lookup.until.epochMillis + lookupSkewMillis
    let cursor: string | undefined
    for (let page = 0; page < lookupMaxPages; page++) {
      const body = yield* scope.authed((session) =>
        xrpc.call(
          HttpClientRequest.get(`${session.pds}/xrpc/com.atproto.repo.listRecords`).pipe(
            HttpClientRequest.bearerToken(session.accessJwt),
            HttpClientRequest.setUrlParams({
              repo: session.did,
              collection: "app.bsky.feed.post",
              limit: "100",
              ...(cursor === undefined ? {} : { cursor })
            })
          )
        )
      )
      const records = field(body, "records")
      if (!Array.isArray(records)) return yield* unexpected("listRecords")
      let pastWindow = false
      for (const item of records) {
        const uri = stringField(item, "uri")
        const value = field(item, "value")
        const createdAt = Date.parse(stringField(value, "createdAt") ?? "")
        if (uri === undefined) continue
        const created = tidMillis(uri.split("/").pop() ?? "") ?? createdAt
        if (Number.isFinite(created) && created < since) {
          pastWindow = true
          continue
        }
        const inWindow = Number.isFinite(createdAt) && createdAt >= since && createdAt <= until
        if (inWindow && field(value, "reply") === undefined && stringField(value, "text") === lookup.content) {
          const session = yield* Ref.get(scope.current)
          return { _tag: "Found", platformPostId: uri, platformPostUrl: postUrl(session.handle, uri) } as const
        }
      }
      cursor = stringField(body, "cursor")
      if (pastWindow || cursor === undefined || records.length === 0) return { _tag: "Absent" } as const
    }
    return {
      _tag: "Unknown",
      reason: `Bluesky: more than ${lookupMaxPages * 100} posts since the attempt began`
    } as const
  })
