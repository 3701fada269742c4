/**
 * `herald serve` on SIGTERM: it stops claiming, lets the publish in flight finish,
 * and exits 0; when stopping takes longer than HERALD_SHUTDOWN_TIMEOUT_SECONDS it exits 1 anyway and
 * the claim is left to its lease.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as HeraldServer from "../support/HeraldServer.js"

const work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-shutdown-"))
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

interface PostData {
  readonly data: { readonly id: string; readonly status: string }
}

const publishingPost = async (server: HeraldServer.HeraldServer): Promise<string> => {
  const created = await server.request("POST", "/api/v1/posts", { body: { content: "In flight", account_ids: [1] } })
  expect(created.status).toBe(201)
  const id = (created.json as PostData).data.id
  const until = Date.now() + 20_000
  while (Date.now() < until) {
    const got = await server.request("GET", `/api/v1/posts/${id}`)
    if ((got.json as PostData).data.status === "publishing") return id
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error("the post never started publishing")
}

describe("herald serve on SIGTERM", () => {
  it("finishes the publish in flight and exits 0", async () => {
    const journal = path.join(work, "sends.jsonl")
    const server = await HeraldServer.start({
      args: ["--sandbox"],
      env: { HERALD_SANDBOX_LATENCY_MS: "1500", HERALD_SANDBOX_JOURNAL: journal }
    })
    await publishingPost(server)
    expect(fs.existsSync(journal)).toBe(false)
    const started = Date.now()
    const code = await server.stop()
    expect(code).toBe(0)
    expect(Date.now() - started).toBeLessThan(15_000)
    // The sandbox notes a send once its latency has passed: the send in flight completed before exit.
    const sends = fs.readFileSync(journal, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { outcome: string })
    expect(sends.map((s) => s.outcome)).toEqual(["published"])
  }, 120_000)

  it("exits 1 after HERALD_SHUTDOWN_TIMEOUT_SECONDS when a publish does not finish", async () => {
    const server = await HeraldServer.start({
      args: ["--sandbox"],
      env: { HERALD_SANDBOX_LATENCY_MS: "60000", HERALD_SHUTDOWN_TIMEOUT_SECONDS: "1" }
    })
    await publishingPost(server)
    const started = Date.now()
    const code = await server.stop()
    expect(code).toBe(1)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(server.output()).toContain("still stopping after 1 s")
  }, 120_000)
})
