/**
 * In-process events: an organization's outbox (the `events` table every state change appends to in its
 * own transaction) read from a cursor the subscriber keeps, in the webhook payload shape, without
 * webhook subscriptions.
 *
 * Guarantees: at least once while the subscriber runs (an event is delivered again only if the handler
 * fails, or after a restart from an older cursor), in append order, so ordered per post. A transaction
 * that commits late with an earlier `created_at` is still seen: each poll re-reads a look-back window
 * (default 10 s) and skips the ids it already delivered.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventRow } from "@herald/adapters/sql/internal/Rows"
import type { Event } from "@herald/core/webhooks/Event"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import * as WebhookSignature from "@herald/core/webhooks/WebhookSignature"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** A delivered event exactly as a webhook delivery's body carries it. */
export interface EventPayload {
  readonly event: string
  readonly event_id: string
  readonly created_at: string
  readonly organization_id: string
  readonly data: Readonly<Record<string, unknown>>
}

/** Where a subscriber is: events at or after `after` (epoch ms) except the ids in `seen`. */
export interface Cursor {
  readonly after: number
  readonly seen: ReadonlyArray<readonly [id: string, createdAt: number]>
}

/** From the first event of the organization. */
export const beginning: Cursor = { after: 0, seen: [] }

export interface PollOptions {
  /** Only these event types (the cursor still moves past the others). */
  readonly types?: ReadonlyArray<string>
  /** Most events read per poll (default 100). */
  readonly limit?: number
  /** How far back each poll looks for late commits, in milliseconds (default 10000). */
  readonly lookbackMillis?: number
}

const defaultLookback = 10_000

export const toPayload = (event: Event): EventPayload =>
  JSON.parse(WebhookSignature.buildPayload(event)) as EventPayload

const read = (organizationId: OrganizationId, from: number, limit: number) =>
  Effect.gen(function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const appendOrder = sql.onDialectOrElse({ pg: () => sql.literal("seq"), orElse: () => sql.literal("rowid") })
    const rows = yield* sql`SELECT * FROM events WHERE organization_id = ${organizationId} AND created_at >= ${from}
      ORDER BY created_at, ${appendOrder} LIMIT ${limit}`
    return yield* Schema.decodeUnknown(Schema.Array(EventRow))(rows)
  }).pipe(Effect.orDie)

/** The next events after the cursor, and the cursor past them. */
export const poll = (organizationId: OrganizationId, cursor: Cursor, options: PollOptions = {}) =>
  Effect.gen(function*() {
    const lookback = options.lookbackMillis ?? defaultLookback
    const limit = options.limit ?? 100
    const from = Math.max(0, cursor.after - lookback)
    const seen = new Map(cursor.seen.filter(([, t]) => t >= from))
    const rows = yield* read(organizationId, from, limit + seen.size)
    const fresh = rows.filter((e) => !seen.has(e.id)).slice(0, limit)
    let after = cursor.after
    for (const e of fresh) {
      const t = e.createdAt.epochMillis
      seen.set(e.id, t)
      if (t > after) after = t
    }
    const keepFrom = after - lookback
    const types = options.types
    const next: Cursor = { after, seen: [...seen].filter(([, t]) => t >= keepFrom) }
    return {
      events: fresh.filter((e) => types === undefined || types.includes(e.type)).map(toPayload),
      cursor: next
    }
  })

/** A cursor at now: polling from it hears only events appended from now on. */
export const latest = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const recent = yield* read(organizationId, now - defaultLookback, 100_000)
    const cursor: Cursor = { after: now, seen: recent.map((e) => [e.id, e.createdAt.epochMillis] as const) }
    return cursor
  })
