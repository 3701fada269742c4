/**
 * Node and Postgres CPU of one dispatch round's recording statements, in isolation: a batch of
 * completions (`DispatchStore.completeAll`) and an append of as many events (`EventStore.append`, with
 * its webhook fan-out), each repeated on one connection of a fresh database:
 *
 *   node --conditions=herald-source --import tsx bench/PgRecordingCost.ts
 *   SIZE=500 CALLS=60 node --conditions=herald-source --import tsx bench/PgRecordingCost.ts
 *
 * Node CPU is this process's (`process.cpuUsage`), Postgres's that of the one backend serving it
 * (/proc/<pid>/stat, 10 ms ticks, hence many calls). The completions are fenced out (no row holds
 * their lease), so what is measured is the statement's building, sending, parsing and planning, the
 * part that grows with the batch's size; the events are really inserted. Not part of `npm run bench`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import type { Claim, Completion } from "@herald/core/publishing/DispatchStore"
import { DispatchStore } from "@herald/core/publishing/DispatchStore"
import { EventStore } from "@herald/core/webhooks/EventStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as F from "../packages/adapters/test/contract/Fixtures.js"
import { createFreshPgDatabase } from "../packages/adapters/test/support/TestDatabases.js"

const size = Number(process.env.SIZE ?? "500")
const calls = Number(process.env.CALLS ?? "60")

const nodeMs = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}

const processMs = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const measure = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const backend = Number((yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)[0]!.pid)
  const org = yield* F.givenOrganization
  const store = yield* DispatchStore
  const events = yield* EventStore
  const items = Array.from({ length: size }, (_, i): { claim: Claim; completion: Completion } => {
    const d = F.destination({ post: F.post(org.id), account: F.accountValue(org.id, 1) })
    return {
      claim: { destination: d, leaseToken: `batch:${d.id}`, leaseExpiresAt: F.at(F.T0) },
      completion: {
        _tag: "Published",
        platformPostId: `p${i}`,
        platformPostUrl: `https://x.com/p${i}`,
        publishedAt: F.at(F.T0 + i)
      }
    }
  })
  for (let round = 0; round < 3; round++) {
    const batches = Array.from(
      { length: calls },
      () =>
        items.map(({ claim }, n) =>
          F.event(org.id, { type: "post.published", data: { post_id: claim.destination.postId, n } })
        )
    )
    const [n0, p0] = [nodeMs(), processMs(backend)]
    for (let i = 0; i < calls; i++) yield* store.completeAll(items)
    const [n1, p1] = [nodeMs(), processMs(backend)]
    for (const batch of batches) yield* events.append(batch)
    const [n2, p2] = [nodeMs(), processMs(backend)]
    const per = (ms: number) => (ms / calls).toFixed(2)
    console.log(
      `round ${round + 1}: completeAll(${size}) node ${per(n1 - n0)} ms, postgres ${per(p1 - p0)} ms; ` +
        `append(${size} events) node ${per(n2 - n1)} ms, postgres ${per(p2 - p1)} ms`
    )
  }
})

const db = await Effect.runPromise(createFreshPgDatabase())
try {
  const layer = SqlStores.layer.pipe(
    Layer.provideMerge(NodeIdGenerator.layer),
    Layer.provideMerge(SqlDatabase.layer({ _tag: "Postgres", url: db.url, maxConnections: 1 }))
  )
  await Effect.runPromise(measure.pipe(Effect.provide(layer)))
} finally {
  await Effect.runPromise(db.drop)
}
