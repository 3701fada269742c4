/**
 * A `herald worker` killed (SIGKILL) while it holds a subscription's delivery claim (its receiver
 * hangs): another worker takes the claim over as soon as the dead one's heartbeat is stale (the process
 * table, as for dispatch), not when the claim's lease runs out (3.5 minutes), and the deliveries resume.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as Webhooks from "@herald/core/webhooks/Webhooks"
import * as WebhooksHttp from "@herald/http/groups/Webhooks"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import * as W from "../engine/WorkerProcesses.js"
import { emit, givenOrganization, randomIds } from "./WebhookFixtures.js"

const secret = "k".repeat(40)

describe("webhook deliveries after a deliverer is killed", () => {
  it("resume within 45 s of a SIGKILL, taken over through the process table", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-dead-deliverer-"))
    const file = path.join(dir, "herald.db")
    const runtime = ManagedRuntime.make(
      Layer.mergeAll(SqlStores.layer, WebhooksHttp.layerServices({ allowPrivate: true }), NodeCrypto.layer).pipe(
        Layer.provideMerge(randomIds),
        Layer.provideMerge(CredentialCipher.layer({ secret: Redacted.make(secret), dataDir: dir })),
        Layer.provideMerge(SqlDatabase.layer({ _tag: "Sqlite", filename: file })),
        Layer.orDie
      )
    )
    // Hangs every request until told to answer.
    let hang = true
    const received: Array<number> = []
    const hanging = new Set<Http.ServerResponse>()
    const server = Http.createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        received.push(Date.now())
        if (hang) hanging.add(res)
        else res.writeHead(200).end("ok")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
    const url = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}/hook`
    const workers: Array<W.WorkerProcess> = []
    const spawn = (name: string) => {
      const w = W.spawnWorker({
        database: { file },
        journal: path.join(dir, `${name}.jsonl`),
        env: { HERALD_WEBHOOKS_ALLOW_PRIVATE: "true", HERALD_SECRET: secret, HERALD_DATA_DIR: dir }
      })
      workers.push(w)
      return w
    }
    const until = async (what: string, check: () => Promise<boolean> | boolean, ms: number) => {
      const deadline = Date.now() + ms
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await W.sleep(100)
      }
    }
    const delivered = () =>
      runtime.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ n: number }>`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered'`)
      ).then((rows) =>
        Number(rows[0]!.n)
      )
    try {
      const events = 5
      await runtime.runPromise(Effect.gen(function*() {
        const org = yield* givenOrganization
        yield* Webhooks.create(org.id, { url, events: ["post.published"] })
        for (let i = 0; i < events; i++) yield* emit(org.id, "post.published", { post_id: `p${i}` })
      }))
      const victim = spawn("victim")
      // The victim holds the subscription's claim: its first request hangs at the receiver.
      await until("the first delivery to reach the receiver", () => received.length >= 1, 60_000)
      const survivor = spawn("survivor")
      await until("the second worker to start", () => survivor.output().includes("Dispatcher started"), 60_000)

      victim.child.kill("SIGKILL")
      await victim.exited
      const killedAt = Date.now()
      hang = false
      for (const res of hanging) res.destroy()

      await until("every delivery to be delivered", async () => (await delivered()) === events, 60_000)
      const resumedAfter = (Date.now() - killedAt) / 1000
      console.info(`[dead-deliverer] all ${events} deliveries delivered ${resumedAfter.toFixed(1)} s after the kill`)
      expect(resumedAfter).toBeLessThan(45)
    } finally {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL")
      await Promise.all(workers.map((w) => w.exited))
      await runtime.dispose()
      server.closeAllConnections()
      server.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
