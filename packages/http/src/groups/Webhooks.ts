/**
 * `/webhooks`: subscriptions (create, list, get, update, delete), a test delivery, and the delivery
 * log of a subscription. Scopes: `read` for GETs, `write` for the rest (the spec names none). The
 * secret is returned by the create call only. A key restricted to accounts creates subscriptions
 * scoped to them and sees only subscriptions within them (`Webhooks.canManage`).
 *
 * Also here: the layers `herald serve` and `herald worker` run webhooks with (the transport, the
 * save-time URL guard, and the deliverer loop).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import * as AddressGuard from "@herald/adapters/net/AddressGuard"
import * as HttpWebhookTransport from "@herald/adapters/webhooks/HttpWebhookTransport"
import { DomainError, type PersistenceError } from "@herald/core/kernel/Errors"
import { eventTypes } from "@herald/core/webhooks/Event"
import type { DeliveryAttempt } from "@herald/core/webhooks/Webhook"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import type { WebhookRecord } from "@herald/core/webhooks/WebhookStore"
import type { WebhookTransport } from "@herald/core/webhooks/WebhookTransport"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Auth from "../Auth.js"
import * as Envelope from "../Envelope.js"
import * as Idempotency from "../Idempotency.js"
import * as RequestMiddleware from "../RequestMiddleware.js"

// ---------------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------------

const Instant = Schema.String.annotations({ description: "ISO 8601, UTC" })

const webhookFields = {
  id: Schema.String.annotations({ description: "UUID" }),
  url: Schema.String.annotations({ description: "HTTPS URL of the receiver" }),
  events: Schema.Array(Schema.String).annotations({ description: "Event names" }),
  name: Schema.NullOr(Schema.String).annotations({ description: "Optional label" }),
  account_ids: Schema.NullOr(Schema.Array(Schema.Int)).annotations({
    description: "The accounts whose events the webhook receives (those of the key restricted to accounts that " +
      "created it); null: every account and organization-level events"
  }),
  is_active: Schema.Boolean,
  created_at: Instant,
  updated_at: Instant,
  consecutive_failures: Schema.Int.annotations({
    description: "Failed deliveries in a row (a delivery fails when its 6th attempt fails); 20 disables the " +
      "webhook; a delivered event or PATCH is_active: true resets it"
  }),
  last_delivery_at: Schema.NullOr(Instant).annotations({
    description: "When the last delivery attempt ended (test deliveries excluded); null before the first"
  }),
  last_status: Schema.NullOr(Schema.Int).annotations({
    description: "The receiver's HTTP status on the last attempt; null when it did not answer or before the first"
  })
}

export const WebhookView = Schema.Struct(webhookFields).annotations({ identifier: "Webhook" })
export type WebhookView = typeof WebhookView.Type

export const CreatedWebhookView = Schema.Struct({
  ...webhookFields,
  secret: Schema.String.annotations({ description: "whsec_ + 64 characters; returned only by this call" }),
  secret_warning: Schema.String
}).annotations({ identifier: "CreatedWebhook" })
export type CreatedWebhookView = typeof CreatedWebhookView.Type

export const WebhookList = Schema.Struct({ webhooks: Schema.Array(WebhookView) }).annotations({
  identifier: "WebhookList"
})

export const DeletedWebhook = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({
  identifier: "DeletedWebhook"
})

export const TestResultView = Schema.Struct({
  ok: Schema.Boolean.annotations({ description: "true when the receiver answered 2xx within 10 seconds" }),
  status: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status; null without an answer" }),
  duration_ms: Schema.Int,
  message: Schema.String
}).annotations({ identifier: "WebhookTestResult" })
export type TestResultView = typeof TestResultView.Type

export const DeliveryAttemptView = Schema.Struct({
  id: Schema.String.annotations({ description: "The attempt's X-Service-Delivery-Id" }),
  delivery_id: Schema.String.annotations({ description: "The delivery (one event to this webhook) across attempts" }),
  event: Schema.String,
  event_id: Schema.String.annotations({ description: "X-Service-Event-Id: the same on every attempt" }),
  attempt: Schema.Int.annotations({ description: "1 to 6" }),
  ok: Schema.Boolean,
  status: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status; null without an answer" }),
  duration_ms: Schema.Int,
  response_body: Schema.String.annotations({ description: "At most the first 2 KB of the receiver's answer" }),
  error: Schema.NullOr(Schema.String).annotations({ description: "Why the attempt failed; null when delivered" }),
  attempted_at: Instant
}).annotations({ identifier: "WebhookDeliveryAttempt" })
export type DeliveryAttemptView = typeof DeliveryAttemptView.Type

export const DeliveryList = Schema.Struct({
  deliveries: Schema.Array(DeliveryAttemptView),
  pagination: Schema.Struct({ limit: Schema.Int, offset: Schema.Int })
}).annotations({ identifier: "WebhookDeliveryList" })

const iso = (d: DateTime.Utc) => DateTime.formatIso(d)

export const toWebhookView = (record: WebhookRecord): WebhookView => {
  const s = record.subscription
  return {
    id: s.id,
    url: s.url,
    events: s.events,
    name: Option.getOrNull(s.name),
    account_ids: Option.getOrNull(s.accountIds),
    is_active: s.isActive,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    consecutive_failures: s.consecutiveFailures,
    last_delivery_at: Option.match(record.lastDeliveryAt, { onNone: () => null, onSome: iso }),
    last_status: Option.getOrNull(record.lastStatus)
  }
}

export const toAttemptView = (a: DeliveryAttempt): DeliveryAttemptView => ({
  id: a.id,
  delivery_id: a.deliveryId,
  event: a.eventType,
  event_id: a.eventId,
  attempt: a.attempt,
  ok: a.ok,
  status: Option.getOrNull(a.statusCode),
  duration_ms: a.durationMs,
  response_body: a.responseBody,
  error: Option.getOrNull(a.error),
  attempted_at: iso(a.attemptedAt)
})

const IdPath = Schema.Struct({ id: Schema.String.annotations({ description: "The webhook's UUID" }) })

const PageParams = Schema.Struct({
  limit: Schema.optional(Schema.String.annotations({ description: "1 to 100, default 20" })),
  offset: Schema.optional(Schema.String.annotations({ description: "0 or more, default 0" }))
})

// ---------------------------------------------------------------------------------------------------
// Group
// ---------------------------------------------------------------------------------------------------

export const WebhooksGroup = HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(Webhooks.CreateBody)
      .setHeaders(Idempotency.Headers)
      .addSuccess(Envelope.ok(CreatedWebhookView), { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Subscribe an HTTPS URL to events (scope write); the signing secret is in this response only. " +
          `At most ${Webhooks.maxPerOrganization} per organization. Events: ${eventTypes.join(", ")}`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .addSuccess(Envelope.ok(WebhookList))
      .annotate(OpenApi.Summary, "The organization's webhooks, oldest first (scope read)")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(WebhookView))
      .annotate(OpenApi.Summary, "One webhook, without its secret (scope read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhooks/:id")
      .setPath(IdPath)
      .setPayload(Webhooks.UpdateBody)
      .addSuccess(Envelope.ok(WebhookView))
      .annotate(
        OpenApi.Summary,
        "Change url, events, name or is_active (scope write); is_active: true re-enables and resets the failure counter"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhooks/:id")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(DeletedWebhook))
      .annotate(OpenApi.Summary, "Delete a webhook and its delivery history (scope write)")
  )
  .add(
    HttpApiEndpoint.post("test", "/webhooks/:id/test")
      .setPath(IdPath)
      .addSuccess(Envelope.ok(TestResultView))
      .annotate(
        OpenApi.Summary,
        "Send one signed test delivery (data.test: true) now and report the answer (scope write)"
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries")
      .setPath(IdPath)
      .setUrlParams(PageParams)
      .addSuccess(Envelope.ok(DeliveryList))
      .annotate(OpenApi.Summary, "The webhook's recent delivery attempts, newest first (scope read)")
  )
  .addError(ApiGroup.errors.notFound)
  .pipe(ApiGroup.authenticated)

// ---------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------

/** The parsed JSON body; undefined when there is none. Malformed JSON is 400 `invalid_json`. */
const jsonBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(
    Effect.mapError(() => DomainError.of("invalid_json", "The request body could not be read"))
  )
  if (text.trim() === "") return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return yield* DomainError.fail("invalid_json", "The request body is not valid JSON")
  }
})

