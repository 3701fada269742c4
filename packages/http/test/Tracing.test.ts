/**
 * Tracing is off unless HERALD_TRACING=true: the fibers a server layer starts (its request fibers
 * inherit them) neither open the platform's per-request server span nor any other span.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"
import * as Server from "../src/Server.js"

const request = HttpServerRequest.fromWeb(new Request("http://localhost/api/v1/accounts"))

/** What the fibers of a layer wrapped by `Server.tracing(enabled)` see. */
const observe = (enabled: boolean) => {
  const seen: { spans?: boolean; serverSpan?: boolean; spanMade?: boolean } = {}
  const probe = Layer.effectDiscard(Effect.gen(function*() {
    seen.spans = yield* FiberRef.get(FiberRef.currentTracerEnabled)
    seen.serverSpan = !(yield* FiberRef.get(HttpMiddleware.currentTracerDisabledWhen))(request)
    // A span opened in a fiber forked from here (as a request fiber is) is a real span only when on.
    const span = yield* Effect.fork(Effect.withSpan(Effect.currentSpan, "probe")).pipe(
      Effect.flatMap((fiber) => fiber.await),
      Effect.map((exit) => exit._tag === "Success" ? Option.some(exit.value) : Option.none())
    )
    seen.spanMade = Option.isSome(span) && span.value.name === "probe" && span.value.sampled
  }))
  return Effect.runPromise(Effect.scoped(Layer.build(Server.tracing(enabled)(probe)))).then(() => seen)
}

describe("tracing", () => {
  it("is off by default: no server span per request, no spans at all", async () => {
    expect(Server.tracingEnabled()).toBe(process.env.HERALD_TRACING?.trim().toLowerCase() === "true")
    expect(await observe(false)).toEqual({ spans: false, serverSpan: false, spanMade: false })
  })

  it("HERALD_TRACING=true keeps the platform's tracing", async () => {
    expect(await observe(true)).toEqual({ spans: true, serverSpan: true, spanMade: true })
  })
})
