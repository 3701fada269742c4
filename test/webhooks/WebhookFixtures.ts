/**
 * For the webhook tests: a programmable receiver on 127.0.0.1 (records every request with its raw
 * body), signature checks written directly against node:crypto (independent of Herald's signing
 * code), and the engine's stores over a fresh database with the webhook services (private targets
 * allowed, as the operator switch does).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as AddressGuard from "@herald/adapters/net/AddressGuard"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import type { EventType } from "@herald/core/webhooks/Event"
import { Event } from "@herald/core/webhooks/Event"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { EventId, OrganizationId } from "@herald/core/kernel/Ids"
import { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as WebhooksHttp from "@herald/http/groups/Webhooks"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"

export interface Received {
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly raw: Buffer
  readonly json: {
    readonly event: string
    readonly event_id: string
    readonly created_at: string
    readonly organization_id: string
    readonly data: Record<string, unknown>
  }
}

export type Answer = { readonly status: number; readonly body?: string } | "hang"

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** What the next requests get; 200 "ok" until changed. */
  answer: (request: Received) => Answer
  /** Resolves once `n` requests have arrived. */
  readonly waitFor: (n: number) => Promise<void>
}

/** A receiver for the life of the scope. */
export const receiver = Effect.acquireRelease(
  Effect.async<{ readonly server: Http.Server; readonly receiver: Receiver }>((resume) => {
    const waiters: Array<{ readonly n: number; readonly done: () => void }> = []
    const state: Receiver = {
      url: "",
      received: [],
      answer: () => ({ status: 200, body: "ok" }),
      waitFor: (n) =>
        new Promise((resolve) => {
          if (state.received.length >= n) resolve()
          else waiters.push({ n, done: resolve })
        })
    }
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const raw = Buffer.concat(chunks)
        const request: Received = {
          path: req.url ?? "/",
          headers: req.headers,
          raw,
          json: JSON.parse(raw.toString("utf8")) as Received["json"]
        }
        state.received.push(request)
        for (const w of waiters.filter((w) => state.received.length >= w.n)) w.done()
        const answer = state.answer(request)
        if (answer === "hang") return
        res.writeHead(answer.status, { "Content-Type": "text/plain" }).end(answer.body ?? "")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      resume(Effect.succeed({ server, receiver: Object.assign(state, { url: `http://127.0.0.1:${port}/hook` }) }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ receiver }) => receiver))

const safeEqual = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && Crypto.timingSafeEqual(x, y)
}

/** `X-Service-Signature` as the spec defines it, computed here with node:crypto. */
export const verifyServiceSignature = (secret: string, request: Received): boolean => {
  const expected = "sha256=" +
    Crypto.createHmac("sha256", Buffer.from(secret, "utf8")).update(request.raw).digest("hex")
  return safeEqual(expected, String(request.headers["x-service-signature"] ?? ""))
}

/** `webhook-signature` as Standard Webhooks defines it, computed here with node:crypto. */
export const verifyStandardSignature = (secret: string, request: Received): boolean => {
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const signed = `${request.headers["webhook-id"]}.${request.headers["webhook-timestamp"]}.${
    request.raw.toString("utf8")
  }`
  const expected = Crypto.createHmac("sha256", key).update(signed).digest("base64")
  return String(request.headers["webhook-signature"] ?? "").split(" ").some((entry) =>
    entry.startsWith("v1,") && safeEqual(expected, entry.slice(3))
  )
}

export const randomIds = Layer.succeed(IdGenerator, IdGenerator.of({ uuid: Effect.sync(() => Crypto.randomUUID()) }))

/**
 * Stores over a fresh database, Node crypto and ids, the transport and URL guard; private targets
 * allowed unless told otherwise.
 */
export const engine = (
  database: TestDatabases.TestDatabaseLayer = TestDatabases.sqlite,
  guard: { readonly allowPrivate: boolean; readonly resolve?: AddressGuard.Resolver } = { allowPrivate: true }
) =>
  Layer.mergeAll(
    SqlStores.layer,
    WebhooksHttp.layerServices(guard),
    NodeCrypto.layer
  ).pipe(Layer.provideMerge(randomIds), Layer.provideMerge(database), Layer.orDie)

/** `engine`, with secrets sealed at rest by a credentials cipher. */
export const engineSealed = (guard: { readonly allowPrivate: boolean; readonly resolve?: AddressGuard.Resolver }) =>
  Layer.mergeAll(SqlStores.layer, WebhooksHttp.layerServices(guard), NodeCrypto.layer).pipe(
    Layer.provideMerge(randomIds),
    Layer.provideMerge(CredentialCipher.layer({ secret: Redacted.make("k".repeat(40)), dataDir: "/nonexistent" })),
    Layer.provideMerge(TestDatabases.sqlite),
    Layer.orDie
  )

export type EngineServices = Layer.Layer.Success<ReturnType<typeof engine>> | SqlClient.SqlClient

export const givenOrganization = Effect.gen(function*() {
  const org = new Organization({
    id: OrganizationId.make(Crypto.randomUUID()),
    name: "Acme",
    plan: "growth",
    subscriptionStatus: "active",
    trialEndsAt: Option.none(),
    createdAt: yield* DateTime.now
  })
  yield* (yield* OrganizationStore).insert(org)
  return org
})

/** Appends one event, as any emitter does. */
export const emit = (organizationId: OrganizationId, type: EventType, data: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const event = new Event({
      id: EventId.make(Crypto.randomUUID()),
      organizationId,
      type,
      data,
      createdAt: yield* DateTime.now
    })
    yield* (yield* EventStore).append([event])
    return event
  })
