/**
 * The Bluesky `service` a user gives at connect, and the PDS endpoint a DID document names, pass the
 * webhook address guard; `allowPrivate` (HERALD_BLUESKY_ALLOW_PRIVATE) lets a self-hosted PDS on a
 * private network through. The operator's configured service host is trusted as it is.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ResolvedAddress } from "../../src/net/AddressGuard.js"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as Bluesky from "../../src/platforms/Bluesky.js"
import * as BlueskyFake from "./fakes/BlueskyFake.js"
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
      const privateHost = yield* Effect.flip(client.connectWithCredentials!({ ...login, service: "https://pds.corp.example" }))
      expect(privateHost.kind).toBe("auth")
      expect(privateHost.message).toContain("https://pds.corp.example")
      expect(privateHost.message).toContain(Bluesky.allowPrivateEnv)
      expect(privateHost.message).not.toContain(BlueskyFake.appPassword)

      const loopback = yield* Effect.flip(client.connectWithCredentials!({
        ...login,
        service: fake.entryway.url.replace("127.0.0.1", "localhost")
      }))
      expect(loopback.kind).toBe("auth")
      const metadata = yield* Effect.flip(client.connectWithCredentials!({ ...login, service: "https://169.254.169.254" }))
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
      const metadata = yield* Effect.flip(client.connectWithCredentials!({ ...login, service: "https://169.254.169.254" }))
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

  it.scopedLive("a PDS on a public address named by the DID document is used", () =>
    Effect.gen(function*() {
      // The guard sees "localhost" as public here; the HTTP client still reaches the loopback fake.
      const { client, fake } = yield* setup(false, resolverOf({ localhost: "93.184.216.34" }))
      const pdsUrl = fake.pds.url.replace("127.0.0.1", "localhost")
      fake.setPdsEndpoint(pdsUrl)
      const identity = yield* client.connectWithCredentials!(login)
      expect(identity.credentials["pds"]).toBe(pdsUrl)
      expect(identity.avatarUrl).toBe(fake.account.avatar)
    }))

  it("HERALD_BLUESKY_ALLOW_PRIVATE=true (any case) turns the switch on; anything else leaves it off", () => {
    expect(ConnectionsConfig.platformOptionsFromEnv({ HERALD_BLUESKY_ALLOW_PRIVATE: "TRUE" }).bluesky?.allowPrivate).toBe(true)
    expect(ConnectionsConfig.platformOptionsFromEnv({ HERALD_BLUESKY_ALLOW_PRIVATE: "1" }).bluesky?.allowPrivate).toBeUndefined()
    expect(ConnectionsConfig.platformOptionsFromEnv({}).bluesky?.allowPrivate).toBeUndefined()
    expect(ConnectionsConfig.platformOptionsFromEnv({
      HERALD_BLUESKY_SERVICE_URL: "https://pds.example",
      HERALD_BLUESKY_ALLOW_PRIVATE: "true"
    }).bluesky).toMatchObject({ service: "https://pds.example", allowInsecureService: false, allowPrivate: true })
  })
})
