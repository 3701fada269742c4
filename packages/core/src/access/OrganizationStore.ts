import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PersistenceError } from "../kernel/Errors.js"
import type { OrganizationId } from "../kernel/Ids.js"
import type { Organization, User } from "./Organization.js"

export class OrganizationStore extends Context.Tag("@herald/core/access/OrganizationStore")<OrganizationStore, {
  readonly insert: (org: Organization) => Effect.Effect<void, PersistenceError>
  readonly update: (org: Organization) => Effect.Effect<void, PersistenceError>
  readonly findById: (id: OrganizationId) => Effect.Effect<Option.Option<Organization>, PersistenceError>
  readonly list: Effect.Effect<ReadonlyArray<Organization>, PersistenceError>
  readonly insertUser: (user: User) => Effect.Effect<void, PersistenceError>
  readonly listUsers: (id: OrganizationId) => Effect.Effect<ReadonlyArray<User>, PersistenceError>
}>() {}
