/**
 * Follow-ups (thread parts, first comments) run after the outcome is recorded: the publish deadline
 * covers the main post only, so a slow or failing follow-up never makes the engine retry a post that
 * is already out.
 */
import { describe, expect, it } from "@effect/vitest"
import type { PlatformClient } from "@herald/core/platforms/Platforms"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Engine from "./EngineHarness.js"

/** A LinkedIn whose main post is instant and whose follow-up is `followUp`; every call is noted. */
const slowFollowUps = (
  followUp: (log: Array<string>) => Effect.Effect<void>,
  followUpTimeout?: Duration.DurationInput
) => {
  const log: Array<string> = []
  let published = 0
  const client: PlatformClient = {
    platform: "linkedin",
    timeout: "30 seconds",
    ...(followUpTimeout === undefined ? {} : { followUpTimeout }),
    publish: () =>
      Effect.sync(() => {
        published++
        log.push("main")
        return {
          platformPostId: `post-${published}`,
          platformPostUrl: `https://example.test/post-${published}`,
          followUps: followUp(log)
        }
      })
  }
  return { client, log, published: () => published }
}

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices>, client: PlatformClient) =>
  Effect.provide(self, Engine.layer({ clients: [client] }))

describe("Follow-ups after the main post", () => {
  it.effect("a follow-up slower than the publish deadline: published once, never retried, the follow-up still runs", () => {
    const slow = slowFollowUps(
      (log) => Effect.zipRight(Effect.sleep("10 minutes"), Effect.sync(() => log.push("first comment"))),
      "15 minutes"
    )
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "hello", platforms: ["linkedin"] })
        const round = yield* Effect.fork(Engine.runOnce)
        // The outcome is recorded before the follow-up starts waiting.
        expect(
          yield* Engine.eventually(
            Effect.map(Engine.findPost(post.id), (r) => r.destinations[0].status === "published")
          )
        ).toBe(true)
        yield* Engine.settle()
        expect(slow.log).toEqual(["main"])
        // Far past the 30 s publish deadline: nothing turns the published destination into a failure.
        yield* TestClock.adjust("10 minutes")
        const summary = yield* Fiber.join(round)
        expect(summary).toMatchObject({ claimed: 1, published: 1, requeued: 0, failed: 0 })
        expect(slow.log).toEqual(["main", "first comment"])
        const [d] = (yield* Engine.findPost(post.id)).destinations
        expect(d.status).toBe("published")
        expect(d.attempts).toBe(1)
        expect(d.platformPostId._tag === "Some" && d.platformPostId.value).toBe("post-1")
        // Nothing is due again: the engine never retries it.
        yield* TestClock.adjust("1 hour")
        expect(yield* Engine.runOnce).toMatchObject({ claimed: 0 })
        expect(slow.published()).toBe(1)
        expect(yield* Engine.eventTypes(post.id)).toEqual(["post.publishing", "post.published"])
      }),
      slow.client
    )
  })

  it.effect("a follow-up that never ends is abandoned after its own timeout; the destination stays published", () => {
    const stuck = slowFollowUps(() => Effect.never, "2 minutes")
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "hello", platforms: ["linkedin"] })
        const round = yield* Effect.fork(Engine.runOnce)
        expect(
          yield* Engine.eventually(
            Effect.map(Engine.findPost(post.id), (r) => r.destinations[0].status === "published")
          )
        ).toBe(true)
        yield* Engine.settle()
        yield* TestClock.adjust("2 minutes")
        expect(yield* Fiber.join(round)).toMatchObject({ claimed: 1, published: 1 })
        expect((yield* Engine.findPost(post.id)).destinations[0].status).toBe("published")
        expect(stuck.published()).toBe(1)
      }),
      stuck.client
    )
  })

  it.effect("a failing follow-up leaves the destination published, with no error and no retry", () => {
    const failing = slowFollowUps((log) =>
      Effect.zipRight(Effect.sync(() => log.push("thread part")), Effect.dieMessage("the platform refused the reply"))
    )
    return provide(
      Effect.gen(function*() {
        const { post } = yield* Engine.insertPost({ content: "hello", platforms: ["linkedin"] })
        expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, published: 1, failed: 0, requeued: 0 })
        expect(failing.log).toEqual(["main", "thread part"])
        const [d] = (yield* Engine.findPost(post.id)).destinations
        expect(d.status).toBe("published")
        expect(d.error._tag).toBe("None")
        yield* TestClock.adjust("1 hour")
        expect(yield* Engine.runOnce).toMatchObject({ claimed: 0 })
        expect(failing.published()).toBe(1)
      }),
      failing.client
    )
  })
})
