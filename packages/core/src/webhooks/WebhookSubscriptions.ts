/**
 * Managing webhook subscriptions: the URL check at creation, the bodies, who may manage them (owners
 * and admins; a key restricted to accounts manages only subscriptions scoped to them), and create,
 * list, get, update and delete.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { DomainError } from "../kernel/Errors.js"
import { type EventType, eventTypes, isEventType } from "./Event.js"
import * as EventAccounts from "./EventAccounts.js"
import * as FieldCaps from "../kernel/FieldCaps.js"
import { IdGenerator } from "../kernel/IdGenerator.js"
import type { AccountId, OrganizationId } from "../kernel/Ids.js"
import { WebhookId } from "../kernel/Ids.js"
import { decodeBody } from "../kernel/RequestBodies.js"
import { WebhookSubscription } from "./Webhook.js"
import * as WebhookSignature from "./WebhookSignature.js"
import { type WebhookRecord, WebhookStore } from "./WebhookStore.js"

/** Subscriptions per organization (spec: Limits). */
export const maxPerOrganization = 25

export const maxUrlLength = 2048
export const maxNameLength = 200

/** How long a receiver has to answer (spec: Retry policy). */
export const defaultTimeout: Duration.Duration = Duration.seconds(10)

export const secretWarning =
  "Store this secret now: it is shown only in this response and cannot be retrieved again. Verify each " +
  "delivery's X-Service-Signature (sha256= + hex HMAC-SHA256 of the raw body, keyed with this whole secret) " +
  "before trusting it. To replace a lost secret, delete the webhook and create a new one."

export const wildcardMessage = "There is no wildcard event: name every event the webhook should receive"

// ---------------------------------------------------------------------------------------------------
// The URL check at creation
// ---------------------------------------------------------------------------------------------------

export class UrlRefused extends Schema.TaggedError<UrlRefused>()("UrlRefused", { message: Schema.String }) {}

/**
 * Checks a receiver URL when it is saved (HTTPS, no private or local address, including what its host
 * resolves to). Sending checks again, every time; this only refuses early what could never be sent.
 */
export class WebhookUrlGuard extends Context.Tag("@herald/core/Webhooks/WebhookUrlGuard")<WebhookUrlGuard, {
  readonly check: (url: string) => Effect.Effect<void, UrlRefused>
}>() {}

// ---------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------

export const CreateBody = Schema.Struct({
  url: FieldCaps.cappedString(FieldCaps.maxUrl).annotations({ description: "HTTPS URL of the receiver" }),
  events: Schema.Array(Schema.String).annotations({
    description: `Event names, at least one; no wildcard. One of: ${eventTypes.join(", ")}`
  }),
  name: Schema.optional(
    Schema.NullOr(FieldCaps.cappedString(FieldCaps.maxLabel)).annotations({ description: "Optional label" })
  )
}).annotations({ identifier: "CreateWebhookRequest" })

export const UpdateBody = Schema.Struct({
  url: Schema.optional(FieldCaps.cappedString(FieldCaps.maxUrl)),
  events: Schema.optional(Schema.Array(Schema.String)),
  is_active: Schema.optional(Schema.Boolean.annotations({
    description: "true re-enables the webhook and resets its failure counter; false disables it"
  })),
  name: Schema.optional(Schema.NullOr(FieldCaps.cappedString(FieldCaps.maxLabel)))
}).annotations({ identifier: "UpdateWebhookRequest" })

const invalid = (path: string, message: string): DomainError =>
  DomainError.of("validation_error", `${path}: ${message}`, { validation_errors: [{ path, message }] })

// ---------------------------------------------------------------------------------------------------
// Who manages subscriptions
// ---------------------------------------------------------------------------------------------------

/**
 * The caller managing subscriptions: its organization and, for a key restricted to accounts, those
 * accounts. A bare organization id stands for the whole organization (an unrestricted key).
 */
export interface Manager {
  readonly organizationId: OrganizationId
  /** None: every account. */
  readonly accountIds: Option.Option<ReadonlyArray<AccountId>>
}

export type ManagerInput = OrganizationId | Manager

