/**
 * The queue editor's write (/dashboard/api/queue, outside the spec, whose API does not edit the
 * queue): owners and admins replace the organization's zone and weekly openings, as
 * `herald queue set` does (`Queues.setQueue`; openings already taken stay taken). The answer is the
 * queue as `GET /api/v1/queue` shows it, forecast included.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { QueueOpening } from "@herald/core/workflow/Queue"
import * as Queues from "@herald/core/workflow/Queues"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as SessionAuth from "../SessionAuth.js"
import { basePath } from "./DashboardSession.js"
import { QueueView, toQueueView } from "./Queue.js"

/** At most one opening per minute of the week. */
const maxOpenings = 7 * 24 * 60

export const SetQueueBody = Schema.Struct({
  timezone: Schema.Trim.pipe(Schema.minLength(1)),
  openings: Schema.Array(Schema.Struct({
    weekday_number: Schema.Int.pipe(Schema.between(1, 7)).annotations({ description: "1 = Monday ... 7 = Sunday" }),
    time: Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/)).annotations({ description: "HH:MM, 24-hour" })
  })).pipe(Schema.maxItems(maxOpenings))
})

export const DashboardQueueGroup = HttpApiGroup.make("dashboardQueue")
  .add(
    HttpApiEndpoint.put("set", "/queue")
      .setPayload(ApiGroup.payload(SetQueueBody))
      .addSuccess(Envelope.ok(QueueView))
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.internal)
  .addError(Envelope.errorResponse(403))
  .middleware(SessionAuth.SessionAuthentication)
  .prefix(basePath)
  .annotate(OpenApi.Exclude, true)

/** The openings in week order, each once. */
export const openingsOf = (body: typeof SetQueueBody.Type): ReadonlyArray<QueueOpening> => {
  const unique = new Map(body.openings.map((o) => [`${o.weekday_number} ${o.time}`, o]))
  return [...unique.values()]
    .sort((a, b) => a.weekday_number - b.weekday_number || a.time.localeCompare(b.time))
    .map((o) => new QueueOpening({ weekday: o.weekday_number, time: o.time }))
}

export const DashboardQueueLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DashboardQueueGroup),
  "dashboardQueue",
  (handlers) =>
    handlers.handle("set", ({ payload }) =>
      Effect.gen(function*() {
        const caller = yield* SessionAuth.CurrentSession
        yield* SessionAuth.requireOwnerOrAdmin(caller)
        const organizationId = caller.organization.id
        yield* Queues.setQueue({ organizationId, timezone: payload.timezone, openings: openingsOf(payload) }).pipe(
          Effect.catchTag("PersistenceError", Effect.die)
        )
        const view = yield* Queues.show(organizationId).pipe(Effect.catchTag("PersistenceError", Effect.die))
        return toQueueView(view)
      }))
)
