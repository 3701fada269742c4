/**
 * The webhooks use cases: subscriptions (create, list, get, update, delete, test) and delivery.
 *
 * Deliveries are created with their events, in the event's transaction (the SQL event store fans each
 * appended event out to the active subscriptions that name it). `deliverDue` claims due deliveries a
 * whole subscription at a time (exclusive across processes, leased), sends each one signed, in event
 * order, and records every attempt: success only on a 2xx answer within the timeout; otherwise the
 * next attempt is due by the spec's ladder (`WebhookActivity.nextAttemptDelay`), and after the 6th
 * failed attempt the delivery is dead. A dead delivery counts as one failed delivery; the 20th in a
 * row disables the subscription; a delivered one resets the count.
 *
 * Delivery is at least once: a process that dies mid-attempt leaves the delivery due (its attempt is
 * not counted) and it is sent again after the lease runs out. Receivers dedupe by event id.
 *
 * This module is their one entry point: subscriptions (`WebhookSubscriptions`), delivery
 * (`WebhookDelivery`) and the history's housekeeping (`WebhookHistory`) are modules of their own.
 */
export {
  attempts,
  canManage,
  checkEvents,
  create,
  CreateBody,
  defaultPageSize,
  defaultTimeout,
  get,
  list,
  maxNameLength,
  maxPageSize,
  maxPerOrganization,
  maxUrlLength,
  remove,
  secretWarning,
  update,
  UpdateBody,
  UrlRefused,
  WebhookUrlGuard,
  wildcardMessage
} from "./WebhookSubscriptions.js"
export type { Created, Manager, ManagerInput } from "./WebhookSubscriptions.js"
export { deliverDue, describe, isSuccess, outcomeOf, run, test } from "./WebhookDelivery.js"
export type { DeliveryOptions, RoundSummary, TestResult } from "./WebhookDelivery.js"
export { defaultMaxPerWebhook, defaultRetention, pruneHistory } from "./WebhookHistory.js"
export type { HistoryOptions, HistorySummary, Requirements, WebhooksError } from "./WebhookHistory.js"
