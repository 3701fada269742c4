/**
 * `GET /queue`: the organization's posting queue (timezone and recurring openings) and a forecast of
 * where the next `use_queue` posts would land, as wall-clock in the queue's zone and as UTC instants.
 * Queue editing is not in the API (`herald queue set`, or `Queues.setQueue` in a host application).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as QueuePolicy from "@herald/core/workflow/QueuePolicy"
import * as Queues from "@herald/core/workflow/Queues"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"

const Weekday = Schema.Literal(...QueuePolicy.weekdayNames)

export const QueueOpeningView = Schema.Struct({
  weekday: Weekday,
  weekday_number: Schema.Int.annotations({ description: "1 = Monday ... 7 = Sunday" }),
  time: Schema.String.annotations({ description: "HH:MM, 24-hour wall-clock in the queue's timezone" })
}).annotations({ identifier: "QueueOpening" })

export const QueueForecastView = Schema.Struct({
  position: Schema.Int.annotations({ description: "1 is where the next use_queue post lands" }),
  scheduled_for: Schema.String.annotations({ description: "UTC instant, ISO 8601" }),
  local_date: Schema.String.annotations({ description: "YYYY-MM-DD in the queue's timezone" }),
  local_time: Schema.String.annotations({ description: "HH:MM wall-clock in the queue's timezone" }),
  local: Schema.String.annotations({ description: "ISO 8601 with the zone's UTC offset at that instant" }),
  weekday: Weekday,
  opening_time: Schema.String.annotations({
    description: "The opening's configured time; differs from local_time only when a DST gap shifted it"
  }),
  dst: Schema.Literal("exact", "gap_shifted", "ambiguous_earlier").annotations({
    description: "gap_shifted: the opening fell in a spring-forward gap and moves forward by the gap; " +
      "ambiguous_earlier: the time happens twice (fall back) and the earlier instant is used"
  })
}).annotations({ identifier: "QueueForecast" })

export const QueueView = Schema.Struct({
  configured: Schema.Boolean.annotations({ description: "false when the organization has no queue" }),
  timezone: Schema.NullOr(Schema.String),
  openings: Schema.Array(QueueOpeningView),
  horizon_days: Schema.Int.annotations({
    description: "A queue with no free opening within this many days is full (use_queue answers 400)"
  }),
  forecast: Schema.Array(QueueForecastView),
  message: Schema.optional(Schema.String)
}).annotations({ identifier: "Queue" })
type QueueView = typeof QueueView.Type

export const QueueParams = Schema.Struct({
  count: Schema.optional(Schema.String.annotations({
    description: `Forecast length, 1 to ${Queues.maxForecast}, default ${Queues.defaultForecast}; ` +
      "larger values are clamped, invalid ones give the default"
  }))
})

export const QueueGroup = HttpApiGroup.make("queue")
  .add(
    HttpApiEndpoint.get("get", "/queue")
      .setUrlParams(QueueParams)
      .addSuccess(Envelope.ok(QueueView))
      .annotate(
        OpenApi.Summary,
        "The posting queue's recurring openings and where the next posts would land (scope read); " +
          "editing is not available through the API"
      )
  )
  .addError(ApiGroup.errors.tooManyRequests)
  .pipe(ApiGroup.authenticated)

/** `count` like the posts list's `limit`: junk or below 1 gives the default, above the maximum is clamped. */
export const forecastCount = (raw: string | undefined): number => {
  const n = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined
  return n === undefined || n < 1 ? Queues.defaultForecast : Math.min(n, Queues.maxForecast)
}

const dstOf = (tag: QueuePolicy.WallClock["_tag"]) =>
  tag === "Gap" ? "gap_shifted" as const : tag === "Ambiguous" ? "ambiguous_earlier" as const : "exact" as const

export const toQueueView = (view: Queues.QueueView): QueueView => {
  if (Option.isNone(view.queue)) {
    return {
      configured: false,
      timezone: null,
      openings: [],
      horizon_days: QueuePolicy.horizonDays,
      forecast: [],
      message: "This organization has no posting queue; an operator sets one up with `herald queue set`"
    }
  }
  const queue = view.queue.value
  return {
    configured: true,
    timezone: queue.timezone,
    openings: queue.openings.map((o) => ({
      weekday: QueuePolicy.weekdayName(o.weekday),
      weekday_number: o.weekday,
      time: o.time
    })),
    horizon_days: QueuePolicy.horizonDays,
    forecast: view.forecast.map((entry) => {
      const parts = DateTime.toParts(entry.local)
      const date = { year: parts.year, month: parts.month, day: parts.day }
      return {
        position: entry.position,
        scheduled_for: DateTime.formatIso(entry.occurrence.at),
        local_date: QueuePolicy.formatDate(date),
        local_time: `${QueuePolicy.pad2(parts.hours)}:${QueuePolicy.pad2(parts.minutes)}`,
        local: DateTime.formatIsoOffset(entry.local),
        weekday: QueuePolicy.weekdayName(QueuePolicy.weekdayOf(date)),
        opening_time: entry.occurrence.time,
        dst: dstOf(entry.occurrence.dst)
      }
    }),
    ...(queue.openings.length === 0
      ? { message: "The queue has no openings; use_queue answers 400 until an operator adds some" }
      : view.forecast.length === 0
      ? { message: `No free opening within ${QueuePolicy.horizonDays} days: the queue is full` }
      : {})
  }
}

export const QueueLive = HttpApiBuilder.group(
  ApiGroup.apiOf(QueueGroup),
  "queue",
  (handlers) =>
    handlers.handle("get", ({ urlParams }) =>
      Effect.gen(function*() {
        const { key } = yield* Auth.requireScope("read")
        const view = yield* Queues.show(key.organizationId, forecastCount(urlParams.count)).pipe(
          Effect.catchTag("PersistenceError", Effect.die)
        )
        return toQueueView(view)
      }))
)
