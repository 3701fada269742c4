/**
 * The posts use cases of the API: create (draft, scheduled, immediate, queue), get, list, results,
 * update (PATCH), delete and schedule (a draft). Each state change and its events are written in one
 * transaction (the outbox). Request bodies arrive as parsed JSON and are decoded here, so that every
 * caller (HTTP, an embedding host) gets the same rules.
 *
 * This module is their one entry point; each lives in a module of its own: `CreatePost`, `PostViews`
 * (get, list, cursor), `UpdatePost`, `DeletePost`, `SchedulePost`, with the bodies (`PostBodies`),
 * the field rules (`PostFieldRules`), status and events (`PostEvents`) and what they share
 * (`PostPorts`).
 */
export {
  draftNextSteps,
  editGuardSeconds,
  forbiddenMediaFields,
  formBodyMessage,
  maxAccountsPerPost,
  multipartMessage,
  PostMedia,
  QueueAllocator,
  queueMessages,
  scheduleLeadSeconds
} from "./PostPorts.js"
export type { Caller, QueueAllocation } from "./PostPorts.js"
export { checkFieldNames, CreateBody, decodeBody, ScheduleBody, UpdateBody } from "./PostBodies.js"
export { isIanaZone, parseInstant } from "./PostFieldRules.js"
export { eventData, statusOf } from "./PostEvents.js"
export { create } from "./CreatePost.js"
export type { Created, CreateRequirements } from "./CreatePost.js"
export { decodeCursor, defaultPageSize, encodeCursor, get, list, maxPageSize, parseListQuery } from "./PostViews.js"
export type { ListCursor, Listed } from "./PostViews.js"
export { ensureEditable, update } from "./UpdatePost.js"
export type { Updated, UpdateRequirements } from "./UpdatePost.js"
export { remove } from "./DeletePost.js"
export { schedule } from "./SchedulePost.js"
export type { ScheduleRequirements } from "./SchedulePost.js"
