/**
 * Whether a publish attempt whose outcome is unknown reached LinkedIn: the author's posts read back
 * and matched by the commentary as sent.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { PublishedAnswer, PublishedLookup, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Lookup from "./internal/PublishedLookup.js"
import { field, numberField, publishError, stringField } from "./internal/PlatformHttp.js"
import { label, type RestApi } from "./LinkedInApi.js"
import { escapeLittleText, postUrl } from "./LinkedInPublish.js"

/** Pages of 100 posts `findPublished` reads before it gives up. */
export const lookupMaxPages = 10

/**
 * Whether an attempt reached LinkedIn: the author's posts (`GET /rest/posts?q=author`, newest created
 * first, 100 a page) until past the window, matched by the commentary as sent (escaped as at
 * publish). An error or a rate limit fails the lookup (the engine keeps the outcome unknown).
 */
export const findPublished = (
  api: RestApi,
  lookup: PublishedLookup
): Effect.Effect<PublishedAnswer, PublishError> =>
  Effect.gen(function*() {
    const stored = Redacted.value(lookup.credentials)
    const token = stored["access_token"] ?? ""
    if (token === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack an access token")
    const userId = stored["user_id"] ?? ""
    const author = stored["author_urn"] ?? (userId === "" ? "" : `urn:li:person:${userId}`)
    if (author === "") return yield* publishError("auth", "LinkedIn: the stored credentials lack the author URN")
    const window = Lookup.windowOf(lookup)
    const wanted = { ...lookup, content: escapeLittleText(lookup.content) }
    const candidates: Array<Lookup.Candidate> = []
    const count = 100
    for (let page = 0; page < lookupMaxPages; page++) {
      const response = yield* api.rest(
        token,
        "metrics",
        HttpClientRequest.get(`${api.url}/rest/posts`).pipe(
          HttpClientRequest.setUrlParams({
            q: "author",
            author,
            sortBy: "CREATED",
            start: String(page * count),
            count: String(count)
          })
        )
      )
      const elements = field(response.body, "elements")
      const items = Array.isArray(elements) ? elements : []
      let pastWindow = false
      for (const item of items) {
        const id = stringField(item, "id")
        const at = numberField(item, "createdAt") ?? Number.NaN
        if (id === undefined) continue
        if (at < window.since) pastWindow = true
        if (!Lookup.inWindow(window, at)) continue
        candidates.push({ id, url: postUrl(id), text: stringField(item, "commentary") ?? "" })
      }
      if (pastWindow || items.length < count) return Lookup.answerFrom(wanted, candidates, label)
    }
    return Lookup.tooMany(label, lookupMaxPages * count)
  })