const dieOnStorage = <A, R>(
  self: Effect.Effect<A, DomainError | PersistenceError, R>
): Effect.Effect<A, DomainError, R> => Effect.catchTag(self, "PersistenceError", Effect.die)

const logWebhook = (id: string) => RequestMiddleware.annotateRequestLog("webhook_id", id)

/** The caller as a webhook manager: its organization and, for a restricted key, its accounts. */
const managerOf = (principal: Auth.Principal): Webhooks.Manager => ({
  organizationId: principal.organization.id,
  accountIds: principal.key.accountIds
})

const pageNumber = (raw: string | undefined): number | undefined => {
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined
  return Number(raw.trim())
}

export const WebhooksLive = HttpApiBuilder.group(ApiGroup.apiOf(WebhooksGroup), "webhooks", (handlers) =>
  handlers
    .handleRaw("create", () =>
      Idempotency.idempotent(Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("write"))
        const body = yield* jsonBody
        const created = yield* Webhooks.create(manager, body).pipe(dieOnStorage)
        yield* logWebhook(created.record.subscription.id)
        const out: CreatedWebhookView = {
          ...toWebhookView(created.record),
          secret: created.secret,
          secret_warning: Webhooks.secretWarning
        }
        return yield* Idempotency.respond(CreatedWebhookView, 201)(out)
      })))
    .handle("list", () =>
      Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("read"))
        const records = yield* Webhooks.list(manager).pipe(dieOnStorage)
        return { webhooks: records.map(toWebhookView) }
      }))
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("read"))
        const record = yield* Webhooks.get(manager, path.id).pipe(dieOnStorage)
        yield* logWebhook(record.subscription.id)
        return toWebhookView(record)
      }))
    .handleRaw("update", ({ path }) =>
      Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("write"))
        const body = yield* jsonBody
        const record = yield* Webhooks.update(manager, path.id, body).pipe(dieOnStorage)
        yield* logWebhook(record.subscription.id)
        return toWebhookView(record)
      }))
    .handle("delete", ({ path }) =>
      Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("write"))
        const removed = yield* Webhooks.remove(manager, path.id).pipe(dieOnStorage)
        yield* logWebhook(removed.subscription.id)
        return { id: removed.subscription.id, deleted: true as const }
      }))
    .handle("test", ({ path }) =>
      Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("write"))
        const result = yield* Webhooks.test(manager, path.id).pipe(dieOnStorage)
        const out: TestResultView = {
          ok: result.ok,
          status: Option.getOrNull(result.status),
          duration_ms: result.durationMs,
          message: result.message
        }
        return out
      }))
    .handle("deliveries", ({ path, urlParams }) =>
      Effect.gen(function*() {
        const manager = managerOf(yield* Auth.requireScope("read"))
        const page = yield* Webhooks.attempts(manager, path.id, {
          limit: pageNumber(urlParams.limit),
          offset: pageNumber(urlParams.offset)
        }).pipe(dieOnStorage)
        return { deliveries: page.items.map(toAttemptView), pagination: { limit: page.limit, offset: page.offset } }
      })))