export const managerOf = (input: ManagerInput): Manager =>
  typeof input === "string" ? { organizationId: input, accountIds: Option.none() } : input

/**
 * Whether the manager sees and may change the subscription: an unrestricted manager every one of its
 * organization; a restricted one those scoped within its accounts (so a successor key with the same
 * accounts manages what an earlier one created), never an unscoped one.
 */
export const canManage = (manager: Manager, subscription: WebhookSubscription): boolean =>
  Option.match(manager.accountIds, {
    onNone: () => true,
    onSome: (mine) =>
      Option.match(subscription.accountIds, {
        onNone: () => false,
        onSome: (scope) => scope.every((id) => mine.includes(id))
      })
  })

/**
 * Known, explicit event names, deduplicated in the order given. A restricted manager may name only
 * events about accounts: an organization-level event would never reach its subscription.
 */
export const checkEvents = (
  raw: ReadonlyArray<string>,
  scoped = false
): Effect.Effect<ReadonlyArray<EventType>, DomainError> => {
  if (raw.length === 0) return Effect.fail(invalid("events", "name at least one event"))
  const unknown = raw.filter((e) => !isEventType(e))
  if (unknown.length > 0) {
    const wildcard = unknown.some((e) => e.includes("*"))
    return DomainError.fail(
      "invalid_event_type",
      `Unknown event type${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}` +
        (wildcard ? `. ${wildcardMessage}` : ""),
      { valid_events: [...eventTypes], invalid_events: unknown }
    )
  }
  const events = [...new Set(raw as ReadonlyArray<EventType>)]
  if (scoped) {
    const refused = events.filter((e) => EventAccounts.organizationEvents.includes(e))
    if (refused.length > 0) {
      return DomainError.fail(
        "invalid_event_type",
        `${refused.join(", ")} ${
          refused.length > 1 ? "are organization-level events" : "is an organization-level event"
        }: ` +
          "a key restricted to accounts receives only events about its accounts; use an unrestricted key",
        { valid_events: [...EventAccounts.accountEvents], invalid_events: refused }
      )
    }
  }
  return Effect.succeed(events)
}

const checkUrl = (url: string) =>
  Effect.gen(function*() {
    const trimmed = url.trim()
    if (trimmed === "") return yield* invalid("url", "required")
    if (trimmed.length > maxUrlLength) return yield* invalid("url", `at most ${maxUrlLength} characters`)
    const guard = yield* WebhookUrlGuard
    yield* guard.check(trimmed).pipe(Effect.mapError((refused) => invalid("url", refused.message)))
    return trimmed
  })

const checkName = (name: string | null | undefined): Effect.Effect<Option.Option<string>, DomainError> => {
  if (name === undefined || name === null || name.trim() === "") return Effect.succeed(Option.none())
  if (name.length > maxNameLength) return Effect.fail(invalid("name", `at most ${maxNameLength} characters`))
  return Effect.succeed(Option.some(name.trim()))
}

const parseId = (raw: string): Option.Option<WebhookId> => Schema.decodeUnknownOption(WebhookId)(raw.toLowerCase())

/** The subscription, when it is the manager's to see; otherwise 404 (as another organization's). */
export const found = (manager: Manager, rawId: string) =>
  Effect.gen(function*() {
    const id = parseId(rawId)
    if (Option.isNone(id)) return yield* DomainError.notFound("Webhook")
    const record = yield* (yield* WebhookStore).findById(manager.organizationId, id.value)
    if (Option.isNone(record) || !canManage(manager, record.value.subscription)) {
      return yield* DomainError.notFound("Webhook")
    }
    return record.value
  })

// ---------------------------------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------------------------------

export interface Created {
  readonly record: WebhookRecord
  /** The signing secret, shown once. */
  readonly secret: string
}

/**
 * Creates a subscription scoped to the manager's accounts (none: every account). The per-organization
 * limit counts every subscription of the organization, whoever created it.
 */
