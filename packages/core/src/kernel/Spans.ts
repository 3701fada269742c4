/**
 * `Effect.withSpan` for the hot paths (every store call, the use cases a request runs), skipped while
 * the tracer is off. With it off (`HERALD_TRACING` unset: the server's default), Effect still makes a
 * no-op span and provides it as the parent span, and providing a service copies the fiber's whole
 * context (~70 services on a request): several copies per `POST /posts` for spans no one can see.
 * With the tracer on, this is `Effect.withSpan` without stack capture.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

export const withSpan = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(self, name, { captureStackTrace: false }) : self
  )
