/**
 * Every log line about one destination carries its ids (post, destination, platform, account,
 * attempt), so that a post's history can be grepped: the lines a platform client writes while it
 * publishes, and the dispatcher's line for the recorded outcome. Nothing else is annotated with them.
 */
import { describe, expect, it } from "@effect/vitest"
import type { PlatformClient } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Engine from "./EngineHarness.js"

interface Line {
  readonly message: string
  readonly annotations: Record<string, unknown>
}

describe("Dispatcher log annotations", () => {
  it.effect("a client's lines while it publishes, and the outcome's line, name the destination", () => {
    const lines: Array<Line> = []
    const capture = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ annotations, message }) => {
        lines.push({
          message: String(Array.isArray(message) ? message.join(" ") : message),
          annotations: Object.fromEntries(HashMap.toEntries(annotations))
        })
      })
    )
    const client: PlatformClient = {
      platform: "x",
      publish: () =>
        Effect.logWarning("client: sending").pipe(
          Effect.as({ platformPostId: "1", platformPostUrl: "https://x.com/i/status/1" })
        )
    }
    return Effect.gen(function*() {
      const { post } = yield* Engine.insertPost({ content: "annotated", platforms: ["x"] })
      const d = (yield* Engine.findPost(post.id)).destinations[0]
      yield* Effect.annotateLogs(Engine.runOnce, "round", "outer")
      // A round's annotations end with it (the round joins its recorder, which would hand them over).
      yield* Engine.insertPost({ content: "second", platforms: ["x"] })
      yield* Engine.runOnce
      yield* Effect.logInfo("after the round")
      const expected = {
        post_id: post.id,
        destination_id: d.id,
        platform: "x",
        account_id: d.accountId,
        attempt: 1,
        round: "outer"
      }
      expect(lines.find((l) => l.message === "client: sending")?.annotations).toEqual(expected)
      expect(lines.find((l) => l.message === "Dispatcher: published")?.annotations).toEqual(expected)
      expect(lines.find((l) => l.message === "after the round")?.annotations).toEqual({})
    }).pipe(Effect.provide(Engine.layer({ clients: [client] })), Effect.provide(capture))
  })
})
