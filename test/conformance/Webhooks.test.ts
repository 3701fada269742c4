/**
 * `/webhooks` over real HTTP (a `herald serve` child process), on SQLite and (where one answers)
 * Postgres: shapes, the secret shown once, errors, scopes, the limit, the test delivery, the
 * deliveries log; SSRF refusals without the operator switch; and end to end through the sandbox: a
 * published post reaches a receiver as post.scheduled, post.publishing, post.published, in order,
 * each signature verified with node:crypto.
 */
import { spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import * as fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { eventTypes } from "@herald/core/webhooks/Event"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createFreshPgDatabase, probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Webhooks conformance on Postgres skipped: ${pg.reason}`)

interface Json {
  readonly data: Record<string, unknown> & {
    readonly id: string
    readonly webhooks: ReadonlyArray<Record<string, unknown>>
    readonly deliveries: ReadonlyArray<Record<string, unknown>>
  }
  readonly error: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
}

const json = (r: HeraldServer.Response) => r.json as Json

interface Received {
  readonly headers: Http.IncomingHttpHeaders
  readonly raw: Buffer
}

/** A receiver on 127.0.0.1; `status` decides every answer. */
const startReceiver = async (status: () => number, body: () => string = () => "ok") => {
  const received: Array<Received> = []
  const waiters: Array<() => void> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks) })
      waiters.splice(0).forEach((w) => w())
      res.writeHead(status(), { "Content-Type": "text/plain" }).end(body())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as Net.AddressInfo).port
  const waitFor = async (n: number, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs
    while (received.length < n) {
      if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${n} requests`)
      await new Promise<void>((resolve) => {
        waiters.push(resolve)
        setTimeout(resolve, 200)
      })
    }
  }
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { url: `http://127.0.0.1:${port}/hook`, received, waitFor, close }
}

const serviceSignatureOk = (secret: string, r: Received) => {
  const expected = "sha256=" + Crypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(r.raw).digest("hex")
  const got = Buffer.from(String(r.headers["x-service-signature"]))
  return got.length === expected.length && Crypto.timingSafeEqual(got, Buffer.from(expected))
}