// ---------------------------------------------------------------------------------------------------
// Running webhooks in a process
// ---------------------------------------------------------------------------------------------------

/**
 * The save-time URL check: the SSRF guard with DNS (a host name resolving to a refused address is
 * refused). A host that does not resolve now is accepted: it can reach nothing, and every send is
 * checked again.
 */
export const layerUrlGuard = (options: AddressGuard.GuardOptions): Layer.Layer<Webhooks.WebhookUrlGuard> =>
  Layer.succeed(
    Webhooks.WebhookUrlGuard,
    Webhooks.WebhookUrlGuard.of({
      check: (url) =>
        AddressGuard.resolveAndCheck(url, options).pipe(
          Effect.asVoid,
          Effect.catchIf((refused) => refused.reason === "unresolvable", () => Effect.void),
          Effect.mapError((refused) => new Webhooks.UrlRefused({ message: refused.message }))
        )
    })
  )

/** The transport and the URL guard with one setting of the private-address switch. */
export const layerServices = (
  options: { readonly allowPrivate: boolean; readonly resolve?: AddressGuard.Resolver }
): Layer.Layer<WebhookTransport | Webhooks.WebhookUrlGuard> =>
  Layer.merge(HttpWebhookTransport.layer(options), layerUrlGuard(options))

/** `layerServices` with `HERALD_WEBHOOKS_ALLOW_PRIVATE`; logs the operator warning when it is on. */
export const layerServicesFromEnv: Layer.Layer<WebhookTransport | Webhooks.WebhookUrlGuard> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { allowPrivate } = AddressGuard.fromEnv()
    if (allowPrivate) yield* Effect.logWarning(AddressGuard.allowPrivateWarning)
    return layerServices({ allowPrivate })
  })
)

/** The deliverer loop as a background fiber for as long as the layer lives. */
export const layerDeliverer = (options: Webhooks.DeliveryOptions = {}) =>
  Layer.scopedDiscard(Effect.forkScoped(Webhooks.run(options)))
