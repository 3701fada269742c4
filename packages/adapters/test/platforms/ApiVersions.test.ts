import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as TestClock from "effect/TestClock"
import { Platforms } from "@herald/core/platforms/Platforms"
import * as ConnectionsConfig from "../../src/oauth/Config.js"
import * as ApiVersions from "../../src/platforms/ApiVersions.js"
import * as Facebook from "../../src/platforms/Facebook.js"
import * as MetaGraph from "../../src/platforms/internal/MetaGraph.js"
import * as LinkedIn from "../../src/platforms/LinkedIn.js"
import * as Registry from "../../src/platforms/Registry.js"
import * as FakeServer from "./fakes/FakeServer.js"
import * as LinkedInFake from "./fakes/LinkedInFake.js"
import { HttpLive, part, request } from "./fixtures.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

describe("API versions as configuration", () => {
  it("defaults, the environment, and malformed values (default kept, said why)", () => {
    expect(ApiVersions.fromEnv({})).toEqual({ linkedin: "202607", graph: "v26.0", ignored: [] })
    expect(ApiVersions.fromEnv({ HERALD_LINKEDIN_VERSION: "202603", HERALD_GRAPH_VERSION: "v23.0" }))
      .toMatchObject({ linkedin: "202603", graph: "v23.0", ignored: [] })
    const bad = ApiVersions.fromEnv({ HERALD_LINKEDIN_VERSION: "2026-03", HERALD_GRAPH_VERSION: "23" })
    expect(bad).toMatchObject({ linkedin: "202607", graph: "v26.0" })
    expect(bad.ignored).toHaveLength(2)
    expect(bad.ignored[0]).toContain("HERALD_LINKEDIN_VERSION=2026-03")

    const options = ConnectionsConfig.platformOptionsFromEnv({
      HERALD_LINKEDIN_VERSION: "202602",
      HERALD_GRAPH_VERSION: "v22.0"
    })
    expect(options.linkedin?.version).toBe("202602")
    expect(options.facebook?.graphVersion).toBe("v22.0")
    expect(options.instagram?.graphVersion).toBe("v22.0")
  })

  it("the defaults are current on 2026-11-28 and stay served for months", () => {
    const today = at("2026-11-28T00:00:00Z")
    expect(ApiVersions.sunsetWarnings(ApiVersions.fromEnv({}), today)).toEqual([])
    const linkedin = ApiVersions.sunsetOf("linkedin", ApiVersions.defaultLinkedInVersion)!
    expect(DateTime.toEpochMillis(linkedin) - DateTime.toEpochMillis(today)).toBeGreaterThan(180 * 86_400_000)
    // Meta gives v26.0 no end date yet.
    expect(ApiVersions.sunsetOf("graph", ApiVersions.defaultGraphVersion)).toBeUndefined()
  })

  it("sunsets: LinkedIn's published dates (not all the 15th), else a year after the month; Graph from the published table", () => {
    expect(DateTime.formatIso(ApiVersions.sunsetOf("linkedin", "202601")!)).toBe("2027-01-15T00:00:00.000Z")
    expect(DateTime.formatIso(ApiVersions.sunsetOf("linkedin", "202511")!)).toBe("2026-11-16T00:00:00.000Z")
    expect(DateTime.formatIso(ApiVersions.sunsetOf("linkedin", "202603")!)).toBe("2027-03-16T00:00:00.000Z")
    expect(DateTime.formatIso(ApiVersions.sunsetOf("linkedin", "202607")!)).toBe("2027-07-15T00:00:00.000Z")
    expect(DateTime.formatIso(ApiVersions.sunsetOf("graph", "v21.0")!)).toBe("2027-01-21T00:00:00.000Z")
    expect(DateTime.formatIso(ApiVersions.sunsetOf("graph", "v22.0")!)).toBe("2027-05-20T00:00:00.000Z")
    expect(DateTime.formatIso(ApiVersions.sunsetOf("graph", "v25.0")!)).toBe("2028-07-29T00:00:00.000Z")
    expect(ApiVersions.sunsetOf("graph", "v99.0")).toBeUndefined()

    const configured = { linkedin: "202601", graph: "v21.0" }
    expect(ApiVersions.sunsetWarnings(configured, at("2026-12-15T00:00:00Z"))).toEqual([])
    const near = ApiVersions.sunsetWarnings(configured, at("2027-01-01T00:00:00Z"))
    expect(near).toEqual([
      "LinkedIn version 202601 sunsets on 2027-01-15 (in 14 days); raise HERALD_LINKEDIN_VERSION to a newer version",
      "Graph API version v21.0 sunsets on 2027-01-21 (in 20 days); raise HERALD_GRAPH_VERSION to a newer version"
    ])
    expect(ApiVersions.sunsetWarnings(configured, at("2027-02-01T00:00:00Z"))[0]).toContain(
      "reached its sunset on 2027-01-15"
    )
    expect(ApiVersions.sunsetWarnings({ linkedin: "202612", graph: "v99.0" }, at("2027-01-01T00:00:00Z"))).toEqual([])
  })

  it.scoped("the live registry logs the warnings when it is built (server and worker start)", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => {
          logged.push(Array.isArray(message) ? message.join(" ") : String(message))
        })
      )
      yield* TestClock.setTime(Date.parse("2027-01-05T00:00:00Z"))
      const options = ConnectionsConfig.platformOptionsFromEnv({
        HERALD_GRAPH_VERSION: "v21",
        HERALD_LINKEDIN_VERSION: "202601"
      })
      yield* Platforms.pipe(
        Effect.provide(Layer.provide(Registry.layerLive(options), HttpLive)),
        Effect.provide(capture)
      )
      expect(logged).toEqual([
        "HERALD_GRAPH_VERSION=v21 is not a Graph API version (vNN.N); using v26.0",
        expect.stringContaining("LinkedIn version 202601 sunsets on 2027-01-15 (in 10 days)")
      ])
    }))

  it.scopedLive("LinkedIn: the configured version is the header sent; a 426 names the setting to raise", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(
        Effect.promise(() => LinkedInFake.start()),
        (f) => Effect.promise(() => f.server.close())
      )
      const credentials = { access_token: LinkedInFake.accessToken, author_urn: LinkedInFake.authorUrn }
      const options = ConnectionsConfig.platformOptionsFromEnv({ HERALD_LINKEDIN_VERSION: "202602" })
      const client = yield* LinkedIn.make({ ...options.linkedin, apiUrl: fake.server.url }).pipe(
        Effect.provide(HttpLive)
      )
      yield* client.publish(request({ platform: "linkedin", credentials, main: part("hello") }))
      expect(fake.server.requests.at(-1)!.headers["linkedin-version"]).toBe("202602")

      const old = yield* LinkedIn.make({ apiUrl: fake.server.url, version: "202401" }).pipe(Effect.provide(HttpLive))
      const error = yield* Effect.flip(old.publish(request({ platform: "linkedin", credentials, main: part("old") })))
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("LinkedIn no longer serves version 202401; set HERALD_LINKEDIN_VERSION")
    }))

  it.scopedLive("Graph: the configured version is in every path; a version Meta no longer serves names HERALD_GRAPH_VERSION", () =>
    Effect.gen(function*() {
      // Meta's code 12 is its "deprecated for versions …" answer.
      const fake = yield* FakeServer.scoped(() => ({
        status: 400,
        body: {
          error: {
            message: "(#12) This endpoint is deprecated for versions v22.0 and higher",
            type: "OAuthException",
            code: 12,
            fbtrace_id: "AbCdEf123"
          }
        }
      }))
      const client = yield* Facebook.make({ apiUrl: fake.url, graphVersion: "v22.0" }).pipe(Effect.provide(HttpLive))
      const error = yield* Effect.flip(client.publish(request({
        platform: "facebook",
        credentials: { access_token: "EAAGpagetoken1234567890", page_id: "104858372211994" },
        main: part("hello")
      })))
      expect(fake.requests[0]!.path.startsWith("/v22.0/")).toBe(true)
      expect(error.kind).toBe("permanent")
      expect(error.message).toContain("set HERALD_GRAPH_VERSION to a current version")
      expect(error.message).not.toContain("EAAGpagetoken1234567890")

      const upgrade = MetaGraph.classify("Instagram", { status: 426, headers: {}, text: "", body: undefined }, [])
      expect(upgrade.kind).toBe("permanent")
      expect(upgrade.message).toContain("HERALD_GRAPH_VERSION")
    }))
})