const limits = { HERALD_RATE_LIMIT_PER_MINUTE: "100000", HERALD_RATE_LIMIT_PER_HOUR: "100000" }

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("webhooks on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let answer = 200

  beforeAll(async () => {
    if (skip) return
    receiver = await startReceiver(() => answer, () => (answer === 200 ? "thanks" : "é".repeat(3000)))
    server = await HeraldServer.start({ postgres, env: { ...limits, HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" } })
  }, 120_000)

  afterAll(async () => {
    if (skip) return
    await server.stop()
    await receiver.close()
  })

  it.skipIf(skip)("creates with the secret once; get and list never show it", async () => {
    const created = await server.request("POST", "/api/v1/webhooks", {
      body: { url: receiver.url, events: ["post.published", "post.failed"], name: "ops" }
    })
    expect(created.status).toBe(201)
    const data = json(created).data
    expect(data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: receiver.url,
      events: ["post.published", "post.failed"],
      name: "ops",
      account_ids: null,
      is_active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      consecutive_failures: 0,
      last_delivery_at: null,
      last_status: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{64}$/),
      secret_warning: expect.stringContaining("only")
    })
    const secret = String(data["secret"])
    const got = await server.request("GET", `/api/v1/webhooks/${data.id}`)
    expect(got.status).toBe(200)
    expect(json(got).data).toEqual(Object.fromEntries(Object.entries(data).filter(([k]) => !k.startsWith("secret"))))
    expect(got.text).not.toContain(secret.slice(6))
    const listed = await server.request("GET", "/api/v1/webhooks")
    expect(json(listed).data.webhooks.map((w) => w["id"])).toContain(data.id)
    expect(listed.text).not.toContain(secret.slice(6))
    expect(listed.text).not.toContain("secret")
    expect(server.output()).not.toContain(secret.slice(6))
  })

  it.skipIf(skip)(
    "400 invalid_event_type lists valid_events; no wildcard; validation errors; invalid JSON",
    async () => {
      const unknown = await server.request("POST", "/api/v1/webhooks", {
        body: { url: receiver.url, events: ["post.published", "*"] }
      })
      expect(unknown.status).toBe(400)
      expect(json(unknown).error.code).toBe("invalid_event_type")
      expect(json(unknown).error.details?.["valid_events"]).toEqual([...eventTypes])
      const empty = await server.request("POST", "/api/v1/webhooks", { body: { url: receiver.url, events: [] } })
      expect([empty.status, json(empty).error.code]).toEqual([400, "validation_error"])
      const noUrl = await server.request("POST", "/api/v1/webhooks", { body: { events: ["post.published"] } })
      expect([noUrl.status, json(noUrl).error.code]).toEqual([400, "validation_error"])
      const bad = await server.request("POST", "/api/v1/webhooks", { rawBody: "{\"url\": " })
      expect([bad.status, json(bad).error.code]).toEqual([400, "invalid_json"])
    }
  )

  it.skipIf(skip)("404 for unknown ids; read scope may read but not write", async () => {
    for (
      const [method, p] of [
        ["GET", "/api/v1/webhooks/00000000-0000-4000-8000-000000000000"],
        ["PATCH", "/api/v1/webhooks/00000000-0000-4000-8000-000000000000"],
        ["DELETE", "/api/v1/webhooks/not-a-uuid"],
        ["POST", "/api/v1/webhooks/not-a-uuid/test"],
        ["GET", "/api/v1/webhooks/not-a-uuid/deliveries"]
      ] as const
    ) {
      const r = await server.request(method, p, method === "PATCH" ? { body: { is_active: true } } : {})
      expect([method, p, r.status, json(r).error.code]).toEqual([method, p, 404, "not_found"])
    }
    const reader = await server.createKey({ scopes: ["read"] })
    expect((await server.request("GET", "/api/v1/webhooks", { key: reader })).status).toBe(200)
    const denied = await server.request("POST", "/api/v1/webhooks", {
      key: reader,
      body: { url: receiver.url, events: ["post.published"] }
    })
    expect([denied.status, json(denied).error.code]).toEqual([403, "insufficient_scope"])
  })

  it.skipIf(skip)("PATCH, the test delivery, the deliveries log with 2 KB kept, DELETE", async () => {
    const created = json(
      await server.request("POST", "/api/v1/webhooks", {
        body: { url: receiver.url, events: ["account.connected"] }
      })
    ).data
    const secret = String(created["secret"])
    const patched = await server.request("PATCH", `/api/v1/webhooks/${created.id}`, {
      body: { events: ["post.deleted", "account.connected"], is_active: false, name: "renamed" }
    })
    expect(patched.status).toBe(200)
    expect(json(patched).data).toMatchObject({
      events: ["post.deleted", "account.connected"],
      is_active: false,
      name: "renamed"
    })
    const before = receiver.received.length
    answer = 200
    const tested = await server.request("POST", `/api/v1/webhooks/${created.id}/test`)
    expect(tested.status).toBe(200)
    expect(json(tested).data).toEqual({
      ok: true,
      status: 200,
      duration_ms: expect.any(Number),
      message: expect.any(String)
    })
    const sent = receiver.received[before]!
    const payload = JSON.parse(sent.raw.toString("utf8")) as { event: string; data: Record<string, unknown> }
    expect(payload.event).toBe("post.deleted")
    expect(payload.data["test"]).toBe(true)
    expect(serviceSignatureOk(secret, sent)).toBe(true)
    answer = 500
    const failing = json(await server.request("POST", `/api/v1/webhooks/${created.id}/test`)).data
    expect([failing["ok"], failing["status"]]).toEqual([false, 500])

    // A real delivery, failing: the log keeps its first 2 KB.
    await server.request("PATCH", `/api/v1/webhooks/${created.id}`, { body: { is_active: true } })
    const post = await server.request("POST", "/api/v1/posts", { body: { content: "to be deleted", draft: true } })
    expect(post.status).toBe(201)
    await server.request("DELETE", `/api/v1/posts/${json(post).data.id}`)
    let log: ReadonlyArray<Record<string, unknown>> = []
    for (let i = 0; i < 100 && log.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      log = json(await server.request("GET", `/api/v1/webhooks/${created.id}/deliveries`)).data.deliveries
    }
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({ event: "post.deleted", attempt: 1, ok: false, status: 500 })
    expect(Buffer.byteLength(String(log[0]!["response_body"]), "utf8")).toBeLessThanOrEqual(2048)
    expect(String(log[0]!["response_body"])).toBe("é".repeat(1024))
    const after = json(await server.request("GET", `/api/v1/webhooks/${created.id}`)).data
    expect([after["last_status"], typeof after["last_delivery_at"]]).toEqual([500, "string"])
    answer = 200

    const deleted = await server.request("DELETE", `/api/v1/webhooks/${created.id}`)
    expect(json(deleted).data).toEqual({ id: created.id, deleted: true })
    expect((await server.request("GET", `/api/v1/webhooks/${created.id}/deliveries`)).status).toBe(404)
  }, 60_000)

  it.skipIf(skip)(
    "a key restricted to accounts manages only webhooks within them, which receive only their events",
    async () => {
      const [a, b] = await server.withStore(insertAccounts(server.orgId, [
        { platform: "x", name: "scope_a" },
        { platform: "x", name: "scope_b" }
      ]))
      const keyA = await server.createKey({ accounts: [a!.id] })
      const keyB = await server.createKey({ accounts: [b!.id] })
      const keyAB = await server.createKey({ accounts: [a!.id, b!.id] })
      const everything = await startReceiver(() => 200)
      const onlyA = await startReceiver(() => 200)
      try {
        const orgHook = json(
          await server.request("POST", "/api/v1/webhooks", {
            body: { url: everything.url, events: ["post.updated"] }
          })
        ).data
        const created = await server.request("POST", "/api/v1/webhooks", {
          key: keyA,
          body: { url: onlyA.url, events: ["post.updated"] }
        })
        expect(created.status).toBe(201)
        const hookA = json(created).data
        expect(hookA["account_ids"]).toEqual([a!.id])
        const media = await server.request("POST", "/api/v1/webhooks", {
          key: keyA,
          body: { url: onlyA.url, events: ["post.updated", "media.uploaded"] }
        })
        expect([media.status, json(media).error.code, json(media).error.details?.["invalid_events"]]).toEqual([
          400,
          "invalid_event_type",
          ["media.uploaded"]
        ])

        // Listing: each key sees what lies within its accounts; the unrestricted key sees everything.
        const listed = async (key: string) =>
          json(await server.request("GET", "/api/v1/webhooks", { key })).data.webhooks.map((w) => w["id"])
        expect(await listed(keyA)).toEqual([hookA.id])
        expect(await listed(keyB)).toEqual([])
        expect(await listed(keyAB)).toEqual([hookA.id])
        expect(await listed(server.key)).toEqual(expect.arrayContaining([orgHook.id, hookA.id]))

        // Another key's or the organization's webhook is absent for a restricted key, and stays unchanged.
        for (const [key, id] of [[keyA, orgHook.id], [keyB, hookA.id]] as const) {
          for (
            const [method, p, body] of [
              ["GET", `/api/v1/webhooks/${id}`, undefined],
              ["PATCH", `/api/v1/webhooks/${id}`, { url: "https://evil.example/h", is_active: false }],
              ["POST", `/api/v1/webhooks/${id}/test`, undefined],
              ["GET", `/api/v1/webhooks/${id}/deliveries`, undefined],
              ["DELETE", `/api/v1/webhooks/${id}`, undefined]
            ] as const
          ) {
            const r = await server.request(method, p, { key, ...(body === undefined ? {} : { body }) })
            expect([method, p, r.status, json(r).error.code]).toEqual([method, p, 404, "not_found"])
          }
        }
        const orgAfter = json(await server.request("GET", `/api/v1/webhooks/${orgHook.id}`)).data
        expect([orgAfter["url"], orgAfter["is_active"]]).toEqual([everything.url, true])
        expect(json(await server.request("GET", `/api/v1/webhooks/${hookA.id}`, { key: keyAB })).data["url"]).toBe(
          onlyA.url
        )

        // Deliveries: posts on A, on B, on both, then on A again.
        const draftOn = async (accountIds: ReadonlyArray<number>) => {
          const post = await server.request("POST", "/api/v1/posts", {
            body: { content: "scoped", draft: true, account_ids: accountIds }
          })
          expect(post.status).toBe(201)
          return json(post).data.id
        }
        const posts = [
          await draftOn([a!.id]),
          await draftOn([b!.id]),
          await draftOn([a!.id, b!.id]),
          await draftOn([a!.id])
        ]
        for (const id of posts) {
          expect((await server.request("PATCH", `/api/v1/posts/${id}`, { body: { content: `edited ${id}` } })).status)
            .toBe(200)
        }
        await everything.waitFor(4)
        await onlyA.waitFor(2)
        const postsOf = (r: Awaited<ReturnType<typeof startReceiver>>) =>
          r.received.map((x) => (JSON.parse(x.raw.toString("utf8")) as { data: { post_id: string } }).data.post_id)
        expect(postsOf(everything)).toEqual(posts)
        // Deliveries to one webhook go out in event order, so B's and both's would have come before the last.
        expect(postsOf(onlyA)).toEqual([posts[0], posts[3]])
        const log =
          json(await server.request("GET", `/api/v1/webhooks/${hookA.id}/deliveries`, { key: keyA })).data.deliveries
        expect(log).toHaveLength(2)
      } finally {
        await everything.close()
        await onlyA.close()
      }
    },
    60_000
  )

  it.skipIf(skip)("at most 25 per organization: 400 limit_reached", async () => {
    const org = await server.cli(["orgs", "create", "Hooks"])
    const orgId = /[0-9a-f-]{36}/.exec(org.stdout)?.[0]
    expect(orgId).toBeDefined()
    const key = await server.createKey({ org: orgId! })
    for (let i = 0; i < 25; i++) {
      const r = await server.request("POST", "/api/v1/webhooks", {
        key,
        body: { url: receiver.url, events: ["post.failed"] }
      })
      expect(r.status).toBe(201)
    }
    const over = await server.request("POST", "/api/v1/webhooks", {
      key,
      body: { url: receiver.url, events: ["post.failed"] }
    })
    expect([over.status, json(over).error.code, json(over).error.details]).toEqual([400, "limit_reached", {
      limit: 25
    }])
  }, 60_000)
})

