import type * as SqlClient from "@effect/sql/SqlClient"
import type { AccountStore } from "@herald/core/AccountStore"
import type { ApiKeyStore } from "@herald/core/ApiKeyStore"
import type { DispatchStore } from "@herald/core/DispatchStore"
import type { EventStore } from "@herald/core/EventStore"
import type { IdGenerator } from "@herald/core/IdGenerator"
import type { MediaStore } from "@herald/core/MediaStore"
import type { OrganizationStore } from "@herald/core/OrganizationStore"
import type { PostStore } from "@herald/core/PostStore"
import type { ProcessStore } from "@herald/core/Processes"
import type { Transactor } from "@herald/core/Transactor"
import type { UsageCounters } from "@herald/core/UsageCounters"
import type { WebhookStore } from "@herald/core/WebhookStore"
import * as Layer from "effect/Layer"
import * as SqlAccountStore from "./SqlAccountStore.js"
import * as SqlApiKeyStore from "./SqlApiKeyStore.js"
import * as SqlDispatchStore from "./SqlDispatchStore.js"
import * as SqlEventFanout from "./SqlEventFanout.js"
import * as SqlMediaStore from "./SqlMediaStore.js"
import * as SqlOrganizationStore from "./SqlOrganizationStore.js"
import * as SqlPostStore from "./SqlPostStore.js"
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
  | ProcessStore
  | Transactor

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
  SqlProcessStore.layer,
  SqlTransactor.layer
)
