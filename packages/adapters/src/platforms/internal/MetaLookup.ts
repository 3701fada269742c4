/**
 * `findPublished` over a Meta Graph edge that lists an account's posts newest first (Threads' `/threads`,
 * Instagram's `/media`, a Page's `/posts`), paged with `paging.cursors.after` while `paging.next` is
 * there. `since` (Unix seconds) is sent where the edge takes it; either way the listing stops once it
 * is past the window's start, and is Unknown after `maxPages`.
 */
import type { PublishedAnswer, PublishedLookup, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import type * as MetaContainers from "./MetaContainers.js"
import { field, stringField } from "./PlatformHttp.js"
import * as Lookup from "./PublishedLookup.js"

/** Meta's timestamps (`2026-11-28T02:33:54+0000`) as epoch milliseconds. */
export const timeOf = (value: string | undefined): number =>
  Date.parse((value ?? "").replace(/([+-]\d{2})(\d{2})$/, "$1:$2"))

export interface Edge {
  readonly graph: MetaContainers.Graph
  readonly url: string
  /** The item fields to ask for. */
  readonly fields: string
  /** Whether the edge takes `since`. */
  readonly since: boolean
  readonly timeField: string
  readonly textField: string
  /** Items that are not the account's own top-level posts (replies, shares) are skipped. */
  readonly keep?: (item: unknown) => boolean
  readonly urlOf: (item: unknown, id: string) => string
  /** Other forms the stored text may take of the text sent (a link the client appended). */
  readonly variants?: (text: string) => ReadonlyArray<string>
  readonly limit: number
  readonly maxPages: number
  readonly label: string
}

export const find = (edge: Edge, lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
  Effect.gen(function*() {
    const window = Lookup.windowOf(lookup)
    const candidates: Array<Lookup.Candidate> = []
    let after: string | undefined
    for (let page = 0; page < edge.maxPages; page++) {
      const body = yield* edge.graph.get(edge.url, {
        fields: edge.fields,
        limit: String(edge.limit),
        since: edge.since ? String(Math.floor(window.since / 1000)) : undefined,
        after
      })
      const data = field(body, "data")
      let pastWindow = false
      for (const item of Array.isArray(data) ? data : []) {
        const id = stringField(item, "id")
        const at = timeOf(stringField(item, edge.timeField))
        if (id === undefined) continue
        if (at < window.since) pastWindow = true
        if (!Lookup.inWindow(window, at) || edge.keep?.(item) === false) continue
        const text = stringField(item, edge.textField) ?? ""
        for (const variant of [text, ...(edge.variants?.(text) ?? [])]) {
          candidates.push({ id, url: edge.urlOf(item, id), text: variant })
        }
      }
      const paging = field(body, "paging")
      after = stringField(field(paging, "cursors"), "after")
      const more = stringField(paging, "next") !== undefined && after !== undefined && after !== ""
      if (pastWindow || !more) return Lookup.answerFrom(lookup, candidates, edge.label)
      const found = Lookup.answerFrom(lookup, candidates, edge.label)
      if (found._tag === "Found") return found
    }
    return Lookup.tooMany(edge.label, edge.maxPages * edge.limit)
  })
