import * as SqlClient from "@effect/sql/SqlClient"
import type { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import type { OrganizationId } from "@herald/core/kernel/Ids"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ReadCache from "./internal/ReadCache.js"
import { withVersion } from "./internal/ReadCache.js"
import { OrganizationRow, orPersistence, UserRow } from "./internal/Rows.js"

export const make = Effect.gen(function*() {
  const client = yield* SqlClient.SqlClient
  const sql = client.withoutTransforms()
  const decodeOrganizations = Schema.decodeUnknown(Schema.Array(OrganizationRow))
  const decodeUsers = Schema.decodeUnknown(Schema.Array(UserRow))
  // Every authenticated request reads its organization: served from memory for up to 250 ms, and
  // emptied by this store's own writes (see ReadCache.ts).
  const byId = ReadCache.make<OrganizationId, Option.Option<Organization>>({
    keep: Option.isSome,
    ...withVersion(client)
  })

  return OrganizationStore.of({
    insert: (org) =>
      Schema.encode(OrganizationRow)(org).pipe(
        Effect.flatMap((row) => sql`INSERT INTO organizations ${sql.insert(row)}`),
        Effect.zipRight(byId.invalidate),
        orPersistence("OrganizationStore.insert")
      ),
    update: (org) =>
      Schema.encode(OrganizationRow)(org).pipe(
        Effect.flatMap((row) => sql`UPDATE organizations SET ${sql.update(row, ["id"])} WHERE id = ${org.id}`),
        Effect.ensuring(byId.invalidate),
        Effect.asVoid,
        orPersistence("OrganizationStore.update")
      ),
    findById: (id) =>
      byId.get(
        id,
        () =>
          sql`SELECT * FROM organizations WHERE id = ${id}`.pipe(
            Effect.flatMap(decodeOrganizations),
            Effect.map(Arr.head),
            orPersistence("OrganizationStore.findById")
          )
      ),
    list: sql`SELECT * FROM organizations ORDER BY created_at, id`.pipe(
      Effect.flatMap(decodeOrganizations),
      orPersistence("OrganizationStore.list")
    ),
    insertUser: (user) =>
      Schema.encode(UserRow)(user).pipe(
        Effect.flatMap((row) => sql`INSERT INTO users ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("OrganizationStore.insertUser")
      ),
    listUsers: (id) =>
      sql`SELECT * FROM users WHERE organization_id = ${id} ORDER BY created_at, id`.pipe(
        Effect.flatMap(decodeUsers),
        orPersistence("OrganizationStore.listUsers")
      )
  })
})

export const layer: Layer.Layer<OrganizationStore, never, SqlClient.SqlClient> = Layer.effect(OrganizationStore, make)
