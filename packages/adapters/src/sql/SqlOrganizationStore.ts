import * as SqlClient from "@effect/sql/SqlClient"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { OrganizationRow, orPersistence, UserRow } from "./internal/Rows.js"

export const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const decodeOrganizations = Schema.decodeUnknown(Schema.Array(OrganizationRow))
  const decodeUsers = Schema.decodeUnknown(Schema.Array(UserRow))

  return OrganizationStore.of({
    insert: (org) =>
      Schema.encode(OrganizationRow)(org).pipe(
        Effect.flatMap((row) => sql`INSERT INTO organizations ${sql.insert(row)}`),
        Effect.asVoid,
        orPersistence("OrganizationStore.insert")
      ),
    update: (org) =>
      Schema.encode(OrganizationRow)(org).pipe(
        Effect.flatMap((row) => sql`UPDATE organizations SET ${sql.update(row, ["id"])} WHERE id = ${org.id}`),
        Effect.asVoid,
        orPersistence("OrganizationStore.update")
      ),
    findById: (id) =>
      sql`SELECT * FROM organizations WHERE id = ${id}`.pipe(
        Effect.flatMap(decodeOrganizations),
        Effect.map(Arr.head),
        orPersistence("OrganizationStore.findById")
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
