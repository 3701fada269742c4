/**
 * `GET /metrics` on a server built in this process (the layers `herald serve` launches), on SQLite
 * and (where one answers) Postgres: a round of posts through the sandbox, one of them refused by the
 * platform and one scheduled for later, with a webhook delivering to a receiver on 127.0.0.1; then
 * the scrape, parsed from the exposition text, holds every family with the figures of that round.
 * Only with `HERALD_METRICS_TOKEN`: a server without it has no such route (404), and a scrape
 * without the token or with another one is 401.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import * as InProcessServer from "../support/InProcessServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] /metrics on Postgres: ${pg.reason}`)

const token = "metrics-token-for-the-test-0123456789"

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

interface Exposition {
  readonly types: Map<string, string>
  readonly samples: Array<Sample>
}

/** The Prometheus text format (0.0.4): `# TYPE` lines and samples, label values unescaped. */
const parseExposition = (text: string): Exposition => {
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type !== null) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (line.startsWith("#")) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (sample === null) throw new Error(`not an exposition line: ${line}`)
    const labels: Record<string, string> = {}
    for (const m of (sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1")
    }
    const raw = sample[3]!
    samples.push({
      name: sample[1]!,
      labels,
      value: raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw)
    })
  }
  return { types, samples }
}

const matching = (e: Exposition, name: string, labels: Record<string, string> = {}) =>
  e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))

const value = (e: Exposition, name: string, labels: Record<string, string> = {}): number => {
  const found = matching(e, name, labels)
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`)
  return found[0]!.value
}

const startReceiver = async () => {
  const received: Array<string> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push(Buffer.concat(chunks).toString("utf8"))
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as Net.AddressInfo).port
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return { url: `http://127.0.0.1:${port}/hook`, received, close }
}

