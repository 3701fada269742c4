/** User retries over the SQLite stores and the sandbox: single-post and bulk, with their events. */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import type { DomainError } from "@herald/core/kernel/Errors"
import type { PostId } from "@herald/core/kernel/Ids"
import { type PlatformClient, PublishError } from "@herald/core/platforms/Platforms"
import * as Retries from "@herald/core/publishing/Retries"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Engine from "./EngineHarness.js"

/** A LinkedIn that rejects everything while `down.value` is true, then works (the sandbox otherwise). */
const switchable = () => {
  const down = { value: true }
  const sandbox = Sandbox.make("linkedin")
  const client: PlatformClient = {
    ...sandbox,
    publish: (request) =>
      down.value
        ? Effect.fail(new PublishError({ kind: "permanent", message: "LinkedIn refused: organization not verified" }))
        : sandbox.publish(request)
  }
  return { down, client }
}

const provide = <A, E>(self: Effect.Effect<A, E, Engine.EngineServices>, clients: ReadonlyArray<PlatformClient> = []) =>
  Effect.provide(self, Engine.layer({ clients }))

const codeOf = (error: unknown) => (error as DomainError).code

describe("Retries", () => {
  it.effect("retry: failed -> queued due now, attempts reset, then published; events in order", () => {
    const { client, down } = switchable()
    return provide(
      Effect.gen(function*() {
        const org = yield* Engine.TestOrg
        const { post } = yield* Engine.insertPost({ content: "please work", platforms: ["linkedin"] })
        yield* Engine.runOnce
        expect((yield* Engine.findPost(post.id)).destinations[0].status).toBe("failed")
        down.value = false
        yield* TestClock.adjust("5 minutes")
        const result = yield* Retries.retryPost({ organizationId: org.id, postId: post.id })
        expect(result.retried.length).toBe(1)
        const [d] = result.retried
        expect(d.status).toBe("queued")
        expect(d.attempts).toBe(0)
        expect(Option.isNone(d.error)).toBe(true)
        expect(DateTime.toEpochMillis(d.dueAt)).toBe(DateTime.toEpochMillis(yield* DateTime.now))
        // No synchronous publish.
        expect((yield* Engine.Sends).length).toBe(0)
        expect(yield* Engine.runOnce).toMatchObject({ claimed: 1, published: 1 })
        const [after] = (yield* Engine.findPost(post.id)).destinations
        expect(after.status).toBe("published")
        expect(after.attempts).toBe(1)
        expect(yield* Engine.eventTypes(post.id)).toEqual([
          "post.publishing",
          "post.failed",
          "post.publishing",
          "post.published"
        ])
      }),
      [client]
    )
  })

  it.effect("retry with nothing failed: 409 no_failed_destinations; unknown post: not_found", () =>
    provide(Effect.gen(function*() {
      const org = yield* Engine.TestOrg
      const { post } = yield* Engine.insertPost({ content: "fine", platforms: ["telegram"] })
      yield* Engine.runOnce
      const error = yield* Effect.flip(Retries.retryPost({ organizationId: org.id, postId: post.id }))
      expect(codeOf(error)).toBe("no_failed_destinations")
      expect((error as DomainError).status).toBe(409)
      const missing = yield* Effect.flip(
        Retries.retryPost({ organizationId: org.id, postId: "00000000-0000-4000-8000-ffffffffffff" as PostId })
      )
      expect(codeOf(missing)).toBe("not_found")
    })))

  it.effect("retry limited to account_ids re-queues only those; a restricted key does not see the post", () =>
    provide(Effect.gen(function*() {
      const org = yield* Engine.TestOrg
      const { post } = yield* Engine.insertPost({ content: "[sandbox:fail] both", platforms: ["x", "discord"] })
      yield* Engine.runOnce
      const x = org.accounts.x.id
      const result = yield* Retries.retryPost({ organizationId: org.id, postId: post.id, accountIds: [x] })
      expect(result.retried.map((d) => d.platform)).toEqual(["x"])
      const statuses = (yield* Engine.findPost(post.id)).destinations.map((d) => [d.platform, d.status])
      expect(statuses).toEqual([["x", "queued"], ["discord", "failed"]])
      const hidden = yield* Effect.flip(
        Retries.retryPost({ organizationId: org.id, postId: post.id, visibleAccountIds: [x] })
      )
      expect(codeOf(hidden)).toBe("not_found")
      const none = yield* Effect.flip(
        Retries.retryPost({ organizationId: org.id, postId: post.id, accountIds: [org.accounts.telegram.id] })
      )
      expect(codeOf(none)).toBe("no_failed_destinations")
    })))

  it.effect("retry after partially failed: the post publishes fully, no second post.partially_failed", () => {
    const { client, down } = switchable()
    return provide(
      Effect.gen(function*() {
        const org = yield* Engine.TestOrg
        const { post } = yield* Engine.insertPost({ content: "two ways", platforms: ["linkedin", "telegram"] })
        yield* Engine.runOnce
        expect((yield* Engine.eventTypes(post.id)).at(-1)).toBe("post.partially_failed")
        down.value = false
        yield* Retries.retryPost({ organizationId: org.id, postId: post.id })
        yield* Engine.runOnce
        const types = yield* Engine.eventTypes(post.id)
        expect(types.filter((t) => t === "post.partially_failed").length).toBe(1)
        expect(types.slice(-2)).toEqual(["post.publishing", "post.published"])
        expect((yield* Engine.findPost(post.id)).destinations.every((d) => d.status === "published")).toBe(true)
      }),
      [client]
    )
  })

  it.effect("retry-failed: no_filter, bulk_limit_exceeded, and filters by platform, time and attempts", () =>
    provide(Effect.gen(function*() {
      const org = yield* Engine.TestOrg
      const noFilter = yield* Effect.flip(Retries.retryFailed({ organizationId: org.id, maxAttempts: 3 }))
      expect(codeOf(noFilter)).toBe("no_filter")
      const tooMany = Array.from(
        { length: 201 },
        (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}` as PostId
      )
      const limit = yield* Effect.flip(Retries.retryFailed({ organizationId: org.id, postIds: tooMany }))
      expect(codeOf(limit)).toBe("bulk_limit_exceeded")

      const early = yield* Engine.insertPost({ content: "[sandbox:fail] a", platforms: ["x", "telegram"] })
      yield* Engine.runOnce
      yield* TestClock.adjust("1 hour")
      const cutoff = yield* DateTime.now
      yield* TestClock.adjust("1 hour")
      const late = yield* Engine.insertPost({ content: "[sandbox:fail] b", platforms: ["x", "telegram"] })
      yield* Engine.runOnce

      const byPlatform = yield* Retries.retryFailed({
        organizationId: org.id,
        platform: "telegram",
        failedAfter: cutoff
      })
      expect(byPlatform.retriedCount).toBe(1)
      expect(byPlatform.posts.map((p) => p.record.post.id)).toEqual([late.post.id])
      expect(byPlatform.posts[0].retried.map((d) => d.platform)).toEqual(["telegram"])

      // Every failure so far used one attempt: max_attempts 0 matches nothing.
      const none = yield* Retries.retryFailed({ organizationId: org.id, platform: "x", maxAttempts: 0 })
      expect(none.retriedCount).toBe(0)

      const byIds = yield* Retries.retryFailed({ organizationId: org.id, postIds: [early.post.id] })
      expect(byIds.retriedCount).toBe(2)
      const statuses = (yield* Engine.findPost(early.post.id)).destinations.map((d) => d.status)
      expect(statuses).toEqual(["queued", "queued"])
      expect((yield* Engine.findPost(late.post.id)).destinations.map((d) => d.status)).toEqual(["failed", "queued"])
    })))
})
