/**
 * The multi-instance walkthrough (examples/multi-instance.mjs) runs against a fresh Postgres database:
 * two servers and two workers publish every post exactly once and stop with exit code 0.
 */
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { sourceNodeOptions } from "../support/HeraldBin.js"
import { createFreshPgDatabase, probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"

const root = path.resolve(import.meta.dirname, "../..")
const pg = await probePostgres
if (!pg.available) console.warn(`[skip] multi-instance walkthrough: ${pg.reason}`)

describe("multi-instance walkthrough", () => {
  it.skipIf(!pg.available)(
    "two servers and two workers on one Postgres publish each post once and stop cleanly",
    async () => {
      const db = await Effect.runPromise(createFreshPgDatabase())
      try {
        const { stdout } = await promisify(execFile)(process.execPath, ["examples/multi-instance.mjs"], {
          cwd: root,
          // The walkthrough starts packages/http/bin/herald.mjs; its processes inherit these options and run the sources.
          env: { ...process.env, NODE_OPTIONS: sourceNodeOptions, HERALD_DATABASE_URL: db.url, POSTS: "6" },
          timeout: 150_000
        })
        expect(stdout).toMatch(/published 6 posts; .* total sends 6/)
        expect(stdout).toMatch(/stopped: serve-a=0 serve-b=0 worker-1=0 worker-2=0/)
      } finally {
        await Effect.runPromise(db.drop)
      }
    },
    180_000
  )
})
