/**
 * The approval workflow over real HTTP (a `herald serve` child process), on SQLite and (where one
 * answers) Postgres: `POST /posts/{id}/approve` and `/request-changes` on pending drafts only (400
 * `invalid_post_status` otherwise, as the spec's error table lists it), the request's `note` echoed, the required note, 404s and scopes, one approval authorizing
 * exactly one publish, the edit that resubmits, the `approval` filter of `GET /posts` on real
 * approvals, and the three approval events arriving signed at a real webhook receiver.
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { ApiKeyId } from "@herald/core/kernel/Ids"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { probePostgres } from "../../packages/adapters/test/support/TestDatabases.js"
import { insertAccounts } from "../support/AccountFixtures.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { validate } from "../support/JsonSchema.js"

const pg = await probePostgres
if (!pg.available) console.warn(`[skip] Approvals conformance on Postgres skipped: ${pg.reason}`)

type Data = Readonly<Record<string, unknown>> & {
  readonly id: string
  readonly posts: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly pagination: Readonly<Record<string, unknown>>
}
interface Json {
  readonly data: Data
  readonly error: {
    readonly code: string
    readonly message: string
    readonly details: Readonly<Record<string, unknown>> & {
      readonly validation_errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
    }
  }
}
type Doc = {
  readonly paths: Record<
    string,
    Record<string, {
      readonly responses: Record<string, { readonly content: Record<string, { readonly schema: unknown }> }>
    }>
  >
}
interface Payload {
  readonly event: string
  readonly event_id: string
  readonly data: Readonly<Record<string, unknown>>
}

const json = (r: HeraldServer.Response) => r.json as Json
const future = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

/** A receiver on 127.0.0.1 that answers 200 and keeps every request. */
const startReceiver = async () => {
  const received: Array<{ readonly headers: Http.IncomingHttpHeaders; readonly raw: Buffer }> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks) })
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as Net.AddressInfo).port
  const payloads = () => received.map((r) => JSON.parse(r.raw.toString("utf8")) as Payload)
  /** Waits until a payload matches. */
  const waitFor = async (match: (p: Payload) => boolean, timeoutMs = 30_000): Promise<Payload> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = payloads().find(match)
      if (found !== undefined) return found
      if (Date.now() > deadline) {
        throw new Error(`no matching delivery; got ${JSON.stringify(payloads().map((p) => p.event))}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { url: `http://127.0.0.1:${port}/hook`, received, payloads, waitFor, close }
}

describe.each([
  { label: "sqlite", postgres: false, skip: false },
  { label: "postgres", postgres: true, skip: !pg.available }
])("approvals on $label", ({ postgres, skip }) => {
  let server: HeraldServer.HeraldServer
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let doc: Doc
  let x: number
  /** The bootstrap key as events name it: its id and the owner who holds it. */
  let me: { readonly api_key_id: string; readonly user_id: string }
  let secret: string

  beforeAll(async () => {
    if (skip) return
    receiver = await startReceiver()
    server = await HeraldServer.start({
      postgres,
      env: {
        HERALD_RATE_LIMIT_PER_MINUTE: "100000",
        HERALD_RATE_LIMIT_PER_HOUR: "100000",
        HERALD_WEBHOOKS_ALLOW_PRIVATE: "true"
      }
    })
    doc = (await server.request("GET", "/api/v1/openapi.json", { key: null })).json as Doc
    ;[x] = (await server.withStore(insertAccounts(server.orgId, [{ platform: "x", name: "approvals_x" }]))).map((a) =>
      a.id
    )
    const keyId = String((json(await server.request("GET", "/api/v1/me")).data["key"] as { id: string }).id)
    const owner = await server.withStore(Effect.map(
      Effect.flatMap(ApiKeyStore, (keys) => keys.findById(ApiKeyId.make(keyId))),
      (key) => Option.getOrThrow(Option.flatMap(key, (k) => k.createdBy))
    ))
    me = { api_key_id: keyId, user_id: owner }
    const hook = await server.request("POST", "/api/v1/webhooks", {
      body: { url: receiver.url, events: ["post.approval_requested", "post.approved", "post.changes_requested"] }
    })
    if (hook.status !== 201) throw new Error(`webhook: ${hook.text}`)
    secret = String(json(hook).data["secret"])
  }, 120_000)
  afterAll(async () => {
    if (skip) return
    await server.stop()
    await receiver.close()
  })

  const conforms = (path: string, method: string, res: HeraldServer.Response) => {
    const response = doc.paths[path]?.[method]?.responses[String(res.status)]
    expect(response, `${method} ${path} documents ${res.status}`).toBeDefined()
    expect(validate(doc, response!.content["application/json"]!.schema, res.json)).toEqual([])
  }
  const pending = async (content = `needs review ${Math.random()}`, key?: string): Promise<string> => {
    const res = await server.request("POST", "/api/v1/posts", {
      body: { content, draft: true, request_approval: true, account_ids: [x] },
      ...(key === undefined ? {} : { key })
    })
    expect(res.status, res.text).toBe(201)
    expect(json(res).data["approval_status"]).toBe("pending")
    return json(res).data.id
  }
  const approve = (id: string, body?: unknown, key?: string) =>
    server.request("POST", `/api/v1/posts/${id}/approve`, {
      ...(body === undefined ? {} : { body }),
      ...(key === undefined ? {} : { key })
    })
  const requestChanges = (id: string, body?: unknown, key?: string) =>
    server.request("POST", `/api/v1/posts/${id}/request-changes`, {
      ...(body === undefined ? {} : { body }),
      ...(key === undefined ? {} : { key })
    })
  const signed = (raw: Buffer, signature: unknown) => {
    const expected = "sha256=" + Crypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest("hex")
    return String(signature) === expected
  }

  it.skipIf(skip)(
    "approve: 200 with the post as GET shows it, approved; a note is optional; event post.approved",
    async () => {
      const id = await pending()
      const res = await approve(id, { note: "Looks good" })
      expect(res.status, res.text).toBe(200)
      conforms("/api/v1/posts/{id}/approve", "post", res)
      expect(json(res).data).toMatchObject({
        id,
        status: "draft",
        draft: true,
        approval_status: "approved",
        approval_note: "Looks good",
        request_approval: true
      })
      const got = json(await server.request("GET", `/api/v1/posts/${id}`)).data
      // The round trip: the request's `note` comes back under its own name, beside the post as GET shows it.
      const { note, ...post } = json(res).data
      expect(note).toBe("Looks good")
      expect(post).toEqual(got)

      const bare = await pending()
      const noBody = await approve(bare)
      expect([
        noBody.status,
        json(noBody).data["approval_status"],
        json(noBody).data["approval_note"],
        json(noBody).data["note"]
      ])
        .toEqual([200, "approved", null, null])

      const requested = await receiver.waitFor((p) => p.event === "post.approval_requested" && p.data["post_id"] === id)
      expect(requested.data).toEqual({ post_id: id, account_ids: [x], requested_by: me })
      const event = await receiver.waitFor((p) => p.event === "post.approved" && p.data["post_id"] === id)
      expect(event.data).toEqual({ post_id: id, account_ids: [x], reviewed_by: me, note: "Looks good" })
      const noNote = await receiver.waitFor((p) => p.event === "post.approved" && p.data["post_id"] === bare)
      expect(noNote.data["note"]).toBeNull()
      const delivery = receiver.received.find((r) =>
        (JSON.parse(r.raw.toString("utf8")) as Payload).event_id === event.event_id
      )!
      expect(signed(delivery.raw, delivery.headers["x-service-signature"])).toBe(true)
      expect(delivery.headers["x-service-event"]).toBe("post.approved")
    },
    60_000
  )

  it.skipIf(skip)(
    "request-changes: note required (400 validation_error), then changes_requested with event; an edit resubmits",
    async () => {
      const id = await pending()
      for (
        const body of [undefined, {}, { note: null }, { note: "" }, { note: "   " }, { note: 42 }, {
          note: "n".repeat(2001)
        }]
      ) {
        const res = await requestChanges(id, body)
        expect([JSON.stringify(body), res.status, json(res).error.code]).toEqual([
          JSON.stringify(body),
          400,
          "validation_error"
        ])
        expect(json(res).error.details.validation_errors?.map((e) => e.path)).toContain("note")
        conforms("/api/v1/posts/{id}/request-changes", "post", res)
      }
      const bad = await server.request("POST", `/api/v1/posts/${id}/request-changes`, { rawBody: "{\"note\": " })
      expect([bad.status, json(bad).error.code]).toEqual([400, "invalid_json"])
      expect(json(await server.request("GET", `/api/v1/posts/${id}`)).data["approval_status"]).toBe("pending")

      const res = await requestChanges(id, { note: "Shorter, please" })
      expect(res.status, res.text).toBe(200)
      conforms("/api/v1/posts/{id}/request-changes", "post", res)
      expect(json(res).data).toMatchObject({
        id,
        status: "draft",
        approval_status: "changes_requested",
        approval_note: "Shorter, please",
        note: "Shorter, please"
      })
      const event = await receiver.waitFor((p) => p.event === "post.changes_requested" && p.data["post_id"] === id)
      expect(event.data).toEqual({ post_id: id, account_ids: [x], reviewed_by: me, note: "Shorter, please" })

      // Neither review applies to changes_requested; it cannot be scheduled either.
      for (const res of [await approve(id), await requestChanges(id, { note: "again" })]) {
        expect([res.status, json(res).error.code]).toEqual([400, "invalid_post_status"])
        expect(json(res).error.details).toMatchObject({ status: "draft", approval_status: "changes_requested" })
      }
      const scheduled = await server.request("POST", `/api/v1/posts/${id}/schedule`, {
        body: { scheduled_for: future(120) }
      })
      expect([scheduled.status, json(scheduled).error.code]).toEqual([409, "invalid_post_status"])

      // The edit resubmits: pending again, with post.approval_requested (resubmitted), and reviewable again.
      const edited = await server.request("PATCH", `/api/v1/posts/${id}`, { body: { content: "short" } })
      expect([edited.status, json(edited).data["approval_status"], json(edited).data["approval_note"]])
        .toEqual([200, "pending", null])
      const again = await receiver.waitFor((p) =>
        p.event === "post.approval_requested" && p.data["post_id"] === id && p.data["resubmitted"] === true
      )
      expect(again.data["requested_by"]).toEqual(me)
      expect(json(await approve(id)).data["approval_status"]).toBe("approved")
    },
    60_000
  )

  it.skipIf(skip)("400 invalid_post_status on anything but a pending draft; nothing changes", async () => {
    const approved = await pending()
    expect((await approve(approved)).status).toBe(200)
    const plain =
      json(await server.request("POST", "/api/v1/posts", { body: { content: "no review", draft: true } })).data.id
    const live = json(
      await server.request("POST", "/api/v1/posts", {
        body: { content: "scheduled already", account_ids: [x], scheduled_for: future(240) }
      })
    ).data.id
    for (
      const [id, status, approvalStatus] of [
        [approved, "draft", "approved"],
        [plain, "draft", null],
        [live, "scheduled", null]
      ] as const
    ) {
      for (const res of [await approve(id, { note: "ok" }), await requestChanges(id, { note: "no" })]) {
        expect([id, res.status, json(res).error.code]).toEqual([id, 400, "invalid_post_status"])
        expect(json(res).error.details).toEqual({ status, approval_status: approvalStatus })
        conforms("/api/v1/posts/{id}/approve", "post", res)
      }
      const after = json(await server.request("GET", `/api/v1/posts/${id}`)).data
      expect([after["status"], after["approval_status"]]).toEqual([status, approvalStatus])
    }
  })

  it.skipIf(skip)(
    "one approval authorizes exactly one publish; an edit of an approved draft needs a new approval",
    async () => {
      const id = await pending()
      const early = await server.request("POST", `/api/v1/posts/${id}/schedule`, {
        body: { scheduled_for: future(120) }
      })
      expect([early.status, json(early).error.code, json(early).error.details["approval_status"]])
        .toEqual([409, "invalid_post_status", "pending"])
      expect((await approve(id)).status).toBe(200)

      // Edited after approval: back to pending, and the old approval no longer schedules it.
      const edited = await server.request("PATCH", `/api/v1/posts/${id}`, {
        body: { content: "changed after approval" }
      })
      expect(json(edited).data["approval_status"]).toBe("pending")
      const refused = await server.request("POST", `/api/v1/posts/${id}/schedule`, {
        body: { scheduled_for: future(120) }
      })
      expect([refused.status, json(refused).error.code]).toEqual([409, "invalid_post_status"])

      expect((await approve(id, { note: "final" })).status).toBe(200)
      const at = future(120)
      const scheduled = await server.request("POST", `/api/v1/posts/${id}/schedule`, { body: { scheduled_for: at } })
      expect(scheduled.status, scheduled.text).toBe(200)
      expect(json(scheduled).data).toMatchObject({
        status: "scheduled",
        draft: false,
        approval_status: "approved",
        scheduled_for: at
      })
      // Spent: the post is no longer a draft, so neither a second schedule nor a second review applies.
      const second = await server.request("POST", `/api/v1/posts/${id}/schedule`, {
        body: { scheduled_for: future(180) }
      })
      expect([second.status, json(second).error.code]).toEqual([409, "invalid_post_status"])
      const reapprove = await approve(id)
      expect([reapprove.status, json(reapprove).error.details["status"]]).toEqual([400, "scheduled"])
      // A scheduled post edited after its approval was spent stays approved (the spent approval is kept).
      const moved = await server.request("PATCH", `/api/v1/posts/${id}`, { body: { scheduled_for: future(200) } })
      expect([moved.status, json(moved).data["approval_status"]]).toEqual([200, "approved"])
    }
  )

  it.skipIf(skip)("404 for unknown, malformed and other organizations' posts; read scope is 403", async () => {
    const id = await pending()
    const org = await server.cli(["orgs", "create", "Reviewers elsewhere"])
    const other = await server.createKey({ org: /[0-9a-f-]{36}/.exec(org.stdout)![0] })
    for (
      const [target, key] of [
        ["00000000-0000-4000-8000-000000000000", undefined],
        ["not-a-uuid", undefined],
        [id, other]
      ] as const
    ) {
      for (const res of [await approve(target, { note: "x" }, key), await requestChanges(target, { note: "x" }, key)]) {
        expect([target, res.status, json(res).error.code]).toEqual([target, 404, "not_found"])
        conforms("/api/v1/posts/{id}/approve", "post", res)
      }
    }
    // A missing note on someone else's post is still 404: the post is looked up first.
    const hidden = await requestChanges(id, {}, other)
    expect([hidden.status, json(hidden).error.code]).toEqual([404, "not_found"])
    const reader = await server.createKey({ scopes: ["read"] })
    for (const res of [await approve(id, undefined, reader), await requestChanges(id, { note: "x" }, reader)]) {
      expect([res.status, json(res).error.code]).toEqual([403, "insufficient_scope"])
    }
    expect(json(await server.request("GET", `/api/v1/posts/${id}`)).data["approval_status"]).toBe("pending")
  })

  it.skipIf(skip)("concurrent reviews of one draft: exactly one wins, the others are 400, one event", async () => {
    const id = await pending()
    const answers = await Promise.all([
      approve(id, { note: "a" }),
      requestChanges(id, { note: "b" }),
      approve(id, { note: "c" }),
      requestChanges(id, { note: "d" })
    ])
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 400, 400, 400])
    const winner = json(answers.find((r) => r.status === 200)!).data
    const final = json(await server.request("GET", `/api/v1/posts/${id}`)).data
    expect([final["approval_status"], final["approval_note"]]).toEqual([
      winner["approval_status"],
      winner["approval_note"]
    ])
    const type = winner["approval_status"] === "approved" ? "post.approved" : "post.changes_requested"
    await receiver.waitFor((p) => p.event === type && p.data["post_id"] === id)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const reviews = receiver.payloads().filter((p) =>
      (p.event === "post.approved" || p.event === "post.changes_requested") && p.data["post_id"] === id
    )
    expect(reviews.map((p) => p.data["note"])).toEqual([winner["approval_note"]])
  })

  it.skipIf(skip)("GET /posts?approval= filters on real approval states", async () => {
    const org = await server.cli(["orgs", "create", "Filtering"])
    const key = await server.createKey({ org: /[0-9a-f-]{36}/.exec(org.stdout)![0] })
    const make = async (body: Record<string, unknown>) =>
      json(await server.request("POST", "/api/v1/posts", { key, body: { content: `f ${Math.random()}`, ...body } }))
        .data.id
    const stillPending = await make({ draft: true, request_approval: true })
    const approvedOne = await make({ draft: true, request_approval: true })
    const sentBack = await make({ draft: true, request_approval: true })
    const unreviewed = await make({ draft: true })
    expect((await approve(approvedOne, undefined, key)).status).toBe(200)
    expect((await requestChanges(sentBack, { note: "fix" }, key)).status).toBe(200)
    const ids = async (query: string) => {
      const res = await server.request("GET", `/api/v1/posts${query}`, { key })
      expect(res.status).toBe(200)
      return json(res).data.posts.map((p) => p["id"]).sort()
    }
    expect(await ids("?approval=pending")).toEqual([stillPending])
    expect(await ids("?approval=approved")).toEqual([approvedOne])
    expect(await ids("?approval=changes_requested")).toEqual([sentBack])
    expect(await ids("?approval=pending,changes_requested")).toEqual([stillPending, sentBack].sort())
    expect(await ids("?approval=APPROVED&status=draft")).toEqual([approvedOne])
    expect(await ids("")).toEqual([stillPending, approvedOne, sentBack, unreviewed].sort())
    const listed = json(await server.request("GET", "/api/v1/posts?approval=approved", { key })).data
    expect(listed.pagination["total"]).toBe(1)
    expect(listed.posts[0]).toMatchObject({ approval_status: "approved", request_approval: true })
  })
})
