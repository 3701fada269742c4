/**
 * `WebhookStore` over SQL (SQLite and Postgres). Column conventions as in `internal/Rows.ts`. The
 * signing secret is sealed with the `CredentialCipher` when one is provided (as platform credentials
 * are): it has to be read back to sign, so it cannot be hashed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Event, EventType } from "@herald/core/webhooks/Event"
import { AccountId, DeliveryId, EventId, OrganizationId, WebhookId } from "@herald/core/kernel/Ids"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { DeliveryAttempt, DeliveryStatus, WebhookDelivery, WebhookSubscription } from "@herald/core/webhooks/Webhook"
import * as WebhookActivity from "@herald/core/webhooks/WebhookActivity"
import {
  type ClaimedDelivery,
  type CompleteResult,
  type PruneResult,
  type SubscriptionClaim,
  type WebhookRecord,
  WebhookStore
} from "@herald/core/webhooks/WebhookStore"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CredentialCipher } from "../security/CredentialCipher.js"
import { Bool, CountRow, DbNumber, EventRow, Instant, orPersistence } from "./internal/Rows.js"

const column = <const K extends string, S extends Schema.Schema.Any>(key: K, schema: S) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(key))

const DbInt = Schema.compose(DbNumber, Schema.Int)
const DbCount = Schema.compose(DbNumber, Schema.NonNegativeInt)

const SubscriptionRow = Schema.transform(
  Schema.Struct({
    id: WebhookId,
    organizationId: column("organization_id", OrganizationId),
    url: Schema.String,
    events: Schema.parseJson(Schema.Array(EventType)),
    name: Schema.OptionFromNullOr(Schema.String),
    // A JSON array of account ids; NULL for every account (the fan-out reads it as such).
    accountIds: column("account_ids", Schema.OptionFromNullOr(Schema.parseJson(Schema.Array(AccountId)))),
    secret: Schema.Redacted(Schema.String),
    isActive: column("is_active", Bool),
    consecutiveFailures: column("consecutive_failures", DbCount),
    createdAt: column("created_at", Instant),
    updatedAt: column("updated_at", Instant)
  }),
  Schema.instanceOf(WebhookSubscription),
  { strict: true, decode: (fields) => new WebhookSubscription(fields), encode: (s) => s }
)

const StatsRow = Schema.Struct({
  last_delivery_at: Schema.NullOr(Instant),
  last_status: Schema.NullOr(DbInt)
})

const DeliveryRow = Schema.transform(
  Schema.Struct({
    id: DeliveryId,
    subscriptionId: column("subscription_id", WebhookId),
    organizationId: column("organization_id", OrganizationId),
    eventId: column("event_id", EventId),
    eventType: column("event_type", EventType),
    status: DeliveryStatus,
    attempts: DbCount,
    nextAttemptAt: column("next_attempt_at", Schema.OptionFromNullOr(Instant)),
    createdAt: column("created_at", Instant),
    updatedAt: column("updated_at", Instant)
  }),
  Schema.instanceOf(WebhookDelivery),
  { strict: true, decode: (fields) => new WebhookDelivery(fields), encode: (d) => d }
)

const AttemptRow = Schema.transform(
  Schema.Struct({
    id: Schema.UUID,
    deliveryId: column("delivery_id", DeliveryId),
    subscriptionId: column("subscription_id", WebhookId),
    eventId: column("event_id", EventId),
    eventType: column("event_type", EventType),
    attempt: Schema.compose(DbNumber, Schema.Int.pipe(Schema.between(1, 6))),
    ok: Bool,
    statusCode: column("status_code", Schema.OptionFromNullOr(DbInt)),
    durationMs: column("duration_ms", DbCount),
    responseBody: column("response_body", Schema.String),
    error: Schema.OptionFromNullOr(Schema.String),
    attemptedAt: column("attempted_at", Instant)
  }),
  Schema.instanceOf(DeliveryAttempt),
  { strict: true, decode: (fields) => new DeliveryAttempt(fields), encode: (a) => a }
)

const SeqRow = Schema.Struct({ seq: DbNumber })
const LeaseRow = Schema.Struct({ lease_token: Schema.String, lease_expires_at: Instant })
const ActivityRow = Schema.Struct({ is_active: Bool, consecutive_failures: DbCount })
const NextRow = Schema.Array(Schema.Struct({ next: Schema.NullOr(DbNumber) }))
const IdRows = Schema.Array(Schema.Struct({ id: Schema.String }))

const millis = DateTime.toEpochMillis

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const ids = yield* IdGenerator
  const cipher = yield* Effect.serviceOption(CredentialCipher)

  const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const forUpdate = isPg ? sql.literal("FOR UPDATE") : sql.literal("")
  const skipLockedOfS = isPg ? sql.literal("FOR UPDATE OF s SKIP LOCKED") : sql.literal("")
  // The event order of deliveries: a sequence on Postgres, the rowid on SQLite.
  const order = (alias: string) => sql.literal(isPg ? `${alias}.seq` : `${alias}.rowid`)
  const returningSeq = sql.literal(isPg ? "RETURNING *" : "RETURNING *, rowid AS seq")
  // Pruning on Postgres: the picked deliveries are locked (another pruner skips them) and so, in key
  // share mode, are their subscriptions: a subscription being deleted (or recording an outcome, both
  // FOR UPDATE) is skipped rather than waited for, and cannot be deleted under the pruner, so the
  // two never wait on each other's rows.
  const pruneLocks = sql.literal(isPg ? "FOR UPDATE OF d SKIP LOCKED FOR KEY SHARE OF s SKIP LOCKED" : "")
  const finished = sql.literal("status IN ('delivered', 'dead')")

  const seal = (secret: string) => Option.isNone(cipher) ? Effect.succeed(secret) : cipher.value.seal(secret)
  const open = (rows: ReadonlyArray<Record<string, unknown>>) =>
    Option.isNone(cipher) ? Effect.succeed(rows) : Effect.forEach(rows, (row) =>
      typeof row.secret === "string"
        ? Effect.map(cipher.value.open(row.secret), (secret) => ({ ...row, secret }))
        : Effect.succeed(row))

  const decodeSubscriptions = (rows: ReadonlyArray<Record<string, unknown>>) =>
    Effect.flatMap(open(rows), Schema.decodeUnknown(Schema.Array(SubscriptionRow)))

  const decodeRecords = (rows: ReadonlyArray<Record<string, unknown>>) =>
    Effect.gen(function*() {
      const subscriptions = yield* decodeSubscriptions(rows)
      const stats = yield* Schema.decodeUnknown(Schema.Array(StatsRow))(rows)
      return subscriptions.map((subscription, i): WebhookRecord => ({
        subscription,
        lastDeliveryAt: Option.fromNullable(stats[i]!.last_delivery_at),
        lastStatus: Option.fromNullable(stats[i]!.last_status)
      }))
    })

  const selectRecord = (organizationId: OrganizationId, id: WebhookId) =>
    sql`SELECT * FROM webhook_subscriptions WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
      Effect.flatMap(decodeRecords),
      Effect.map(Arr.head)
    )

  /** Pending deliveries of a subscription that stopped end here, unsent. */
  const endPending = (subscriptionId: string, now: number) =>
    sql`UPDATE webhook_deliveries SET status = 'dead', next_attempt_at = NULL, lease_token = NULL, updated_at = ${now}
      WHERE subscription_id = ${subscriptionId} AND status = 'pending'`

  const writeEventTypes = (
    subscription: { readonly id: string; readonly organizationId: string },
    events: ReadonlyArray<string>
  ) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM webhook_subscription_events WHERE subscription_id = ${subscription.id}`
      const rows = Arr.dedupe(events).map((event_type) => ({
        subscription_id: subscription.id,
        organization_id: subscription.organizationId,
        event_type
      }))
      if (rows.length > 0) yield* sql`INSERT INTO webhook_subscription_events ${sql.insert(rows)}`
    })

  return WebhookStore.of({
    insert: (subscription, limit) =>
      sql.withTransaction(Effect.gen(function*() {
        // Postgres: concurrent inserts for one organization queue on its row, so the count holds.
        if (isPg) yield* sql`SELECT id FROM organizations WHERE id = ${subscription.organizationId} FOR UPDATE`
        const counted = yield* sql`SELECT COUNT(*) AS count FROM webhook_subscriptions
          WHERE organization_id = ${subscription.organizationId}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(CountRow)))
        )
        if ((counted[0]?.count ?? 0) >= limit) return false
        const encoded = yield* Schema.encode(SubscriptionRow)(subscription)
        const row = { ...encoded, secret: yield* seal(encoded.secret), last_delivery_at: null, last_status: null }
        yield* sql`INSERT INTO webhook_subscriptions ${sql.insert(row)}`
        yield* writeEventTypes(subscription, subscription.events)
        return true
      })).pipe(orPersistence("WebhookStore.insert")),

    list: (organizationId) =>
      sql`SELECT * FROM webhook_subscriptions WHERE organization_id = ${organizationId}
        ORDER BY created_at, id`.pipe(Effect.flatMap(decodeRecords), orPersistence("WebhookStore.list")),

    findById: (organizationId, id) => selectRecord(organizationId, id).pipe(orPersistence("WebhookStore.findById")),

    update: (organizationId, id, patch) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* sql`SELECT is_active, consecutive_failures FROM webhook_subscriptions
          WHERE organization_id = ${organizationId} AND id = ${id} ${forUpdate}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(ActivityRow)))
        )
        const current = locked[0]
        if (current === undefined) return Option.none<WebhookRecord>()
        const now = millis(patch.updatedAt)
        const activity = patch.isActive === undefined
          ? { isActive: current.is_active, consecutiveFailures: current.consecutive_failures }
          : WebhookActivity.setActive(
            { isActive: current.is_active, consecutiveFailures: current.consecutive_failures },
            patch.isActive
          )
        const sets: Record<string, string | number | null> = {
          is_active: activity.isActive ? 1 : 0,
          consecutive_failures: activity.consecutiveFailures,
          updated_at: now
        }
        if (patch.url !== undefined) sets.url = patch.url
        if (patch.events !== undefined) sets.events = JSON.stringify(patch.events)
        if (patch.name !== undefined) sets.name = Option.getOrNull(patch.name)
        yield* sql`UPDATE webhook_subscriptions SET ${sql.update(sets)} WHERE id = ${id}`
        if (patch.events !== undefined) yield* writeEventTypes({ id, organizationId }, patch.events)
        if (!activity.isActive) yield* endPending(id, now)
        return yield* selectRecord(organizationId, id)
      })).pipe(orPersistence("WebhookStore.update")),

    remove: (organizationId, id) =>
      sql.withTransaction(Effect.gen(function*() {
        const found = yield* sql`SELECT id FROM webhook_subscriptions
          WHERE organization_id = ${organizationId} AND id = ${id} ${forUpdate}`
        if (found.length === 0) return false
        // Explicit, so that the history goes even where foreign keys are not enforced.
        yield* sql`DELETE FROM webhook_attempts WHERE subscription_id = ${id}`
        yield* sql`DELETE FROM webhook_deliveries WHERE subscription_id = ${id}`
        yield* sql`DELETE FROM webhook_subscription_events WHERE subscription_id = ${id}`
        yield* sql`DELETE FROM webhook_subscriptions WHERE id = ${id}`
        return true
      })).pipe(orPersistence("WebhookStore.remove")),

    listAttempts: (organizationId, id, page) =>
      sql`SELECT a.* FROM webhook_attempts a
        JOIN webhook_subscriptions s ON s.id = a.subscription_id
        WHERE s.organization_id = ${organizationId} AND a.subscription_id = ${id}
        ORDER BY a.attempted_at DESC, a.attempt DESC, a.id
        LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(AttemptRow))),
        orPersistence("WebhookStore.listAttempts")
      ),

    listDeliveries: (id) =>
      sql`SELECT * FROM webhook_deliveries d WHERE d.subscription_id = ${id} ORDER BY ${order("d")}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(DeliveryRow))),
        orPersistence("WebhookStore.listDeliveries")
      ),

    claimDue: ({ held, holder, leaseFor, now, perOrganization, perSubscription, subscriptions }) =>
      sql.withTransaction(Effect.gen(function*() {
        if (subscriptions <= 0 || perSubscription <= 0) return []
        const batch = yield* ids.uuid
        const at = millis(now)
        const expires = at + Duration.toMillis(Duration.decode(leaseFor))
        // Claimable: no lease, a lease run out, or (for a claimer in the process table) a lease whose
        // holder is not a live process: no row (removed as dead) or a stale heartbeat.
        const free = (s: string) =>
          holder === undefined
            ? sql`(${sql(s)}.lease_expires_at IS NULL OR ${sql(s)}.lease_expires_at <= ${at})`
            : sql`(${sql(s)}.lease_expires_at IS NULL OR ${sql(s)}.lease_expires_at <= ${at}
                OR (${sql(s)}.leased_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM processes p
                  WHERE p.id = ${sql(s)}.leased_by AND p.last_heartbeat_at >= ${millis(holder.deadBefore)})))`
        // Each claimable subscription's rank: its place among its organization's by earliest due
        // delivery (1, 2, ...) plus the claims the claimer already holds of that organization, so
        // organizations take turns and one already busy here waits behind the others.
        const heldOf = [...(held ?? new Map<string, number>())].filter(([, n]) => n > 0)
        const alreadyHeld = heldOf.length === 0
          ? sql`0`
          : sql`CASE due.organization_id ${
            sql.join(" ", false)(heldOf.map(([organizationId, n]) => sql`WHEN ${organizationId} THEN ${n}`))
          } ELSE 0 END`
        const shared = perOrganization === undefined
          ? sql.literal("")
          : sql`WHERE r.rank <= ${Math.max(0, perOrganization)}`
        const ranked = perOrganization === undefined
          ? sql`ORDER BY r.first_due, s.id`
          : sql`ORDER BY r.rank, r.first_due, s.id`
        // The outer WHERE repeats the lease test: on Postgres it is re-checked against a row another
        // claimer updated meanwhile, so two claimers never hold one subscription.
        // The pick is a materialized CTE so that it runs exactly once (see SqlDispatchStore.claimDue).
        const subRows = yield* sql`WITH due AS (
            SELECT s.id, s.organization_id, (SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d
                WHERE d.subscription_id = s.id AND d.status = 'pending') AS first_due
            FROM webhook_subscriptions s
            WHERE s.is_active = 1 AND ${free("s")}
              AND EXISTS (SELECT 1 FROM webhook_deliveries d
                WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= ${at})
          ), ranks AS (
            SELECT due.id, due.first_due, ROW_NUMBER() OVER (
                PARTITION BY due.organization_id ORDER BY due.first_due, due.id
              ) + ${alreadyHeld} AS rank
            FROM due
          ), picked AS MATERIALIZED (
            SELECT s.id FROM webhook_subscriptions s JOIN ranks r ON r.id = s.id
            ${shared}
            ${ranked}
            LIMIT ${subscriptions}
            ${skipLockedOfS}
          )
          UPDATE webhook_subscriptions SET
            lease_token = CAST(${batch} AS TEXT) || ':' || id,
            lease_expires_at = ${expires},
            leased_by = ${holder?.processId ?? null}
          WHERE id IN (SELECT id FROM picked) AND is_active = 1 AND ${free("webhook_subscriptions")}
          RETURNING *`
        if (subRows.length === 0) return []
        const claimed = yield* decodeSubscriptions(subRows)
        const leases = yield* Schema.decodeUnknown(Schema.Array(LeaseRow))(subRows)
        const subIds = claimed.map((s) => s.id)
        const deliveryRows = yield* sql`UPDATE webhook_deliveries SET
            lease_token = CAST(${batch} AS TEXT) || ':' || subscription_id
          WHERE id IN (
            SELECT ranked.id FROM (
              SELECT d.id, ROW_NUMBER() OVER (PARTITION BY d.subscription_id ORDER BY ${order("d")}) AS rn
              FROM webhook_deliveries d
              WHERE d.subscription_id IN ${sql.in(subIds)} AND d.status = 'pending' AND d.next_attempt_at <= ${at}
            ) ranked
            WHERE ranked.rn <= ${perSubscription}
          )
          ${returningSeq}`
        const deliveries = yield* Schema.decodeUnknown(Schema.Array(DeliveryRow))(deliveryRows)
        const seqs = yield* Schema.decodeUnknown(Schema.Array(SeqRow))(deliveryRows)
        const eventIds = Arr.dedupe(deliveries.map((d) => d.eventId))
        const events = eventIds.length === 0 ?
          [] :
          yield* sql`SELECT * FROM events WHERE id IN ${sql.in(eventIds)}`.pipe(
            Effect.flatMap(Schema.decodeUnknown(Schema.Array(EventRow)))
          )
        const eventById = new Map<string, Event>(events.map((e) => [e.id, e]))
        const ordered = deliveries
          .map((delivery, i) => ({ delivery, seq: seqs[i]!.seq }))
          .sort((a, b) => a.seq - b.seq)
        return claimed.map((subscription, i): SubscriptionClaim => ({
          subscription,
          leaseToken: leases[i]!.lease_token,
          leaseExpiresAt: leases[i]!.lease_expires_at,
          deliveries: ordered.flatMap(({ delivery }): Array<ClaimedDelivery> => {
            const event = eventById.get(delivery.eventId)
            return delivery.subscriptionId === subscription.id && event !== undefined
              ? [{ delivery, event, attempt: delivery.attempts + 1 }]
              : []
          })
        }))
      })).pipe(orPersistence("WebhookStore.claimDue")),

    complete: (claim, claimed, outcome, attempt) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const d = claimed.delivery
        const status = outcome._tag === "Delivered" ? "delivered" : outcome._tag === "Retry" ? "pending" : "dead"
        const next = outcome._tag === "Retry" ? millis(outcome.at) : null
        const fenced = yield* sql`UPDATE webhook_deliveries SET
            status = ${status},
            attempts = attempts + 1,
            next_attempt_at = ${next},
            lease_token = NULL,
            updated_at = ${now}
          WHERE id = ${d.id} AND status = 'pending' AND lease_token = ${claim.leaseToken}
            AND attempts = ${d.attempts}
          RETURNING id`
        if (fenced.length === 0) return { _tag: "Lost" } as CompleteResult
        const row = yield* Schema.encode(AttemptRow)(attempt)
        yield* sql`INSERT INTO webhook_attempts ${sql.insert(row)}`
        const locked = yield* sql`SELECT is_active, consecutive_failures FROM webhook_subscriptions
          WHERE id = ${d.subscriptionId} ${forUpdate}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(ActivityRow)))
        )
        const current = locked[0]
        if (current === undefined) return { _tag: "Lost" } as CompleteResult
        const before = { isActive: current.is_active, consecutiveFailures: current.consecutive_failures }
        const after = outcome._tag === "Delivered"
          ? WebhookActivity.afterDeliverySuccess(before)
          : outcome._tag === "Dead"
          ? WebhookActivity.afterDeliveryFailure(before)
          : before
        yield* sql`UPDATE webhook_subscriptions SET
            is_active = ${after.isActive ? 1 : 0},
            consecutive_failures = ${after.consecutiveFailures},
            last_delivery_at = ${millis(attempt.attemptedAt)},
            last_status = ${Option.getOrNull(attempt.statusCode)}
          WHERE id = ${d.subscriptionId}`
        if (before.isActive && !after.isActive) {
          yield* sql`UPDATE webhook_subscriptions SET updated_at = ${now} WHERE id = ${d.subscriptionId}`
          yield* endPending(d.subscriptionId, now)
        }
        return { _tag: "Recorded", isActive: after.isActive } as CompleteResult
      })).pipe(orPersistence("WebhookStore.complete")),

    release: (claim) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE webhook_deliveries SET lease_token = NULL
          WHERE subscription_id = ${claim.subscription.id} AND lease_token = ${claim.leaseToken}`
        yield* sql`UPDATE webhook_subscriptions SET lease_token = NULL, lease_expires_at = NULL, leased_by = NULL
          WHERE id = ${claim.subscription.id} AND lease_token = ${claim.leaseToken}`
      })).pipe(orPersistence("WebhookStore.release")),

    // The earliest instant a pending delivery can be claimed: when it is due, or when its
    // subscription's lease ends if that is later.
    nextDueAt: sql`SELECT MIN(CASE WHEN s.lease_expires_at IS NOT NULL AND s.lease_expires_at > d.next_attempt_at
          THEN s.lease_expires_at ELSE d.next_attempt_at END) AS next
        FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE d.status = 'pending' AND s.is_active = 1`.pipe(
      Effect.flatMap(Schema.decodeUnknown(NextRow)),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]?.next), (n) => DateTime.unsafeMake(n))),
      orPersistence("WebhookStore.nextDueAt")
    ),

    // One batch in one transaction: first what finished before the retention cutoff (the
    // `webhook_deliveries_finished` index, oldest first), then, if the batch has room, what lies beyond
    // the per-subscription cap of the subscriptions that were recently active (only they can have grown
    // past it; their deliveries are read by subscription id). The picks are top-level SELECTs with
    // their LIMIT, run once. Attempts go first (by `webhook_attempts_by_delivery`), then their
    // deliveries (still checked to be finished: a finished delivery never becomes pending again).
    pruneDeliveries: ({ activeSince, finishedBefore, keepPerSubscription, limit }) =>
      limit <= 0 ?
        Effect.succeed<PruneResult>({ deliveries: 0, attempts: 0 }) :
        sql.withTransaction(Effect.gen(function*() {
          const decodeIds = Schema.decodeUnknown(IdRows)
          const aged = yield* sql`SELECT d.id FROM webhook_deliveries d
          JOIN webhook_subscriptions s ON s.id = d.subscription_id
          WHERE d.${finished} AND d.updated_at < ${millis(finishedBefore)}
          ORDER BY d.updated_at
          LIMIT ${limit}
          ${pruneLocks}`.pipe(Effect.flatMap(decodeIds))
          const ids = aged.map((r) => r.id)
          if (ids.length < limit) {
            const notPicked = ids.length === 0 ? sql.literal("") : sql`AND d.id NOT IN ${sql.in(ids)}`
            const excess = yield* sql`SELECT d.id FROM webhook_deliveries d
            JOIN webhook_subscriptions s ON s.id = d.subscription_id
            WHERE d.id IN (
              SELECT ranked.id FROM (
                SELECT f.id, ROW_NUMBER() OVER (
                  PARTITION BY f.subscription_id ORDER BY f.updated_at DESC, f.id DESC
                ) AS rn
                FROM webhook_deliveries f
                WHERE f.subscription_id IN (SELECT a.id FROM webhook_subscriptions a
                  WHERE a.last_delivery_at >= ${millis(activeSince)})
                  AND f.${finished}
              ) ranked
              WHERE ranked.rn > ${Math.max(0, keepPerSubscription)}
            ) AND d.${finished} ${notPicked}
            LIMIT ${limit - ids.length}
            ${pruneLocks}`.pipe(Effect.flatMap(decodeIds))
            for (const r of excess) ids.push(r.id)
          }
          if (ids.length === 0) return { deliveries: 0, attempts: 0 }
          const attempts = yield* sql`DELETE FROM webhook_attempts WHERE delivery_id IN ${sql.in(ids)} RETURNING id`
          const deliveries = yield* sql`DELETE FROM webhook_deliveries
          WHERE id IN ${sql.in(ids)} AND ${finished} RETURNING id`
          return { deliveries: deliveries.length, attempts: attempts.length }
        })).pipe(orPersistence("WebhookStore.pruneDeliveries"))
  })
})

/** Needs an `IdGenerator` for lease tokens; seals secrets when a `CredentialCipher` is provided. */
export const layer: Layer.Layer<WebhookStore, never, SqlClient.SqlClient | IdGenerator> = Layer.effect(
  WebhookStore,
  make
)