export const create = (input: ManagerInput, rawBody: unknown) =>
  Effect.gen(function*() {
    const manager = managerOf(input)
    const organizationId = manager.organizationId
    const body = yield* decodeBody(CreateBody, rawBody ?? {})
    const events = yield* checkEvents(body.events, Option.isSome(manager.accountIds))
    const name = yield* checkName(body.name)
    const url = yield* checkUrl(body.url)
    const store = yield* WebhookStore
    const secret = yield* WebhookSignature.generateSecret
    const now = yield* DateTime.now
    const subscription = new WebhookSubscription({
      id: WebhookId.make(yield* (yield* IdGenerator).uuid),
      organizationId,
      url,
      events,
      name,
      accountIds: manager.accountIds,
      secret: Redacted.make(secret),
      isActive: true,
      consecutiveFailures: 0,
      createdAt: now,
      updatedAt: now
    })
    const inserted = yield* store.insert(subscription, maxPerOrganization)
    if (!inserted) {
      return yield* DomainError.fail(
        "limit_reached",
        `An organization can have at most ${maxPerOrganization} webhooks; delete one before creating another`,
        { limit: maxPerOrganization }
      )
    }
    const created: Created = {
      record: { subscription, lastDeliveryAt: Option.none(), lastStatus: Option.none() },
      secret
    }
    return created
  }).pipe(Effect.withSpan("Webhooks.create"))

/** The subscriptions the manager may see, oldest first. */
export const list = (input: ManagerInput) => {
  const manager = managerOf(input)
  return Effect.flatMap(WebhookStore, (store) => store.list(manager.organizationId)).pipe(
    Effect.map((records) => records.filter((r) => canManage(manager, r.subscription))),
    Effect.withSpan("Webhooks.list")
  )
}

export const get = (input: ManagerInput, id: string) =>
  found(managerOf(input), id).pipe(Effect.withSpan("Webhooks.get"))

/** Changes url, events, name or is_active; the account scope stays as created. */
export const update = (input: ManagerInput, id: string, rawBody: unknown) =>
  Effect.gen(function*() {
    const manager = managerOf(input)
    const organizationId = manager.organizationId
    const current = yield* found(manager, id)
    const body = yield* decodeBody(UpdateBody, rawBody ?? {})
    const events = body.events === undefined
      ? undefined
      : yield* checkEvents(body.events, Option.isSome(manager.accountIds))
    const url = body.url === undefined ? undefined : yield* checkUrl(body.url)
    const name = body.name === undefined ? undefined : yield* checkName(body.name)
    const updated = yield* (yield* WebhookStore).update(organizationId, current.subscription.id, {
      ...(url === undefined ? {} : { url }),
      ...(events === undefined ? {} : { events }),
      ...(name === undefined ? {} : { name }),
      ...(body.is_active === undefined ? {} : { isActive: body.is_active }),
      updatedAt: yield* DateTime.now
    })
    if (Option.isNone(updated)) return yield* DomainError.notFound("Webhook")
    return updated.value
  }).pipe(Effect.withSpan("Webhooks.update"))

export const remove = (input: ManagerInput, id: string) =>
  Effect.gen(function*() {
    const manager = managerOf(input)
    const current = yield* found(manager, id)
    const removed = yield* (yield* WebhookStore).remove(manager.organizationId, current.subscription.id)
    if (!removed) return yield* DomainError.notFound("Webhook")
    return current
  }).pipe(Effect.withSpan("Webhooks.remove"))

export const defaultPageSize = 20
export const maxPageSize = 100

/** The subscription's recent attempts, newest first (`limit` 1 to 100, default 20). */
export const attempts = (
  input: ManagerInput,
  id: string,
  page: { readonly limit?: number | undefined; readonly offset?: number | undefined } = {}
) =>
  Effect.gen(function*() {
    const manager = managerOf(input)
    const organizationId = manager.organizationId
    const current = yield* found(manager, id)
    const limit = Math.min(maxPageSize, Math.max(1, Math.trunc(page.limit ?? defaultPageSize)))
    const offset = Math.max(0, Math.trunc(page.offset ?? 0))
    const items = yield* (yield* WebhookStore).listAttempts(organizationId, current.subscription.id, { limit, offset })
    return { items, limit, offset }
  }).pipe(Effect.withSpan("Webhooks.attempts"))
