/**
 * A dispatcher process on a database given by HERALD_DATABASE_URL (Postgres) or HERALD_SQLITE_FILE,
 * with the flags of `herald worker`. The benchmarks spawn it; `herald worker` runs the same `Worker.run`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Worker from "@herald/http/Worker"

const args = Worker.parseArgs(process.argv.slice(2))
const url = process.env.HERALD_DATABASE_URL
const file = process.env.HERALD_SQLITE_FILE
if (url === undefined && file === undefined) {
  console.error("Set HERALD_DATABASE_URL or HERALD_SQLITE_FILE")
  process.exit(2)
}
NodeRuntime.runMain(
  Worker.run({
    database: url !== undefined ? { _tag: "Postgres", url } : { _tag: "Sqlite", filename: file! },
    sandbox: args.sandbox,
    worker: args.worker
  })
)
