import * as Schema from "effect/Schema"
import { OrganizationId, QueueId } from "../kernel/Ids.js"

/** A recurring opening: a weekday (1 = Monday … 7 = Sunday) and a wall-clock time in the queue's zone. */
export class QueueOpening extends Schema.Class<QueueOpening>("QueueOpening")({
  weekday: Schema.Int.pipe(Schema.between(1, 7)),
  time: Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/))
}) {}

export class Queue extends Schema.Class<Queue>("Queue")({
  id: QueueId,
  organizationId: OrganizationId,
  timezone: Schema.String,
  openings: Schema.Array(QueueOpening),
  createdAt: Schema.DateTimeUtc
}) {}
