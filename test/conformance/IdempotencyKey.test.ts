/**
 * The `Idempotency-Key` header over real HTTP (a `herald serve` child process), on SQLite and on
 * Postgres where one answers: on every create endpoint a retry with the same key and body answers the
 * first success again (same status, same bytes, `Idempotent-Replayed: true`) and creates nothing;
 * another body, caller or path under the key is 422 and stores nothing; a second request while the
 * first runs is 409 (retryable); error answers (4xx, 5xx) are not kept; the key is checked (length,
 * characters); a client cut off before it read its answer gets the one stored post on retry.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import * as MediaFixtures from "../support/MediaFixtures.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Idempotency-Key conformance on Postgres skipped: ${pg.reason}`)

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field, as a client would */
type Json = {
  readonly data: Record<string, any> | null
  readonly error: { readonly code: string; readonly retryable: boolean; readonly details?: Record<string, any> } | null
  readonly meta: { readonly request_id: string }
}
/* eslint-enable @typescript-eslint/no-explicit-any */
const json = (r: HeraldServer.Response) => r.json as Json

const env = {
  HERALD_RATE_LIMIT_PER_MINUTE: "100000",
  HERALD_RATE_LIMIT_PER_HOUR: "100000",
  HERALD_MEDIA_ALLOW_PRIVATE: "true",
  HERALD_WEBHOOKS_ALLOW_PRIVATE: "true",
  HERALD_AI_BASE_URL: "",
  HERALD_AI_API_KEY: ""
}

