/**
 * The guarded agents make every socket through the address guard: the host is resolved once, checked,
 * and connected to at the checked address; refused addresses get no connection at all; operator
 * origins are trusted by exact origin; the HttpClient over them never follows a redirect.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type * as AddressGuard from "../../src/net/AddressGuard.js"
import * as GuardedAgent from "../../src/net/GuardedAgent.js"
import * as FakeServer from "../platforms/fakes/FakeServer.js"

const resolverOf = (table: Record<string, string>, seen: Array<string> = []): AddressGuard.Resolver => async (host) => {
  seen.push(host)
  const address = table[host]
  if (address === undefined) throw new Error("ENOTFOUND")
  return [{ address, family: 4 }]
}

/** A GET through the agents: the status, or the error the request failed with. */
const get = (agents: GuardedAgent.GuardedAgents, url: string) =>
  Effect.async<{ readonly status: number } | { readonly error: unknown }>((resume) => {
    const req = Http.request(url, { agent: agents.http }, (res) => {
      res.resume()
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0 })))
    })
    req.on("error", (error) => resume(Effect.succeed({ error })))
    req.end()
  })

const portOf = (server: FakeServer.FakeServer) => new URL(server.url).port

describe("GuardedAgent", () => {
  it.scopedLive("connects to the address the guard checked, resolving once, with the URL's host in Host", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.scoped(() => ({ status: 204 }))
      const seen: Array<string> = []
      // "pinned.test" exists only in this resolver; the system resolver cannot have chosen the address.
      const agents = GuardedAgent.make({
        allowPrivate: true,
        resolve: resolverOf({ "pinned.test": "127.0.0.1" }, seen)
      })
      const answer = yield* get(agents, `http://pinned.test:${portOf(server)}/hook`)
      expect(answer).toEqual({ status: 204 })
      expect(seen).toEqual(["pinned.test"])
      expect(server.requests.map((r) => r.headers["host"])).toEqual([`pinned.test:${portOf(server)}`])
    }))

  it.scopedLive("a host resolving to a refused address, or a refused literal, gets no connection", () =>
    Effect.gen(function*() {
      const server = yield* FakeServer.scoped(() => ({ status: 204 }))
      const agents = GuardedAgent.make({ allowPrivate: false, resolve: resolverOf({ "rebound.test": "127.0.0.1" }) })
      for (
        const url of [
          `http://rebound.test:${portOf(server)}/`,
          server.url,
          `http://[::ffff:127.0.0.1]:${portOf(server)}/`
        ]
      ) {
        const answer = yield* get(agents, url)
        expect("error" in answer).toBe(true)
        const refusal = GuardedAgent.refusalIn("error" in answer ? answer.error : undefined)
        expect(refusal?.reason).toBe("refused_address")
        expect(refusal?.message).toContain("loopback")
      }
      expect(server.requests).toHaveLength(0)
    }))

  it.scopedLive("operator origins are trusted by exact origin; another port on the same host is checked", () =>
    Effect.gen(function*() {
      const trusted = yield* FakeServer.scoped(() => ({ status: 204 }))
      const other = yield* FakeServer.scoped(() => ({ status: 204 }))
      const agents = GuardedAgent.make({ allowPrivate: false, trustedOrigins: [trusted.url] })
      expect(yield* get(agents, `${trusted.url}/x`)).toEqual({ status: 204 })
      const refused = yield* get(agents, `${other.url}/x`)
      expect(GuardedAgent.refusalIn("error" in refused ? refused.error : undefined)?.reason).toBe("refused_address")
      expect(other.requests).toHaveLength(0)
      expect(GuardedAgent.originKey("HTTP://Example.COM")).toBe("http://example.com:80")
      expect(GuardedAgent.originKey("https://[::1]:8443/x")).toBe("https://::1:8443")
    }))

  it.scopedLive("the HttpClient answers a redirect as it is and never follows it", () =>
    Effect.gen(function*() {
      const target = yield* FakeServer.scoped(() => ({ status: 200, body: { secret: "metadata" } }))
      const redirecting = yield* FakeServer.scoped(() => ({
        status: 307,
        headers: { location: `${target.url}/latest/meta-data/` }
      }))
      // Both on loopback and both allowed, so only the absence of redirect following keeps `target` unreached.
      const client = yield* GuardedAgent.httpClient({ allowPrivate: true })
      const response = yield* client.execute(
        HttpClientRequest.post(`${redirecting.url}/xrpc/login`).pipe(
          HttpClientRequest.bodyUnsafeJson({ password: "p" })
        )
      )
      expect(response.status).toBe(307)
      expect(redirecting.requests).toHaveLength(1)
      expect(target.requests).toHaveLength(0)
      // The same client over a refused address fails with the refusal in its cause.
      const guarded = yield* GuardedAgent.httpClient({ allowPrivate: false })
      const error = yield* Effect.flip(
        HttpClient.get(target.url).pipe(Effect.provideService(HttpClient.HttpClient, guarded))
      )
      expect(GuardedAgent.refusalIn(error)?.reason).toBe("refused_address")
      expect(target.requests).toHaveLength(0)
    }))
})
