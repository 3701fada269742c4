/**
 * Serving Herald from your own program: the layers `herald serve` is made of. Run it with
 * `npx tsx examples/serve.ts`; it keeps its SQLite file in ./.herald-example.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as Admin from "@herald/http/Admin"
import * as RateLimit from "@herald/http/RateLimit"
import * as Server from "@herald/http/Server"
import * as Worker from "@herald/http/Worker"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

const port = Number(process.env.PORT ?? "8080")

const program = Effect.gen(function*() {
  // On an empty store: a default organization on a trial, and its first key (shown once).
  const boot = yield* Admin.bootstrap
  if (Option.isSome(boot)) yield* Console.log(`First API key: ${boot.value.token}`)
  return yield* Layer.launch(
    Server.listen({
      port,
      host: "127.0.0.1",
      onListening: (real) => Console.log(`Herald listening on http://127.0.0.1:${real}`)
    }).pipe(
      // The dispatcher in this process, publishing through the sandbox platforms.
      Layer.provide(Worker.layerEngine({ sandbox: true }))
    )
  )
}).pipe(
  Effect.provide(Server.services({
    database: SqlDatabase.configFrom({ dataDir: ".herald-example" }),
    rateLimits: RateLimit.defaults
  }))
)

NodeRuntime.runMain(program)
