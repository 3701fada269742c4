/**
 * Publishing to Bluesky: a post record (`app.bsky.feed.post`, created with `com.atproto.repo.createRecord`)
 * with its rich-text facets and its embed, then the thread's parts as replies chained to it and the
 * first comment as a reply to it. Every part is checked against the lexicon's limits before the first
 * is posted. A session renewed on the way is returned as `renewedCredentials`.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { PublishError, PublishPart, PublishRequest, PublishResult } from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as RichText from "./BlueskyRichText.js"
import { publishError, stringField } from "./internal/PlatformHttp.js"
import { checkMedia, embedFor, type EmbedOptions } from "./BlueskyEmbeds.js"
import * as BlueskySession from "./BlueskySession.js"
import { unexpected, type Xrpc } from "./BlueskyXrpc.js"

export const maxGraphemes = 300
export const maxBytes = 3000

export interface StrongRef {
  readonly uri: string
  readonly cid: string
}

/** `at://did/app.bsky.feed.post/rkey` -> `https://bsky.app/profile/{handle}/post/{rkey}`. */
export const postUrl = (handleOrDid: string, uri: string): string =>
  `https://bsky.app/profile/${handleOrDid}/post/${uri.split("/").pop() ?? ""}`

/** Checks a post's text against Bluesky's lexicon limits before anything is sent. */
export const checkText = (text: string): PublishError | undefined => {
  const graphemes = RichText.graphemeLength(text)
  if (graphemes > maxGraphemes) {
    return publishError("too_long", `Bluesky: post text is ${graphemes} graphemes; the limit is ${maxGraphemes}`)
  }
  const bytes = RichText.utf8Length(text)
  if (bytes > maxBytes) {
    return publishError("too_long", `Bluesky: post text is ${bytes} bytes; the limit is ${maxBytes}`)
  }
  return undefined
}

export interface PublishOptions extends EmbedOptions {
  /** Where sessions are created unless the stored credentials name a service. */
  readonly defaultService: string
}

const resolveHandle = (xrpc: Xrpc, pds: string) => (handle: string) =>
  xrpc.call(
    HttpClientRequest.get(`${pds}/xrpc/com.atproto.identity.resolveHandle`).pipe(
      HttpClientRequest.setUrlParam("handle", handle)
    )
  ).pipe(
    Effect.map((body) => Option.fromNullable(stringField(body, "did"))),
    // An unresolvable mention stays plain text; so does one we could not resolve just now.
    Effect.orElseSucceed(() => Option.none<string>())
  )

const createPost = (
  xrpc: Xrpc,
  options: PublishOptions,
  scope: BlueskySession.SessionScope,
  part: PublishPart,
  reply: { readonly root: StrongRef; readonly parent: StrongRef } | undefined,
  langs: ReadonlyArray<string> | undefined
): Effect.Effect<StrongRef, PublishError> =>
  Effect.gen(function*() {
    const pds = (yield* Ref.get(scope.current)).pds
    const facets = yield* RichText.resolve(RichText.detect(part.content), resolveHandle(xrpc, pds))
    const embed = yield* embedFor(xrpc, options, scope, part.media, part.content)
    const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
    const record: Record<string, unknown> = { $type: "app.bsky.feed.post", text: part.content, createdAt }
    if (facets.length > 0) record["facets"] = facets
    if (embed !== undefined) record["embed"] = embed
    if (reply !== undefined) record["reply"] = reply
    if (langs !== undefined) record["langs"] = langs
    const body = yield* scope.authed((session) =>
      xrpc.call(
        HttpClientRequest.post(`${session.pds}/xrpc/com.atproto.repo.createRecord`).pipe(
          HttpClientRequest.bearerToken(session.accessJwt),
          HttpClientRequest.bodyUnsafeJson({ repo: session.did, collection: "app.bsky.feed.post", record })
        )
      )
    )
    const uri = stringField(body, "uri")
    const cid = stringField(body, "cid")
    if (uri === undefined || cid === undefined) return yield* unexpected("createRecord")
    return { uri, cid }
  })

/**
 * Publishes the main post; the thread's parts and the first comment are follow-ups the engine runs
 * once the main post is recorded. `settings.langs` (up to 3 language tags) goes on every record.
 */
export const publish = (
  xrpc: Xrpc,
  options: PublishOptions,
  request: PublishRequest
): Effect.Effect<PublishResult, PublishError> =>
  Effect.gen(function*() {
    const stored = Redacted.value(request.credentials)
    const firstComment = request.settings["firstComment"]
    const comment = typeof firstComment === "string" && firstComment.trim() !== ""
      ? { content: firstComment, media: [] }
      : undefined
    const parts = [request.main, ...request.thread, ...(comment ? [comment] : [])]
    // Every part is checked before the first is posted: a late refusal would strand a half thread.
    for (const part of parts) {
      const problem = checkText(part.content) ?? checkMedia(part.media)
      if (problem !== undefined) return yield* problem
    }
    const langsSetting = request.settings["langs"]
    const langs = Array.isArray(langsSetting) && langsSetting.every(Predicate.isString) && langsSetting.length > 0
      ? langsSetting.slice(0, 3)
      : undefined

    const scope = yield* BlueskySession.open(xrpc, options.defaultService, stored)
    const main = yield* createPost(xrpc, options, scope, request.main, undefined, langs)

    const followUp = (what: string, effect: Effect.Effect<StrongRef, PublishError>) =>
      Effect.either(effect).pipe(
        Effect.tap((result) =>
          result._tag === "Left"
            // The main post is out: failing now would make a retry post it twice.
            ? Effect.logWarning(
              `Bluesky: ${what} not published after the main post: ${result.left.kind}: ${result.left.message}`
            )
            : Effect.void
        )
      )
    // Run by the engine once the main post is recorded, outside the publish deadline. A session
    // renewed while they run is not saved: the next publish renews it again.
    const followUps = Effect.gen(function*() {
      let parent = main
      for (const part of request.thread) {
        const sent = yield* followUp(
          "thread part",
          createPost(xrpc, options, scope, part, { root: main, parent }, langs)
        )
        if (sent._tag === "Left") break
        parent = sent.right
      }
      if (comment !== undefined) {
        yield* followUp("first comment", createPost(xrpc, options, scope, comment, { root: main, parent: main }, langs))
      }
    })

    const session = yield* Ref.get(scope.current)
    const result: PublishResult = {
      platformPostId: main.uri,
      platformPostUrl: postUrl(session.handle, main.uri),
      ...(request.thread.length > 0 || comment !== undefined ? { followUps } : {})
    }
    return (yield* Ref.get(scope.changed)) ? { ...result, renewedCredentials: yield* scope.credentials } : result
  })
