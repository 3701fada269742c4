import * as SqlClient from "@effect/sql/SqlClient"
import { PersistenceError } from "@herald/core/kernel/Errors"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** One SQL transaction around the program; nested calls become savepoints. */
export const layer: Layer.Layer<Transactor, never, SqlClient.SqlClient> = Layer.effect(
  Transactor,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Transactor.of({
      withTransaction: (self) =>
        sql.withTransaction(self).pipe(
          Effect.catchTag("SqlError", (cause) =>
            Effect.fail(new PersistenceError({ message: "transaction failed", cause })))
        )
    }))
)
