/**
 * The whole HTTP API: one group per resource (each in `groups/<Name>.ts`, prefixed `/api/v1` by
 * `ApiGroup.authenticated`), plus `/health` outside the versioned path. Adding a group is one `.add`.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { AccountsGroup } from "./groups/Accounts.js"
import { AiGroup } from "./groups/Ai.js"
import { AnalyticsGroup } from "./groups/Analytics.js"
import { ApprovalsGroup } from "./groups/Approvals.js"
import { CampaignsGroup } from "./groups/Campaigns.js"
import { DashboardDeviceGroup } from "./groups/DashboardDevice.js"
import { DashboardKeysGroup } from "./groups/DashboardKeys.js"
import { DashboardQueueGroup } from "./groups/DashboardQueue.js"
import { DashboardSessionGroup, DashboardSignInGroup } from "./groups/DashboardSession.js"
import { DashboardCommentsGroup } from "./groups/DashboardComments.js"
import { DashboardNotificationsGroup } from "./groups/DashboardNotifications.js"
import { DashboardJoinGroup, DashboardUsersGroup } from "./groups/DashboardUsers.js"
import { BulkGroup } from "./groups/Bulk.js"
import { ConnectionsGroup, OAuthCallbackGroup } from "./groups/Connections.js"
import { DeviceLoginGroup } from "./groups/DeviceLogin.js"
import { HealthGroup } from "./groups/Health.js"
import { MediaGroup, MediaUploadGroup } from "./groups/Media.js"
import { MeGroup } from "./groups/Me.js"
import { PlatformRulesGroup } from "./groups/PlatformRules.js"
import { PostsGroup } from "./groups/Posts.js"
import { QueueGroup } from "./groups/Queue.js"
import { RetryGroup } from "./groups/Retry.js"
import { SocialConnectGroup } from "./groups/SocialConnect.js"
import { WebhooksGroup } from "./groups/Webhooks.js"
import * as OpenApiDocument from "./OpenApiDocument.js"

export class Api extends HttpApi.make("herald")
  .add(MeGroup)
  .add(AccountsGroup)
  .add(HealthGroup)
  .add(RetryGroup)
  .add(PostsGroup)
  .add(ConnectionsGroup)
  .add(OAuthCallbackGroup)
  .add(WebhooksGroup)
  .add(MediaGroup)
  .add(MediaUploadGroup)
  .add(AiGroup)
  .add(PlatformRulesGroup)
  .add(AnalyticsGroup)
  .add(ApprovalsGroup)
  .add(CampaignsGroup)
  .add(DeviceLoginGroup)
  .add(SocialConnectGroup)
  .add(QueueGroup)
  .add(BulkGroup)
  .add(DashboardSignInGroup)
  .add(DashboardSessionGroup)
  .add(DashboardKeysGroup)
  .add(DashboardDeviceGroup)
  .add(DashboardUsersGroup)
  .add(DashboardJoinGroup)
  .add(DashboardNotificationsGroup)
  .add(DashboardCommentsGroup)
  .add(DashboardQueueGroup)
  .annotateContext(OpenApi.annotations({
    title: "Herald — Social Publishing Service API",
    version: "1.0.0",
    description: "Every response under /api/v1 is the envelope {data, error, meta}. Authenticate with " +
      "`Authorization: Bearer pe_live_<32 hex>`.",
    transform: OpenApiDocument.finish
  }))
{}
