/**
 * A browser session of a dashboard user. The cookie carries a random token; the store keeps only its
 * SHA-256. A session ends when it is idle longer than the idle timeout or older than the absolute
 * lifetime, whichever comes first; both are read against `Clock`, nothing stores "expired".
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { OrganizationId, UserId } from "../kernel/Ids.js"

export const SessionId = Schema.UUID.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  userId: UserId,
  organizationId: OrganizationId,
  tokenHash: Schema.String,
  createdAt: Schema.DateTimeUtc,
  lastSeenAt: Schema.DateTimeUtc
}) {}

export interface Settings {
  /** A session unused this long is over. */
  readonly idleSeconds: number
  /** A session this old is over, however busy. */
  readonly absoluteSeconds: number
}

/** Twelve hours idle, seven days at most. */
export const defaultSettings: Settings = { idleSeconds: 12 * 3600, absoluteSeconds: 7 * 24 * 3600 }

export class SessionSettings extends Context.Tag("@herald/core/access/SessionSettings")<SessionSettings, Settings>() {}

export type State = "active" | "idle_expired" | "expired"

/** The absolute end of the session. */
export const expiresAt = (session: Session, settings: Settings): DateTime.Utc =>
  DateTime.unsafeMake(DateTime.toEpochMillis(session.createdAt) + settings.absoluteSeconds * 1000)

/** The absolute lifetime wins over idleness when both have passed. */
export const state = (session: Session, now: DateTime.Utc, settings: Settings): State => {
  const at = DateTime.toEpochMillis(now)
  if (at >= DateTime.toEpochMillis(expiresAt(session, settings))) return "expired"
  if (at >= DateTime.toEpochMillis(session.lastSeenAt) + settings.idleSeconds * 1000) return "idle_expired"
  return "active"
}

/**
 * How stale `lastSeenAt` may get before a request writes it again: a write per request would make
 * every dashboard click a store write, and idleness is measured in hours.
 */
export const touchAfterMillis = 60_000

export const needsTouch = (session: Session, now: DateTime.Utc): boolean =>
  DateTime.toEpochMillis(now) - DateTime.toEpochMillis(session.lastSeenAt) >= touchAfterMillis