let counter = 0
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}`

const future = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it holds (every 50 ms, at most `ms`). */
const until = async (what: string, check: () => Promise<boolean>, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/**
 * A file server on 127.0.0.1 for the URL import: serves a PNG, or holds every request until
 * `release()` while `hold` is on.
 */
const startSource = async () => {
  const png = MediaFixtures.png(8, 8)
  let hold = false
  let held: Array<Http.ServerResponse> = []
  let requests = 0
  const serve = (res: Http.ServerResponse) => res.writeHead(200, { "content-type": "image/png" }).end(png)
  const server = Http.createServer((req, res) => {
    requests++
    req.resume()
    if (hold) held.push(res)
    else serve(res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as Net.AddressInfo).port
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}.png`,
    requests: () => requests,
    holdNext: () => (hold = true),
    release: () => {
      hold = false
      for (const res of held) serve(res)
      held = []
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * Sends a request on a socket of its own and drops the connection without reading the answer once
 * `cutWhen` holds (the answer may already be on its way: the client never reads it).
 */
const sendAndCut = async (
  server: HeraldServer.HeraldServer,
  path: string,
  idempotencyKey: string,
  body: unknown,
  cutWhen: () => Promise<boolean>
) => {
  const text = JSON.stringify(body)
  const socket = Net.connect(server.port, "127.0.0.1")
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  let answered = false
  socket.on("data", () => (answered = true))
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.key}\r\n` +
      `Content-Type: application/json\r\nIdempotency-Key: ${idempotencyKey}\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  )
  await until("the moment to cut the connection", cutWhen)
  socket.destroy()
  return { answeredBeforeCut: answered }
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("Idempotency-Key on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let source: Awaited<ReturnType<typeof startSource>>
  let x: number

  beforeAll(async () => {
    if (skip) return
    source = await startSource()
    server = await HeraldServer.start({ postgres, env, args: ["--sandbox"] })
    ;[x] = (await server.withStore(insertAccounts(server.orgId, [{ platform: "x", name: "idem_x" }]))).map((a) => a.id)
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await source?.close()
  })

  const send = (method: string, path: string, body: unknown, idempotencyKey?: string, key?: string) =>
    server.request(method, path, {
      body,
      ...(key === undefined ? {} : { key }),
      ...(idempotencyKey === undefined ? {} : { headers: { "idempotency-key": idempotencyKey } })
    })

  const postsWith = async (search: string) =>
    json(await server.request("GET", `/api/v1/posts?search=${encodeURIComponent(search)}&limit=100`))
      .data!["pagination"]
      .total as number

  /** Sends the request twice with one fresh key: the second answers the first again. */
  const replayed = async (path: string, body: unknown) => {
    const key = unique("k")
    const first = await send("POST", path, body, key)
    expect(first.status, first.text).toBeGreaterThanOrEqual(200)
    expect(first.status, first.text).toBeLessThan(300)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const second = await send("POST", path, body, key)
    expect([second.status, second.text]).toEqual([first.status, first.text])
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.headers.get("content-type")).toBe("application/json")
    // The answer is the first one, byte for byte; this request has an id of its own.
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"))
    expect(json(second).meta.request_id).toBe(first.headers.get("x-request-id"))
    return { first, second, key }
  }

  it.skipIf(skip)("POST /posts: the same key and body answer the first 201 again and create nothing", async () => {
    const content = unique("replay")
    const body = { content, account_ids: [x], scheduled_for: future(60) }
    const { first, key } = await replayed("/api/v1/posts", body)
    expect(first.status).toBe(201)
    expect(await postsWith(content)).toBe(1)
    // The same body with its keys in another order and other spacing is the same request.
    const reordered = await server.request("POST", "/api/v1/posts", {
      rawBody: `{ "scheduled_for": "${body.scheduled_for}",\n "account_ids": [ ${x} ], "content": "${content}" }`,
      headers: { "idempotency-key": key }
    })
    expect([reordered.status, reordered.text]).toEqual([201, first.text])
    expect(await postsWith(content)).toBe(1)
    // Without the header, every request creates.
    expect((await send("POST", "/api/v1/posts", body)).status).toBe(201)
    expect(await postsWith(content)).toBe(2)
  })

  it.skipIf(skip)("every create endpoint answers a retry with its first answer and creates nothing more", async () => {
    // Bulk create (201), and a mixed bulk (207).
    const bulkContent = unique("bulk")
    await replayed("/api/v1/posts/bulk", {
      posts: [{ content: `${bulkContent} a`, draft: true }, { content: `${bulkContent} b`, draft: true }]
    })
    const mixed = await replayed("/api/v1/posts/bulk", {
      posts: [{ content: `${bulkContent} c`, draft: true }, { content: `${bulkContent} d`, account_ids: [999999] }]
    })
    expect(mixed.first.status).toBe(207)
    expect(await postsWith(bulkContent)).toBe(3)

    // Bulk schedule.
    const rowContent = unique("row")
    const scheduled = await replayed("/api/v1/posts/bulk-schedule", {
      timezone: "UTC",
      posts: [{ date: "2031-05-01", time: "09:00", content: rowContent, platforms: String(x) }]
    })
    expect(json(scheduled.first).data!["scheduled"]).toBe(1)
    expect(await postsWith(rowContent)).toBe(1)

    // Media: an upload started, and an import from a URL (fetched once).
    const mediaTotal = async () =>
      json(await server.request("GET", "/api/v1/media?limit=1")).data!["pagination"].total as number
    const mediaBefore = await mediaTotal()
    const presigned = await replayed("/api/v1/media/upload", {
      filename: `${unique("m")}.png`,
      content_type: "image/png",
      file_size: 100
    })
    expect(presigned.first.status).toBe(201)
    const fetchedBefore = source.requests()
    const imported = await replayed("/api/v1/media/upload-from-url", { url: source.url(unique("img")) })
    expect(imported.first.status).toBe(201)
    expect(source.requests() - fetchedBefore).toBe(1)
    expect(await mediaTotal()).toBe(mediaBefore + 2)

    // A webhook: its secret, shown once, is in the replayed answer too; one webhook exists.
    const hooksBefore =
      (json(await server.request("GET", "/api/v1/webhooks")).data!["webhooks"] as Array<unknown>).length
    const hook = await replayed("/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["post.published"] })
    expect(json(hook.second).data!["secret"]).toMatch(/^whsec_/)
    expect((json(await server.request("GET", "/api/v1/webhooks")).data!["webhooks"] as Array<unknown>).length).toBe(
      hooksBefore + 1
    )

    // A campaign.
    const campaignsBefore = json(await server.request("GET", "/api/v1/campaigns")).data!["pagination"].total as number
    await replayed("/api/v1/campaigns", { name: unique("Launch") })
    expect(json(await server.request("GET", "/api/v1/campaigns")).data!["pagination"].total).toBe(campaignsBefore + 1)

    // A generated image: charged once.
    const used = async () => json(await server.request("GET", "/api/v1/me")).data!["usage"].ai_credits.used as number
    const usedBefore = await used()
    const image = await replayed("/api/v1/ai/generate-image", { prompt: unique("a lighthouse") })
    expect(json(image.first).data!["credits_charged"]).toBe(2)
    expect(await used()).toBe(usedBefore + 2)
    expect(await mediaTotal()).toBe(mediaBefore + 3)
  })

  it.skipIf(skip)(
    "the key with another request is 422 idempotency_key_mismatch, and nothing of it is stored",
    async () => {
      const key = unique("k")
      const content = unique("first")
      expect((await send("POST", "/api/v1/posts", { content, draft: true }, key)).status).toBe(201)
      const other = unique("other")
      const expectMismatch = (res: HeraldServer.Response) => {
        expect(res.status, res.text).toBe(422)
        expect(json(res).error).toMatchObject({ code: "idempotency_key_mismatch", retryable: false })
        expect(json(res).data).toBeNull()
        expect(res.headers.get("idempotent-replayed")).toBeNull()
      }
      // Another body, another path, another caller of the organization.
      expectMismatch(await send("POST", "/api/v1/posts", { content: other, draft: true }, key))
      expectMismatch(await send("POST", "/api/v1/posts/bulk", { posts: [{ content: other, draft: true }] }, key))
      expectMismatch(
        await send("POST", "/api/v1/posts", { content, draft: true }, key, await server.createKey({ name: "second" }))
      )
      expect(await postsWith(other)).toBe(0)
      expect(await postsWith(content)).toBe(1)
      // Keys are per organization: another one uses the same key for itself.
      const elsewhere = await server.createKey({ org: await server.createOrg({ name: unique("Other org") }) })
      const theirs = await send("POST", "/api/v1/posts", { content, draft: true }, key, elsewhere)
      expect(theirs.status, theirs.text).toBe(201)
      expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    }
  )

  it.skipIf(skip)(
    "a second request while the first is running is 409 (retryable); then it gets the first answer",
    async () => {
      const key = unique("k")
      const body = { url: source.url(unique("slow")) }
      source.holdNext()
      const fetchedBefore = source.requests()
      const first = send("POST", "/api/v1/media/upload-from-url", body, key)
      await until("the import to reach the source", async () => source.requests() > fetchedBefore)
      const second = await send("POST", "/api/v1/media/upload-from-url", body, key)
      expect(second.status, second.text).toBe(409)
      expect(json(second).error).toMatchObject({ code: "idempotency_key_in_use", retryable: true })
      // Another body under the key is still a mismatch, not a wait.
      expect((await send("POST", "/api/v1/media/upload-from-url", { url: source.url("else") }, key)).status).toBe(422)
      source.release()
      const done = await first
      expect(done.status, done.text).toBe(201)
      const third = await send("POST", "/api/v1/media/upload-from-url", body, key)
      expect([third.status, third.text]).toEqual([201, done.text])
      expect(source.requests() - fetchedBefore).toBe(1)
    }
  )

  it.skipIf(skip)("an error answer is not kept: after a 4xx or a 5xx the key runs the request again", async () => {
    // 400: not remembered; the corrected request may use the same key.
    const key = unique("k")
    const content = unique("fixed")
    const bad = await send("POST", "/api/v1/posts", { content, account_ids: [999999] }, key)
    expect([bad.status, json(bad).error?.code]).toEqual([400, "invalid_accounts"])
    const badAgain = await send("POST", "/api/v1/posts", { content, account_ids: [999999] }, key)
    expect(badAgain.status).toBe(400)
    expect(badAgain.headers.get("idempotent-replayed")).toBeNull()
    const fixed = await send("POST", "/api/v1/posts", { content, account_ids: [x], scheduled_for: future(30) }, key)
    expect(fixed.status, fixed.text).toBe(201)

    // 500: the store refuses this one post (a trigger); once it accepts again, the retry creates it.
    const boom = unique("boom")
    const ddl = (statements: ReadonlyArray<string>) =>
      server.withStore(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(statements, (s) => sql.unsafe(s))))
    await ddl(
      postgres
        ? [
          `CREATE FUNCTION idem_refuse() RETURNS trigger AS $$ BEGIN IF NEW.content = '${boom}' THEN ` +
          `RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
          `CREATE TRIGGER idem_refuse BEFORE INSERT ON posts FOR EACH ROW EXECUTE FUNCTION idem_refuse()`
        ]
        : [
          `CREATE TRIGGER idem_refuse BEFORE INSERT ON posts WHEN NEW.content = '${boom}' BEGIN SELECT RAISE(ABORT, 'refused'); END`
        ]
    )
    const boomKey = unique("k")
    const failed = await send("POST", "/api/v1/posts", { content: boom, draft: true }, boomKey)
    expect(failed.status, failed.text).toBe(500)
    expect(json(failed).error?.retryable).toBe(true)
    await ddl(
      postgres ? ["DROP TRIGGER idem_refuse ON posts", "DROP FUNCTION idem_refuse()"] : ["DROP TRIGGER idem_refuse"]
    )
    const retried = await send("POST", "/api/v1/posts", { content: boom, draft: true }, boomKey)
    expect(retried.status, retried.text).toBe(201)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
    const again = await send("POST", "/api/v1/posts", { content: boom, draft: true }, boomKey)
    expect([again.status, again.text]).toEqual([201, retried.text])
    expect(await postsWith(boom)).toBe(1)
  })

  it.skipIf(skip)(
    "the key is 1 to 255 printable ASCII characters; anything else is 400 validation_error, nothing stored",
    async () => {
      const content = unique("keys")
      for (const bad of ["k".repeat(256), "", "  ", "clé"]) {
        const res = await send("POST", "/api/v1/posts", { content, draft: true }, bad)
        expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400)
        expect(json(res).error).toMatchObject({
          code: "validation_error",
          retryable: false,
          details: { validation_errors: [{ path: "Idempotency-Key" }], max_length: 255 }
        })
      }
      expect(await postsWith(content)).toBe(0)
      const longest = `${unique("k")}-`.padEnd(255, "x")
      expect((await send("POST", "/api/v1/posts", { content, draft: true }, longest)).status).toBe(201)
      expect(
        (await send("POST", "/api/v1/posts", { content, draft: true }, longest)).headers.get("idempotent-replayed")
      ).toBe("true")
      expect(await postsWith(content)).toBe(1)
    }
  )

  it.skipIf(skip)("the body's idempotency_key field stays a field of the post: it deduplicates nothing", async () => {
    const content = unique("field")
    const body = { content, draft: true, idempotency_key: "abc-123" }
    for (let i = 0; i < 2; i++) {
      const res = await send("POST", "/api/v1/posts", body)
      expect(res.status).toBe(201)
      expect(json(res).data!["idempotency_key"]).toBe("abc-123")
    }
    expect(await postsWith(content)).toBe(2)
  })

  it.skipIf(skip)(
    "a client cut off before it read the answer to POST /posts gets the one stored post on retry",
    async () => {
      const key = unique("k")
      const content = unique("cut")
      const body = { content, account_ids: [x], scheduled_for: future(90) }
      // Cut once the post is stored: the client never reads what was answered.
      await sendAndCut(server, "/api/v1/posts", key, body, async () => (await postsWith(content)) === 1)
      let retry = await send("POST", "/api/v1/posts", body, key)
      await until("the first request's answer to be recorded", async () => {
        if (retry.status !== 409) return true
        retry = await send("POST", "/api/v1/posts", body, key)
        return false
      })
      expect(retry.status, retry.text).toBe(201)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      const listed = json(await server.request("GET", `/api/v1/posts?search=${content}`)).data!["posts"] as Array<
        { id: string }
      >
      expect(listed.map((p) => p.id)).toEqual([json(retry).data!["id"]])
    }
  )

  // Postgres only: the test can hold a lock there that makes the server's writes wait without
  // blocking its event loop (a SQLite write lock held by another process blocks the writer's thread).
  if (postgres) {
    it.skipIf(skip)(
      "cut off while the store is still writing, POST /posts and /posts/bulk store once; a retry meanwhile is 409",
      async () => {
        // The test holds a lock on posts, so the server's writes wait; the clients are cut off meanwhile.
        let unlock!: () => void
        const unlocked = new Promise<void>((resolve) => (unlock = resolve))
        let locked!: () => void
        const lockHeld = new Promise<void>((resolve) => (locked = resolve))
        const holder = server.withStore(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.withTransaction(Effect.gen(function*() {
              yield* sql`LOCK TABLE posts IN EXCLUSIVE MODE`
              locked()
              yield* Effect.promise(() => unlocked)
            })))
        )
        await lockHeld
        try {
          const waitingWrites = () =>
            server.withStore(
              Effect.flatMap(SqlClient.SqlClient, (sql) =>
                sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%posts%'`)
            ).then((rows) =>
              Number(rows[0]!.n)
            )
          const single = { key: unique("k"), content: unique("locked") }
          const singleBody = { content: single.content, account_ids: [x], scheduled_for: future(120) }
          const bulk = { key: unique("k"), content: unique("locked-bulk") }
          const bulkBody = {
            posts: [{ content: `${bulk.content} 1`, draft: true }, { content: `${bulk.content} 2`, draft: true }]
          }
          await sendAndCut(server, "/api/v1/posts", single.key, singleBody, async () => (await waitingWrites()) >= 1)
          await sendAndCut(server, "/api/v1/posts/bulk", bulk.key, bulkBody, async () => (await waitingWrites()) >= 2)
          const meanwhile = await send("POST", "/api/v1/posts", singleBody, single.key)
          expect([meanwhile.status, json(meanwhile).error?.code]).toEqual([409, "idempotency_key_in_use"])
          unlock()
          await holder
          const settled = async (path: string, body: unknown, key: string) => {
            let res = await send("POST", path, body, key)
            await until(`${path} to be answered`, async () => {
              if (res.status !== 409) return true
              res = await send("POST", path, body, key)
              return false
            })
            return res
          }
          const a = await settled("/api/v1/posts", singleBody, single.key)
          expect([a.status, a.headers.get("idempotent-replayed")]).toEqual([201, "true"])
          const b = await settled("/api/v1/posts/bulk", bulkBody, bulk.key)
          expect([b.status, b.headers.get("idempotent-replayed")]).toEqual([201, "true"])
          expect(await postsWith(single.content)).toBe(1)
          expect(await postsWith(bulk.content)).toBe(2)
        } finally {
          unlock()
          await holder.catch(() => undefined)
        }
      }
    )
  }
})
