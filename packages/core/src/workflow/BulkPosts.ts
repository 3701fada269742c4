/**
 * `POST /posts/bulk`: 1 to 50 bodies of `POST /posts`, each validated and created on its own (one
 * transaction per item, the same rules, allowances and circuit breaker as a single create), in
 * request order. One item failing never stops the others.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import * as Posts from "../posts/Posts.js"

export const maxItems = 50

export type ItemOutcome = Either.Either<Posts.Created, DomainError>

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const invalid = (message: string, path = "posts") =>
  DomainError.of("validation_error", message, { validation_errors: [{ path, message }] })

/** 400 `bulk_limit_exceeded` for `received` items (more than `maxItems`). */
export const limitExceeded = (received: number): DomainError =>
  DomainError.of(
    "bulk_limit_exceeded",
    `POST /posts/bulk takes at most ${maxItems} posts; ${received} were sent (split them into several calls)`,
    { limit: maxItems, received }
  )

/** The items of the body: `validation_error` unless `{posts: [...]}` with 1 item or more; `bulk_limit_exceeded` above 50. */
export const itemsOf = (raw: unknown): Effect.Effect<ReadonlyArray<unknown>, DomainError> => {
  if (!isObject(raw)) return Effect.fail(invalid("The body must be a JSON object {\"posts\": [...]}", ""))
  const posts = raw["posts"]
  if (!Array.isArray(posts)) return Effect.fail(invalid("posts must be an array of POST /posts bodies"))
  if (posts.length === 0) return Effect.fail(invalid("posts must hold at least one post"))
  if (posts.length > maxItems) return Effect.fail(limitExceeded(posts.length))
  return Effect.succeed(posts)
}

/** Creates every item independently; the outcomes are in request order. */
export const create = (
  caller: Posts.Caller,
  raw: unknown
): Effect.Effect<ReadonlyArray<ItemOutcome>, DomainError | PersistenceError, Posts.CreateRequirements> =>
  Effect.gen(function*() {
    const items = yield* itemsOf(raw)
    const outcomes: Array<ItemOutcome> = []
    for (const item of items) {
      outcomes.push(
        yield* Posts.create(caller, item).pipe(
          Effect.map((created): ItemOutcome => Either.right(created)),
          Effect.catchTag("DomainError", (error) => Effect.succeed<ItemOutcome>(Either.left(error)))
        )
      )
    }
    return outcomes
  }).pipe(Effect.withSpan("BulkPosts.create"))
