/**
 * The W3C trace context (`traceparent`) of the current span, kept with work that goes on later in
 * another fiber or process: a post's publishes (stored with the post) and an event's webhook
 * deliveries (stored with the event). Their spans take it as their parent, so that one trace runs
 * from `POST /posts` through the publish and the platform's calls to the webhook delivery, whichever
 * process does each part. Nothing is kept when no span is being traced.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const hex32 = /^[0-9a-f]{32}$/
const hex16 = /^[0-9a-f]{16}$/

/** `00-{trace id}-{span id}-{flags}` for a sampled span with valid ids; none otherwise. */
export const format = (span: Tracer.AnySpan): Option.Option<string> =>
  span.sampled && hex32.test(span.traceId) && hex16.test(span.spanId) && !/^0+$/.test(span.traceId)
    ? Option.some(`00-${span.traceId}-${span.spanId}-01`)
    : Option.none()

/** The current span's `traceparent`, when there is a traced span. */
export const current: Effect.Effect<Option.Option<string>> = Effect.map(
  Effect.option(Effect.currentParentSpan),
  (span) => Option.flatMap(span, format)
)

/** The remote parent a stored `traceparent` names. */
export const parse = (value: string): Option.Option<Tracer.ExternalSpan> => {
  const match = traceparent.exec(value)
  if (match === null || match[1] === "0".repeat(32) || match[2] === "0".repeat(16)) return Option.none()
  return Option.some(Tracer.externalSpan({
    traceId: match[1]!,
    spanId: match[2]!,
    sampled: (parseInt(match[3]!, 16) & 1) === 1
  }))
}
