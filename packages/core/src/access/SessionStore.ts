/** Browser sessions as stored, shared by every process on one database. */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { UserId } from "../kernel/Ids.js"
import type { Session, SessionId } from "./Session.js"

export class SessionStore extends Context.Tag("@herald/core/access/SessionStore")<SessionStore, {
  readonly insert: (session: Session) => Effect.Effect<void, PersistenceError>
  /** Looks a session up by the SHA-256 of its cookie token; the store never sees the token. */
  readonly findByTokenHash: (hash: string) => Effect.Effect<Option.Option<Session>, PersistenceError>
  /** Moves `lastSeenAt` forward (never back). */
  readonly touch: (id: SessionId, at: DateTime.Utc) => Effect.Effect<void, PersistenceError>
  /** False when there was no such session. */
  readonly remove: (id: SessionId) => Effect.Effect<boolean, PersistenceError>
  /** Ends every session of the user; returns how many there were. */
  readonly removeForUser: (userId: UserId) => Effect.Effect<number, PersistenceError>
  /** Forgets sessions created before `createdBefore` or last seen before `seenBefore`. */
  readonly purge: (options: {
    readonly createdBefore: DateTime.Utc
    readonly seenBefore: DateTime.Utc
  }) => Effect.Effect<void, PersistenceError>
}>() {}
