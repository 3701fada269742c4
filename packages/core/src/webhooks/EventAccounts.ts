/**
 * The accounts an event is about, which decide whether a subscription scoped to some accounts
 * receives it: only when the event is about at least one account and every one of them is in the
 * subscription's scope. That is the rule by which a key restricted to accounts sees posts (every
 * target among its accounts), so a scoped subscription receives exactly the events about what its
 * key could read. Events about no account (organization-level: media, a draft without targets) go
 * to unscoped subscriptions only.
 *
 * The accounts are read from the event's data, as every emitter writes them: `account_id`,
 * `account_ids`, and each `destinations[].account_id`. An event that names none of them is treated
 * as organization-level, so a missing field can only withhold an event, never leak one.
 */
import * as Option from "effect/Option"
import type { AccountId } from "../kernel/Ids.js"
import type { Event, EventType } from "./Event.js"
import { eventTypes } from "./Event.js"

/** Events about the organization as a whole (its media library), never about one account. */
export const organizationEvents: ReadonlyArray<EventType> = ["media.uploaded", "media.deleted"]

/** The events a subscription scoped to accounts may name. */
export const accountEvents: ReadonlyArray<EventType> = eventTypes.filter((e) => !organizationEvents.includes(e))

const isAccountId = (value: unknown): value is AccountId =>
  typeof value === "number" && Number.isInteger(value) && value > 0

/** The distinct accounts the event is about, in the order its data names them; empty when none. */
export const accountsOf = (event: Pick<Event, "type" | "data">): ReadonlyArray<AccountId> => {
  if (organizationEvents.includes(event.type)) return []
  const found = new Set<AccountId>()
  const data = event.data
  if (isAccountId(data["account_id"])) found.add(data["account_id"])
  const ids = data["account_ids"]
  if (Array.isArray(ids)) { for (const id of ids) if (isAccountId(id)) found.add(id) }
  const destinations = data["destinations"]
  if (Array.isArray(destinations)) {
    for (const d of destinations) {
      if (typeof d === "object" && d !== null && isAccountId((d as Record<string, unknown>)["account_id"])) {
        found.add((d as Record<string, unknown>)["account_id"] as AccountId)
      }
    }
  }
  return [...found]
}

/** Whether a subscription with this scope (None: every account) receives the event. */
export const reaches = (scope: Option.Option<ReadonlyArray<AccountId>>, event: Pick<Event, "type" | "data">): boolean =>
  Option.match(scope, {
    onNone: () => true,
    onSome: (allowed) => {
      const about = accountsOf(event)
      return about.length > 0 && about.every((id) => allowed.includes(id))
    }
  })
