import * as Schema from "effect/Schema"
import { CampaignId, OrganizationId } from "./Ids.js"

export class Campaign extends Schema.Class<Campaign>("Campaign")({
  id: CampaignId,
  organizationId: OrganizationId,
  name: Schema.String,
  description: Schema.OptionFromNullOr(Schema.String),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}
