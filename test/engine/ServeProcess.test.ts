/** `herald serve` runs a dispatcher, so it registers itself in the process table as `serve` and heartbeats. */
import { describe, expect, it } from "@effect/vitest"
import { ProcessStore } from "@herald/core/kernel/Processes"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as HeraldServer from "../support/HeraldServer.js"

describe("herald serve in the process table", () => {
  it("registers as serve with its host, and its heartbeat moves", async () => {
    const server = await HeraldServer.start()
    try {
      const list = () => server.withStore(Effect.flatMap(ProcessStore, (s) => s.list))
      let rows = await list()
      const deadline = Date.now() + 20_000
      while (rows.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100))
        rows = await list()
      }
      expect(rows.map((p) => [p.kind, p.hostname])).toEqual([["serve", os.hostname()]])
      expect(rows[0]!.id).toContain(`${os.hostname()}:${rows[0]!.pid}:`)
      const first = rows[0]!.lastHeartbeatAt
      await new Promise((r) => setTimeout(r, 6_000))
      const [later] = await list()
      expect(DateTime.greaterThan(later!.lastHeartbeatAt, first)).toBe(true)
    } finally {
      await server.stop()
    }
  }, 60_000)
})
