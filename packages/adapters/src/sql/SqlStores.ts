import type * as SqlClient from "@effect/sql/SqlClient"
import type { AiCreditLedger } from "@herald/core/AiCredits"
import type { AccountStore } from "@herald/core/AccountStore"
import type { AnalyticsStore } from "@herald/core/AnalyticsStore"
import type { CampaignStore } from "@herald/core/CampaignStore"
import type { ApiKeyStore } from "@herald/core/ApiKeyStore"
import type { ConnectSessionStore } from "@herald/core/ConnectSessionStore"
import type { DeviceAuthorizationStore } from "@herald/core/DeviceAuthorizationStore"
import type { DispatchStore } from "@herald/core/DispatchStore"
import type { EventStore } from "@herald/core/EventStore"
import type { IdGenerator } from "@herald/core/IdGenerator"
import type { MediaStore } from "@herald/core/MediaStore"
import type { MetricsStore } from "@herald/core/MetricsStore"
import type { OrganizationStore } from "@herald/core/OrganizationStore"
import type { PostStore } from "@herald/core/PostStore"
import type { QueueStore } from "@herald/core/QueueStore"
import type { ProcessStore } from "@herald/core/Processes"
import type { Transactor } from "@herald/core/Transactor"
import type { UsageCounters } from "@herald/core/UsageCounters"
import type { WebhookStore } from "@herald/core/WebhookStore"
import * as Layer from "effect/Layer"
import * as SqlAccountStore from "./SqlAccountStore.js"
import * as SqlAiCreditLedger from "./SqlAiCreditLedger.js"
import * as SqlAnalyticsStore from "./SqlAnalyticsStore.js"
import * as SqlApiKeyStore from "./SqlApiKeyStore.js"
import * as SqlCampaignStore from "./SqlCampaignStore.js"
import * as SqlConnectSessionStore from "./SqlConnectSessionStore.js"
import * as SqlDeviceAuthorizationStore from "./SqlDeviceAuthorizationStore.js"
import * as SqlDispatchStore from "./SqlDispatchStore.js"
import * as SqlEventFanout from "./SqlEventFanout.js"
import * as SqlMediaStore from "./SqlMediaStore.js"
import * as SqlMetricsStore from "./SqlMetricsStore.js"
import * as SqlOrganizationStore from "./SqlOrganizationStore.js"
import * as SqlPostStore from "./SqlPostStore.js"
import * as SqlQueueStore from "./SqlQueueStore.js"
import * as SqlProcessStore from "./SqlProcessStore.js"
import * as SqlTransactor from "./SqlTransactor.js"
import * as SqlUsageCounters from "./SqlUsageCounters.js"
import * as SqlWebhookStore from "./SqlWebhookStore.js"

/** Every store port this module implements over one SQL client. */
export type Stores =
  | OrganizationStore
  | ApiKeyStore
  | AccountStore
  | PostStore
  | DispatchStore
  | EventStore
  | UsageCounters
  | WebhookStore
  | MediaStore
  | CampaignStore
  | QueueStore
  | ProcessStore
  | Transactor
  | AiCreditLedger
  | AnalyticsStore
  | DeviceAuthorizationStore
  | ConnectSessionStore
  | MetricsStore

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
  // The event store that also creates webhook deliveries in the event's transaction.
  SqlEventFanout.layer,
  SqlUsageCounters.layer,
  SqlWebhookStore.layer,
  SqlMediaStore.layer,
  SqlTransactor.layer,
  SqlAiCreditLedger.layer,
  SqlAnalyticsStore.layer,
  SqlCampaignStore.layer,
  SqlDeviceAuthorizationStore.layer,
  SqlConnectSessionStore.layer,
  SqlQueueStore.layer,
  SqlMetricsStore.layer,
  SqlProcessStore.layer
)
