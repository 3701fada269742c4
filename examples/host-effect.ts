/**
 * An Effect host composing Herald in-process: `Herald.layer(config)` provides the `Herald` service,
 * whose methods are the API's use cases as Effects failing with `DomainError` (the API's error codes).
 *
 *   npx tsx examples/host-effect.ts          (data in ./.herald-effect-host, or HERALD_DATA_DIR)
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Herald from "@herald/http/Herald"
import * as HeraldEvents from "@herald/http/HeraldEvents"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const program = Effect.gen(function*() {
  const herald = yield* Herald.Herald
  let cursor = yield* herald.events.latest()

  const { accounts } = yield* herald.accounts.list()
  const post = yield* herald.posts.create({ content: "Hello from an Effect host", account_ids: [accounts[0]!.id] })
  yield* Console.log(`created post ${post.id} (${post.status})`)

  // Follow the outbox until this post is published.
  let published: HeraldEvents.EventPayload | undefined
  while (published === undefined) {
    const next = yield* herald.events.poll(cursor, { types: ["post.published"] })
    cursor = next.cursor
    published = next.events.find((e) => e.data["post_id"] === post.id)
    if (published === undefined) yield* Effect.sleep("100 millis")
  }
  yield* Console.log(`post.published ${post.id} (event ${published.event_id})`)

  // Failures are typed: DomainError with the API's code.
  yield* herald.posts.get("00000000-0000-4000-8000-000000000000").pipe(
    Effect.catchTag("DomainError", (e) => Console.log(`lookup failed: ${e.code}`))
  )
}).pipe(
  Effect.provide(Herald.layer({ dataDir: process.env.HERALD_DATA_DIR ?? ".herald-effect-host", platforms: "sandbox" }))
)

NodeRuntime.runMain(program)
