/**
 * The Bluesky `service` a user gives at connect, and the PDS endpoint a DID document names, pass the
 * webhook address guard on every connection; `allowPrivate` (HERALD_BLUESKY_ALLOW_PRIVATE) lets a
 * self-hosted PDS on a private network through. The operator's configured origins are trusted as they
 * are (exact scheme, host and port). No redirect is followed, and a DNS answer that changes after the
 * check never decides where a connection goes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ResolvedAddress } from "../../src/net/AddressGuard.js"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as Bluesky from "../../src/platforms/Bluesky.js"
import * as BlueskyXrpc from "../../src/platforms/BlueskyXrpc.js"
import * as BlueskyFake from "./fakes/BlueskyFake.js"
import * as FakeServer from "./fakes/FakeServer.js"
import { HttpLive, part, request } from "./fixtures.js"

const addresses: Record<string, string> = {
  "pds.corp.example": "10.1.2.3",
  "pds.home.example": "192.168.1.10",
  "localhost": "127.0.0.1",
  "pds.public.example": "93.184.216.34"
}
const resolverOf = (table: Record<string, string>) => async (host: string): Promise<ReadonlyArray<ResolvedAddress>> => {
  const address = table[host]
  if (address === undefined) throw new Error("ENOTFOUND")
  return [{ address, family: 4 }]
}

const setup = (allowPrivate: boolean, resolve = resolverOf(addresses)) =>
  Effect.gen(function*() {
    const fake = yield* Effect.acquireRelease(
      Effect.promise(() => BlueskyFake.start()),
      (f) => Effect.promise(() => f.close())
    )
    const client = yield* Bluesky.make({
      service: fake.entryway.url,
      videoService: fake.pds.url,
      appView: fake.pds.url,
      allowInsecureService: true,
      allowPrivate,
      resolve
    }).pipe(Effect.provide(HttpLive))
    return { fake, client }
  })

const login = { handle: "herald.bsky.social", app_password: BlueskyFake.appPassword }

describe("Bluesky service and PDS address guard", () => {
  it.scopedLive("a user-supplied service on a private or metadata address is refused before the password is sent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup(false)
      const privateHost = yield* Effect.flip(
        client.connectWithCredentials!({ ...login, service: "https://pds.corp.example" })
      )
      expect(privateHost.kind).toBe("auth")
      expect(privateHost.message).toContain("https://pds.corp.example")
      expect(privateHost.message).toContain(BlueskyXrpc.allowPrivateEnv)
      expect(privateHost.message).not.toContain(BlueskyFake.appPassword)

      const loopback = yield* Effect.flip(client.connectWithCredentials!({
        ...login,
        service: fake.entryway.url.replace("127.0.0.1", "localhost")
      }))
      expect(loopback.kind).toBe("auth")
      const metadata = yield* Effect.flip(
        client.connectWithCredentials!({ ...login, service: "https://169.254.169.254" })
      )
      expect(metadata.kind).toBe("auth")
      expect(fake.counts.logins).toBe(0)
    }))

  it.scopedLive("with the operator switch a private service connects; cloud metadata stays refused", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup(true)
      const identity = yield* client.connectWithCredentials!({
        ...login,
        service: fake.entryway.url.replace("127.0.0.1", "localhost")
      })
      expect(identity.platformAccountId).toBe(BlueskyFake.did)
      expect(fake.counts.logins).toBe(1)
      const metadata = yield* Effect.flip(
        client.connectWithCredentials!({ ...login, service: "https://169.254.169.254" })
      )
      expect(metadata.kind).toBe("auth")
      expect(fake.counts.logins).toBe(1)
    }))

  it.scopedLive("a DID document naming a private PDS fails the connect; the tokens never go there", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup(false)
      fake.setPdsEndpoint("https://pds.home.example")
      const error = yield* Effect.flip(client.connectWithCredentials!(login))
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("PDS endpoint https://pds.home.example")
      expect(error.message).not.toMatch(/eyJ/)
      expect(fake.pds.requests).toHaveLength(0)
    }))

  it.scopedLive("a stored session whose PDS is private is refused at publish before any call", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup(false)
      const identity = yield* client.connectWithCredentials!(login)
      const before = fake.pds.requests.length + fake.entryway.requests.length
      const error = yield* Effect.flip(client.publish(request({
        platform: "bluesky",
        credentials: { ...identity.credentials, pds: "https://pds.corp.example" },
        main: part("hello")
      })))
      expect(error.kind).toBe("auth")
      expect(fake.pds.requests.length + fake.entryway.requests.length).toBe(before)
    }))

  it.scopedLive("a PDS named by host is connected to at the address the guard checked, not a second lookup", () =>
    Effect.gen(function*() {
      // "pds.test" exists only in the guard's resolver: the connection must use the checked answer.
      const lookups: Array<string> = []
      const resolve = (host: string) => {
        lookups.push(host)
        return resolverOf({ "pds.test": "127.0.0.1" })(host)
      }
      const { client, fake } = yield* setup(true, resolve)
      const pdsUrl = fake.pds.url.replace("127.0.0.1", "pds.test")
      fake.setPdsEndpoint(pdsUrl)
      const identity = yield* client.connectWithCredentials!(login)
      expect(identity.credentials["pds"]).toBe(pdsUrl)
      expect(identity.avatarUrl).toBe(fake.account.avatar)
      expect(fake.pds.requests.map((r) => r.headers["host"])).toEqual([new URL(pdsUrl).host])
      expect(lookups.every((h) => h === "pds.test")).toBe(true)
    }))

  it.scopedLive("DNS rebinding: a service that resolves public at the check and to loopback later never gets the password", () =>
    Effect.gen(function*() {
      // The first answer (the early check) is public; every later one is the loopback address of the fake.
      let calls = 0
      const rebinding = async (host: string): Promise<ReadonlyArray<ResolvedAddress>> => {
        if (host !== "localhost") throw new Error("ENOTFOUND")
        calls++
        return [{ address: calls === 1 ? "93.184.216.34" : "127.0.0.1", family: 4 }]
      }
      const { client, fake } = yield* setup(false, rebinding)
      const error = yield* Effect.flip(client.connectWithCredentials!({
        ...login,
        service: fake.entryway.url.replace("127.0.0.1", "localhost")
      }))
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("loopback")
      expect(error.message).not.toContain(BlueskyFake.appPassword)
      expect(calls).toBeGreaterThanOrEqual(2)
      expect(fake.entryway.requests).toHaveLength(0)
      expect(fake.pds.requests).toHaveLength(0)
      expect(fake.counts.logins).toBe(0)
    }))

  it.scopedLive("a redirect from createSession is not followed: the password is not sent on", () =>
    Effect.gen(function*() {
      const elsewhere = yield* FakeServer.scoped(() => ({ status: 200, body: {} }))
      const { client, fake } = yield* setup(false)
      // 307 would make a client that follows it POST the same body (the password) to the new place.
      fake.failNext("com.atproto.server.createSession", {
        status: 307,
        headers: { location: `${elsewhere.url}/xrpc/com.atproto.server.createSession` }
      })
      const error = yield* Effect.flip(client.connectWithCredentials!(login))
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("redirect")
      expect(error.message).not.toContain(BlueskyFake.appPassword)
      expect(elsewhere.requests).toHaveLength(0)

      fake.failNext("com.atproto.server.createSession", {
        status: 302,
        headers: { location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/" }
      })
      const metadata = yield* Effect.flip(client.connectWithCredentials!(login))
      expect(metadata.kind).toBe("permanent")
      expect(metadata.message).toContain("HTTP 302")
    }))

  it.scopedLive("a redirect from getProfile is not followed: the access token is not sent on", () =>
    Effect.gen(function*() {
      const elsewhere = yield* FakeServer.scoped(() => ({ status: 200, body: { handle: "evil.example" } }))
      const { client, fake } = yield* setup(false)
      fake.failNext("app.bsky.actor.getProfile", {
        status: 302,
        headers: { location: `${elsewhere.url}/latest/meta-data/` }
      })
      const identity = yield* client.connectWithCredentials!(login)
      // The profile only adds the avatar: the account connects without it, and nothing went elsewhere.
      expect(identity.avatarUrl).toBe("")
      expect(identity.accountName).toBe("herald.bsky.social")
      expect(elsewhere.requests).toHaveLength(0)
    }))

  it.scopedLive("another port on the operator's service host is a user address like any other", () =>
    Effect.gen(function*() {
      const elsewhere = yield* FakeServer.scoped(() => ({ status: 200, body: {} }))
      const { client } = yield* setup(false)
      const error = yield* Effect.flip(client.connectWithCredentials!({ ...login, service: elsewhere.url }))
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("loopback")
      expect(elsewhere.requests).toHaveLength(0)
    }))

  it("HERALD_BLUESKY_ALLOW_PRIVATE=true (any case) turns the switch on; anything else leaves it off", () => {
    expect(ConnectionsConfig.platformOptionsFromEnv({ HERALD_BLUESKY_ALLOW_PRIVATE: "TRUE" }).bluesky?.allowPrivate)
      .toBe(true)
    expect(ConnectionsConfig.platformOptionsFromEnv({ HERALD_BLUESKY_ALLOW_PRIVATE: "1" }).bluesky?.allowPrivate)
      .toBeUndefined()
    expect(ConnectionsConfig.platformOptionsFromEnv({}).bluesky?.allowPrivate).toBeUndefined()
    expect(
      ConnectionsConfig.platformOptionsFromEnv({
        HERALD_BLUESKY_SERVICE_URL: "https://pds.example",
        HERALD_BLUESKY_ALLOW_PRIVATE: "true"
      }).bluesky
    ).toMatchObject({ service: "https://pds.example", allowInsecureService: false, allowPrivate: true })
  })
})