describe("webhooks without the operator switch", () => {
  let server: HeraldServer.HeraldServer
  beforeAll(async () => {
    server = await HeraldServer.start({ env: limits })
  }, 120_000)
  afterAll(async () => {
    await server.stop()
  })

  it("refuses plain http and private or local addresses in any spelling, at creation", async () => {
    for (
      const url of [
        "http://hooks.example.com/h",
        "https://127.0.0.1/h",
        "https://[::ffff:127.0.0.1]/h",
        "https://2130706433/h",
        "https://0177.0.0.1/h",
        "https://10.0.0.1/h",
        "https://localhost/h"
      ]
    ) {
      const r = await server.request("POST", "/api/v1/webhooks", { body: { url, events: ["post.published"] } })
      expect([url, r.status, json(r).error.code]).toEqual([url, 400, "validation_error"])
    }
    expect(json(await server.request("GET", "/api/v1/webhooks")).data.webhooks).toEqual([])
  })
})

/** `herald serve --sandbox` (the harness starts it without), private targets allowed. */
const startSandboxServer = async (postgres: boolean) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-webhooks-"))
  const db = postgres ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const child = spawn(
    process.execPath,
    [
      HeraldServer.bin,
      "serve",
      "--port",
      "0",
      "--sandbox",
      "--data-dir",
      dataDir,
      ...(db ? ["--database-url", db.url] : [])
    ],
    {
      env: { ...process.env, ...limits, PORT: "", HERALD_DATABASE_URL: "", HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  const { key, port } = await new Promise<{ key: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      const key = /HERALD_API_KEY=(pe_live_[0-9a-f]{32})/.exec(output)?.[1]
      const port = /Herald listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]
      if (key !== undefined && port !== undefined) {
        clearTimeout(timer)
        resolve({ key, port: Number(port) })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => reject(new Error(`exited ${code}:\n${output}`)))
  })
  const request = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${port}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: r.status, json: (await r.json()) as Json }
  }
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGTERM")
      await exited
    }
    if (db !== undefined) await Effect.runPromise(db.drop)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return { request, stop, output: () => output }
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("webhooks end to end through the sandbox on $label", ({ postgres, skip }) => {
  it.skipIf(skip)(
    "a published post reaches the receiver as post.scheduled, post.publishing, post.published, in order, signed",
    async () => {
      const receiver = await startReceiver(() => 200)
      const server = await startSandboxServer(postgres)
      try {
        const accounts = (await server.request("GET", "/api/v1/accounts")).json.data["accounts"] as ReadonlyArray<
          { readonly id: number; readonly platform: string }
        >
        const bluesky = accounts.find((a) => a.platform === "bluesky")!
        const hook = await server.request("POST", "/api/v1/webhooks", {
          url: receiver.url,
          events: ["post.published", "post.publishing", "post.scheduled"]
        })
        expect(hook.status).toBe(201)
        const secret = String(hook.json.data["secret"])
        const post = await server.request("POST", "/api/v1/posts", {
          content: "Hello from the sandbox",
          account_ids: [bluesky.id]
        })
        expect(post.status).toBe(201)
        await receiver.waitFor(3)
        const payloads = receiver.received.map((r) =>
          JSON.parse(r.raw.toString("utf8")) as {
            event: string
            event_id: string
            data: Record<string, unknown>
          }
        )
        expect(payloads.map((p) => p.event)).toEqual(["post.scheduled", "post.publishing", "post.published"])
        expect(payloads.every((p) => p.data["post_id"] === post.json.data.id)).toBe(true)
        expect(payloads[2]!.data).toMatchObject({
          post_id: post.json.data.id,
          platform: "bluesky",
          account_id: bluesky.id,
          platform_post_id: expect.any(String),
          published_at: expect.any(String)
        })
        receiver.received.forEach((r, i) => {
          expect(serviceSignatureOk(secret, r)).toBe(true)
          expect(r.headers["x-service-event"]).toBe(payloads[i]!.event)
          expect(r.headers["x-service-event-id"]).toBe(payloads[i]!.event_id)
        })
        expect(server.output()).not.toContain(secret.slice(6))
      } finally {
        await server.stop()
        await receiver.close()
      }
    },
    120_000
  )
})
