import * as Schema from "effect/Schema"
import { CampaignId, OrganizationId } from "../kernel/Ids.js"

export const CampaignStatus = Schema.Literal("active", "archived")
export type CampaignStatus = typeof CampaignStatus.Type

/** A campaign groups posts (`campaign_id` on a post). Its post count is read with it (`CampaignStore`). */
export class Campaign extends Schema.Class<Campaign>("Campaign")({
  id: CampaignId,
  organizationId: OrganizationId,
  name: Schema.String,
  description: Schema.OptionFromNullOr(Schema.String),
  /** `#rrggbb`, lowercase. */
  color: Schema.OptionFromNullOr(Schema.String),
  status: CampaignStatus,
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}
