/** The webhooks use cases' pure rules: event validation, what an attempt's answer means, the outcome ladder. */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { eventTypes } from "../src/webhooks/Event.js"
import * as Webhooks from "../src/webhooks/Webhooks.js"
import { WebhookSendError } from "../src/webhooks/WebhookTransport.js"

const t0 = DateTime.unsafeMake(1_700_000_000_000)

describe("Webhooks", () => {
  it.effect("checkEvents keeps known events in order without duplicates", () =>
    Effect.gen(function*() {
      expect(yield* Webhooks.checkEvents(["post.failed", "post.published", "post.failed"])).toEqual([
        "post.failed",
        "post.published"
      ])
    }))

  it.effect("checkEvents: unknown names and wildcards are invalid_event_type with the valid events", () =>
    Effect.gen(function*() {
      const unknown = yield* Effect.flip(Webhooks.checkEvents(["post.published", "Post.Published", "*"]))
      expect(unknown.code).toBe("invalid_event_type")
      expect(unknown.details).toEqual({ valid_events: [...eventTypes], invalid_events: ["Post.Published", "*"] })
      expect(unknown.message).toContain(Webhooks.wildcardMessage)
      const empty = yield* Effect.flip(Webhooks.checkEvents([]))
      expect(empty.code).toBe("validation_error")
    }))

  it.prop("only 2xx is success", [Schema.Int.pipe(Schema.between(100, 599))], ([status]) => {
    expect(Webhooks.isSuccess(status)).toBe(status >= 200 && status <= 299)
  })

  it("outcomeOf: delivered on success; retry by the ladder after a failure; dead after the 6th", () => {
    expect(Webhooks.outcomeOf(true, 6, t0)).toEqual({ _tag: "Delivered" })
    const delays = [1, 2, 3, 4, 5].map((attempt) => {
      const outcome = Webhooks.outcomeOf(false, attempt, t0)
      if (outcome._tag !== "Retry") throw new Error(`attempt ${attempt}: ${outcome._tag}`)
      return DateTime.toEpochMillis(outcome.at) - DateTime.toEpochMillis(t0)
    })
    expect(delays).toEqual([30_000, 120_000, 600_000, 3_600_000, 21_600_000])
    expect(Webhooks.outcomeOf(false, 6, t0)).toEqual({ _tag: "Dead" })
  })

  it("describe says why an attempt failed", () => {
    const timeout = Duration.seconds(10)
    expect(Webhooks.describe(Either.right({ status: 200, body: "", durationMs: 5 }), timeout)).toBe(
      "The receiver answered 200 in 5 ms"
    )
    expect(Webhooks.describe(Either.right({ status: 302, body: "", durationMs: 5 }), timeout)).toContain(
      "only a 2xx answer within 10s"
    )
    const refused = new WebhookSendError({
      reason: "refused_address",
      message: "the address 10.0.0.1 is not allowed",
      durationMs: 0
    })
    expect(Webhooks.describe(Either.left(refused), timeout)).toBe("No answer: the address 10.0.0.1 is not allowed")
  })
})
