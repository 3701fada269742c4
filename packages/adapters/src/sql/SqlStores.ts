import type * as SqlClient from "@effect/sql/SqlClient"
import type { AiCreditLedger } from "@herald/core/ai/AiCredits"
import type { AccountStore } from "@herald/core/accounts/AccountStore"
import type { AnalyticsStore } from "@herald/core/analytics/AnalyticsStore"
import type { CampaignStore } from "@herald/core/campaigns/CampaignStore"
import type { RollupChanges } from "@herald/core/publishing/RollupChanges"
import type { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import type { ConnectSessionStore } from "@herald/core/accounts/ConnectSessionStore"
import type { DeviceAuthorizationStore } from "@herald/core/access/DeviceAuthorizationStore"
import type { DispatchStore } from "@herald/core/publishing/DispatchStore"
import type { IdempotencyStore } from "@herald/core/access/IdempotencyStore"
import type { EventStore } from "@herald/core/webhooks/EventStore"
import type { IdGenerator } from "@herald/core/kernel/IdGenerator"
import type { MediaStore } from "@herald/core/media/MediaStore"
import type { MetricsStore } from "@herald/core/analytics/MetricsStore"
import type { OrganizationStore } from "@herald/core/access/OrganizationStore"
import type { PostStore } from "@herald/core/posts/PostStore"
import type { QueueStore } from "@herald/core/workflow/QueueStore"
import type { ProcessStore } from "@herald/core/kernel/Processes"
import type { Transactor } from "@herald/core/kernel/Transactor"
import type { RequestCounters } from "@herald/core/access/RequestCounters"
import type { UsageCounters } from "@herald/core/access/UsageCounters"
import type { WebhookStore } from "@herald/core/webhooks/WebhookStore"
import type { SessionStore } from "@herald/core/access/SessionStore"
import type { UserStore } from "@herald/core/access/UserStore"
import type { InvitationStore } from "@herald/core/access/InvitationStore"
import type { NotificationStore } from "@herald/core/workflow/Notification"
import type { CommentStore } from "@herald/core/workflow/Comment"
import * as Layer from "effect/Layer"
import * as SqlAccountStore from "./SqlAccountStore.js"
import * as SqlAiCreditLedger from "./SqlAiCreditLedger.js"
import * as SqlAnalyticsStore from "./SqlAnalyticsStore.js"
import * as SqlApiKeyStore from "./SqlApiKeyStore.js"
import * as SqlCampaignStore from "./SqlCampaignStore.js"
import * as SqlConnectSessionStore from "./SqlConnectSessionStore.js"
import * as SqlDeviceAuthorizationStore from "./SqlDeviceAuthorizationStore.js"
import * as SqlDispatchStore from "./SqlDispatchStore.js"
import * as SqlIdempotencyStore from "./SqlIdempotencyStore.js"
import * as SqlMediaStore from "./SqlMediaStore.js"
import * as SqlMetricsStore from "./SqlMetricsStore.js"
import * as SqlOrganizationStore from "./SqlOrganizationStore.js"
import * as SqlPostStore from "./SqlPostStore.js"
import * as SqlQueueStore from "./SqlQueueStore.js"
import * as SqlProcessStore from "./SqlProcessStore.js"
import * as SqlRequestCounters from "./SqlRequestCounters.js"
import * as SqlTransactor from "./SqlTransactor.js"
import * as SqlUsageCounters from "./SqlUsageCounters.js"
import * as SqlWebhookStore from "./SqlWebhookStore.js"
import * as SqlSessionStore from "./SqlSessionStore.js"
import * as SqlUserStore from "./SqlUserStore.js"
import * as SqlInvitationStore from "./SqlInvitationStore.js"
import * as SqlNotificationFanout from "./SqlNotificationFanout.js"
import * as SqlNotificationStore from "./SqlNotificationStore.js"
import * as SqlCommentStore from "./SqlCommentStore.js"

/** Every store port this module implements over one SQL client. */
export type Stores =
  | OrganizationStore
  | ApiKeyStore
  | AccountStore
  | PostStore
  | DispatchStore
  | EventStore
  | UsageCounters
  | RequestCounters
  | WebhookStore
  | MediaStore
  | CampaignStore
  | QueueStore
  | ProcessStore
  | Transactor
  | AiCreditLedger
  | AnalyticsStore
  | RollupChanges
  | DeviceAuthorizationStore
  | ConnectSessionStore
  | MetricsStore
  | UserStore
  | SessionStore
  | IdempotencyStore
  | InvitationStore
  | NotificationStore
  | CommentStore

/**
 * Every core store over the given SQL client (SQLite or Postgres), plus the transactor that makes
 * their calls atomic together. Lease tokens of the dispatch store come from the `IdGenerator`.
 */
export const layer: Layer.Layer<Stores, never, SqlClient.SqlClient | IdGenerator> = Layer.mergeAll(
  SqlOrganizationStore.layer,
  SqlApiKeyStore.layer,
  SqlAccountStore.layer,
  SqlPostStore.layer,
  SqlDispatchStore.layer,
  // The event store that also creates webhook deliveries and in-app notifications in the event's transaction.
  SqlNotificationFanout.layer,
  SqlUsageCounters.layer,
  // API-key rate-limit windows: in memory on SQLite, an UNLOGGED table on Postgres.
  SqlRequestCounters.layer,
  SqlWebhookStore.layer,
  SqlMediaStore.layer,
  SqlTransactor.layer,
  SqlAiCreditLedger.layer,
  SqlAnalyticsStore.layer,
  // Housekeeping's folding of the rollup changes Postgres's triggers append.
  SqlAnalyticsStore.changesLayer,
  SqlCampaignStore.layer,
  SqlDeviceAuthorizationStore.layer,
  SqlConnectSessionStore.layer,
  SqlQueueStore.layer,
  SqlMetricsStore.layer,
  SqlProcessStore.layer,
  SqlUserStore.layer,
  SqlSessionStore.layer,
  // Create requests sent with an Idempotency-Key and their recorded answers.
  SqlIdempotencyStore.layer,
  // Links to join an organization with a role.
  SqlInvitationStore.layer,
  // In-app notifications and their e-mail copies.
  SqlNotificationStore.layer,
  // Comments on posts between authors and reviewers.
  SqlCommentStore.layer
)