const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const env = { HERALD_METRICS_TOKEN: token, HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" }
const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
beforeAll(() => void Object.assign(process.env, env))
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

describe("GET /metrics without HERALD_METRICS_TOKEN", () => {
  it("is not a route: 404 with or without a token", async () => {
    delete process.env.HERALD_METRICS_TOKEN
    const server = await InProcessServer.start()
    try {
      expect((await server.request("GET", "/metrics", { key: null })).status).toBe(404)
      expect((await server.request("GET", "/metrics", { key: token })).status).toBe(404)
    } finally {
      process.env.HERALD_METRICS_TOKEN = token
      await server.stop()
    }
  })
})

// Effect's metric registry is the process's: each store's round is measured against the scrape before it.
describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("GET /metrics on $label", ({ postgres, skip }) => {
  it.skipIf(skip)("after a publish round, every family is there with the round's figures", async () => {
    const server = await InProcessServer.start({ postgres })
    const receiver = await startReceiver()
    try {
      expect((await server.request("GET", "/metrics", { key: null })).status).toBe(401)
      const wrong = await server.request("GET", "/metrics", { key: "not-the-token" })
      expect(wrong.status).toBe(401)
      expect(wrong.headers.get("www-authenticate")).toContain("Bearer")
      const scrape = async () => {
        const r = await server.request("GET", "/metrics", { key: token })
        expect(r.status).toBe(200)
        expect(r.headers.get("content-type")).toContain("text/plain")
        return parseExposition(r.text)
      }
      const before = await scrape()
      const count = (e: Exposition, name: string, labels: Record<string, string>) => {
        const found = matching(e, name, labels)
        return found.length === 0 ? 0 : found.reduce((n, s) => n + s.value, 0)
      }
      const delta = (after: Exposition, name: string, labels: Record<string, string>) =>
        count(after, name, labels) - count(before, name, labels)

      const accounts = (await server.request("GET", "/api/v1/accounts")).json as {
        data: { accounts: Array<{ id: number; platform: string }> }
      }
      const x = accounts.data.accounts.find((a) => a.platform === "x")!
      const hook = await server.request("POST", "/api/v1/webhooks", {
        body: { url: receiver.url, events: ["post.published", "post.failed"] }
      })
      expect(hook.status).toBe(201)

      const contents = ["First of the round", "Second of the round", "Third of the round", "Refused [sandbox:fail]"]
      const ids: Array<string> = []
      for (const content of contents) {
        const created = await server.request("POST", "/api/v1/posts", { body: { content, account_ids: [x.id] } })
        expect(created.status).toBe(201)
        ids.push((created.json as { data: { id: string } }).data.id)
      }
      const later = new Date(Date.now() + 3_600_000).toISOString()
      const scheduled = await server.request("POST", "/api/v1/posts", {
        body: { content: "Later", account_ids: [x.id], scheduled_for: later }
      })
      expect(scheduled.status).toBe(201)
      const statusOf = async (id: string) =>
        ((await server.request("GET", `/api/v1/posts/${id}`)).json as { data: { status: string } }).data.status
      await until("the round to settle", async () => {
        const statuses = await Promise.all(ids.map(statusOf))
        return statuses.slice(0, 3).every((s) => s === "published") && statuses[3] === "failed"
      })
      await until("four webhook deliveries", () => receiver.received.length >= 4)
      // The deliverer counts an attempt once its outcome is written, just after the receiver answered.
      await until(
        "the deliveries to be counted",
        async () =>
          delta(await scrape(), "herald_webhook_deliveries_total", { outcome: "delivered", attempt: "1" }) >= 4
      )

      const after = await scrape()
      const families: Record<string, string> = {
        herald_http_requests_total: "counter",
        herald_http_request_duration_seconds: "histogram",
        herald_dispatch_lag_seconds: "gauge",
        herald_dispatch_queue_depth: "gauge",
        herald_webhook_queue_depth: "gauge",
        herald_destinations_claimed_total: "counter",
        herald_destinations_published_total: "counter",
        herald_destinations_requeued_total: "counter",
        herald_destinations_failed_total: "counter",
        herald_destinations_lost_total: "counter",
        herald_publish_duration_seconds: "histogram",
        herald_webhook_deliveries_total: "counter",
        herald_webhook_delivery_duration_seconds: "histogram",
        herald_metrics_sweep_rounds_total: "counter",
        herald_metrics_sweep_destinations_total: "counter",
        herald_token_refresh_sweeps_total: "counter",
        herald_token_refresh_accounts_total: "counter",
        herald_process_heartbeats_total: "counter",
        herald_process_last_heartbeat_timestamp_seconds: "gauge",
        herald_processes: "gauge",
        herald_store_pool_connections: "gauge",
        herald_store_pool_waiting: "gauge",
        herald_store_pool_max_connections: "gauge",
        process_cpu_user_seconds_total: "counter",
        process_resident_memory_bytes: "gauge",
        nodejs_eventloop_lag_seconds: "gauge",
        nodejs_heap_size_used_bytes: "gauge"
      }
      for (const [name, type] of Object.entries(families)) expect([name, after.types.get(name)]).toEqual([name, type])

      // Requests, by route template: the posts' ids never appear as routes.
      expect(delta(after, "herald_http_requests_total", { method: "POST", route: "/api/v1/posts", status: "201" }))
        .toBe(5)
      expect(
        delta(after, "herald_http_request_duration_seconds_count", {
          method: "POST",
          route: "/api/v1/posts",
          status: "201"
        })
      )
        .toBe(5)
      expect(count(after, "herald_http_requests_total", { method: "GET", route: "/api/v1/posts/:id", status: "200" }))
        .toBeGreaterThanOrEqual(4)
      expect(
        matching(after, "herald_http_requests_total").filter((s) => ids.some((id) => s.labels["route"]!.includes(id)))
      )
        .toEqual([])

      // The dispatch: four claimed, three published, one refused for good; each publish timed.
      expect(delta(after, "herald_destinations_claimed_total", { platform: "x" })).toBe(4)
      expect(delta(after, "herald_destinations_published_total", { platform: "x" })).toBe(3)
      expect(delta(after, "herald_destinations_failed_total", { platform: "x", error_kind: "permanent" })).toBe(1)
      expect(delta(after, "herald_publish_duration_seconds_count", { platform: "x", outcome: "success" })).toBe(3)
      expect(delta(after, "herald_publish_duration_seconds_count", { platform: "x", outcome: "failure" })).toBe(1)
      expect(value(after, "herald_publish_duration_seconds_bucket", { platform: "x", outcome: "success", le: "+Inf" }))
        .toBe(value(after, "herald_publish_duration_seconds_count", { platform: "x", outcome: "success" }))

      // Webhooks: four events delivered at their first attempt, each timed.
      expect(delta(after, "herald_webhook_deliveries_total", { outcome: "delivered", attempt: "1" })).toBe(4)
      expect(delta(after, "herald_webhook_delivery_duration_seconds_count", { outcome: "success" })).toBe(4)

      // The queues: the scheduled post waits; nothing is due or in flight.
      expect(value(after, "herald_dispatch_queue_depth", { state: "scheduled" })).toBe(1)
      expect(value(after, "herald_dispatch_queue_depth", { state: "due" })).toBe(0)
      expect(value(after, "herald_dispatch_queue_depth", { state: "publishing" })).toBe(0)
      expect(value(after, "herald_dispatch_lag_seconds")).toBe(0)
      expect(value(after, "herald_webhook_queue_depth", { state: "due" })).toBe(0)

      // The sweeps ran once at start; this process is registered and alive.
      expect(count(after, "herald_metrics_sweep_rounds_total", { result: "ok" })).toBeGreaterThanOrEqual(1)
      expect(count(after, "herald_token_refresh_sweeps_total", { result: "ok" })).toBeGreaterThanOrEqual(1)
      expect(value(after, "herald_processes", { kind: "serve", state: "live" })).toBe(1)
      expect(Math.abs(value(after, "herald_process_last_heartbeat_timestamp_seconds") - Date.now() / 1000))
        .toBeLessThan(60)

      // Store pool: Postgres only.
      if (postgres) {
        expect(value(after, "herald_store_pool_max_connections")).toBeGreaterThan(0)
        expect(value(after, "herald_store_pool_connections", { state: "idle" })).toBeGreaterThanOrEqual(0)
      } else {
        expect(matching(after, "herald_store_pool_connections")).toEqual([])
      }
      expect(value(after, "process_resident_memory_bytes")).toBeGreaterThan(0)
    } finally {
      await receiver.close()
      await server.stop()
    }
  })
})
