/**
 * LinkedIn Pages: connecting the pages a member administers (organizationAcls, organizations lookup),
 * posting as the organization, and the page's post statistics, against the LinkedIn fake.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ConnectedIdentity } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as LinkedInOAuth from "../../src/oauth/LinkedIn.js"
import * as LinkedIn from "../../src/platforms/LinkedIn.js"
import * as LinkedInFake from "./fakes/LinkedInFake.js"
import { bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const redirectUri = "https://herald.example.com/oauth/callback/linkedin"

const setup = (organizations = true) =>
  Effect.gen(function*() {
    const fake = yield* Effect.acquireRelease(
      Effect.promise(() => LinkedInFake.start()),
      (f) => Effect.promise(() => f.server.close())
    )
    // Every request must keep the documented rules of the fake's rulebook, whatever the test checks.
    yield* Effect.addFinalizer(() => Effect.sync(() => fake.rules.expectNone()))
    const provider = yield* LinkedInOAuth.make({
      clientId: LinkedInFake.clientId,
      clientSecret: Redacted.make(LinkedInFake.clientSecret),
      oauthUrl: `${fake.server.url}/oauth/v2`,
      apiUrl: fake.server.url,
      organizations
    }).pipe(Effect.provide(HttpLive))
    const client = yield* LinkedIn.make({
      apiUrl: fake.server.url,
      mediaPollInterval: "5 millis",
      videoPollInterval: "5 millis"
    }).pipe(
      Effect.provide(HttpLive)
    )
    return { fake, provider, client: withFollowUps(client) }
  })

const connect = (
  provider: Effect.Effect.Success<ReturnType<typeof setup>>["provider"],
  code: string
) => provider.exchangeCode({ code, redirectUri, codeVerifier: "unused" })

const pageRequest = (identity: ConnectedIdentity, content: string, mediaRefs: Parameters<typeof part>[1] = []) =>
  request({ platform: "linkedin", credentials: identity.credentials, main: part(content, mediaRefs) })

const postsSent = (fake: LinkedInFake.LinkedInFake) =>
  fake.server.requests.filter((r) => r.method === "POST" && r.path === "/rest/posts")

describe("LinkedIn Pages: connect", () => {
  it.scopedLive("the page scopes are asked; the member and each page it administers (ADMINISTRATOR, APPROVED) become accounts", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "ch" }))
      expect(url.searchParams.get("scope")).toBe(
        "openid profile w_member_social w_organization_social r_organization_social rw_organization_admin"
      )
      const identities = yield* connect(provider, fake.issueCode(LinkedInFake.allScopes))
      expect(identities.map((i) => [i.platformAccountId, i.accountName])).toEqual([
        [LinkedInFake.memberId, LinkedInFake.memberName],
        [LinkedInFake.organizationUrn, "Herald Labs"],
        ["urn:li:organization:5590021", "Herald Research"]
      ])
      const [member, page] = identities
      expect(page!.credentials).toEqual({
        ...member.credentials,
        author_urn: LinkedInFake.organizationUrn,
        organization_id: LinkedInFake.organizationId
      })
      expect(page!.credentials["user_id"]).toBe(LinkedInFake.memberId)
      expect(page!.tokenExpiresAt).toEqual(member.tokenExpiresAt)

      const acl = fake.server.requests.find((r) => r.path === "/rest/organizationAcls")!
      expect(Object.fromEntries(acl.query)).toMatchObject({
        q: "roleAssignee",
        role: "ADMINISTRATOR",
        state: "APPROVED"
      })
      expect(acl.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)
      expect(acl.headers["x-restli-protocol-version"]).toBe("2.0.0")
      expect(acl.headers["authorization"]).toBe(`Bearer ${member.credentials["access_token"]}`)
      const lookup = fake.server.requests.find((r) => r.path === "/rest/organizations")!
      expect(lookup.target).toBe("/rest/organizations?ids=List(2414183,5590021)")
    }))

  it.scopedLive("without HERALD_LINKEDIN_ORGANIZATIONS: the member's scopes only, one account, no page lookup", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup(false)
      const url = new URL(provider.authorizeUrl({ state: "st", redirectUri, codeChallenge: "ch" }))
      expect(url.searchParams.get("scope")).toBe("openid profile w_member_social")
      const identities = yield* connect(provider, fake.issueCode(["openid", "profile", "w_member_social"]))
      expect(identities.map((i) => i.platformAccountId)).toEqual([LinkedInFake.memberId])
      expect(fake.server.requests.some((r) => r.path.startsWith("/rest/"))).toBe(false)
    }))

  it.scopedLive("a grant without the page scopes (an app lacking Community Management): the connect is refused, saying why", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      const error = yield* Effect.flip(connect(provider, fake.issueCode(["openid", "profile", "w_member_social"])))
      expect(error.kind).toBe("auth")
      expect(error.message).toContain("Not enough permissions to access: organizationAcls")
      expect(error.message).toContain("Community Management API")
      expect(error.message).toContain("HERALD_LINKEDIN_ORGANIZATIONS")
      expect(error.message).not.toContain("AQV-issued")
    }))

  it.scopedLive("names LinkedIn will not give: the page is still connected, named by its id", () =>
    Effect.gen(function*() {
      const { fake, provider } = yield* setup()
      fake.failNext("GET /rest/organizations", LinkedInFake.serverError)
      const identities = yield* connect(provider, fake.issueCode(LinkedInFake.allScopes))
      expect(identities.slice(1).map((i) => i.accountName)).toEqual(["LinkedIn Page 2414183", "LinkedIn Page 5590021"])
    }))
})

describe("LinkedIn Pages: posting as the organization", () => {
  it.scopedLive("a page account posts as urn:li:organization:{id}, its images owned by the page; the first comment is the page's", () =>
    Effect.gen(function*() {
      const { client, fake, provider } = yield* setup()
      const [, page] = yield* connect(provider, fake.issueCode(LinkedInFake.allScopes))
      const result = yield* client.publish({
        ...pageRequest(page!, "News from the lab", [
          media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(60, 3) })
        ]),
        settings: { firstComment: "More soon" }
      })
      const init = fake.server.requests.find((r) => r.path === "/rest/images")!
      expect(init.json).toEqual({ initializeUploadRequest: { owner: LinkedInFake.organizationUrn } })
      const sent = postsSent(fake)[0]!
      expect(sent.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)
      expect(sent.headers["x-restli-protocol-version"]).toBe("2.0.0")
      expect(sent.json).toMatchObject({
        author: LinkedInFake.organizationUrn,
        commentary: "News from the lab",
        lifecycleState: "PUBLISHED"
      })
      expect(result.platformPostId).toBe(fake.posts[0]!.urn)
      expect(fake.comments[0]!.body).toMatchObject({
        actor: LinkedInFake.organizationUrn,
        object: result.platformPostId
      })
    }))

  it.scopedLive("a page the member does not administer (or a grant without w_organization_social) is refused: auth", () =>
    Effect.gen(function*() {
      const { client, fake, provider } = yield* setup()
      const [member] = yield* connect(provider, fake.issueCode(LinkedInFake.allScopes))
      const analyst = { ...member, credentials: { ...member.credentials, author_urn: "urn:li:organization:7700001" } }
      const refused = yield* Effect.flip(client.publish(pageRequest(analyst, "not mine")))
      expect(refused.kind).toBe("auth")
      expect(refused.message).toContain("Not enough permissions to create a post as urn:li:organization:7700001")
      expect(fake.posts).toHaveLength(0)
    }))
})

describe("LinkedIn Pages: metrics", () => {
  it.scopedLive("a page post's share statistics: shares=List(urn) for a share, ugcPosts=List(urn) for a video", () =>
    Effect.gen(function*() {
      const { client, fake, provider } = yield* setup()
      const [, page] = yield* connect(provider, fake.issueCode(LinkedInFake.allScopes))
      const credentials = Redacted.make(page!.credentials)
      const share = yield* client.publish(pageRequest(page!, "Counted"))
      const metrics = yield* client.metrics!(credentials, share.platformPostId)
      const stats = LinkedInFake.shareStatistics
      expect(metrics).toMatchObject({
        impressions: stats.impressionCount,
        clicks: stats.clickCount,
        likes: stats.likeCount,
        comments: stats.commentCount,
        shares: stats.shareCount,
        views: 0,
        saves: 0
      })
      const call = fake.server.requests.find((r) => r.path === "/rest/organizationalEntityShareStatistics")!
      expect(call.target).toBe(
        "/rest/organizationalEntityShareStatistics?q=organizationalEntity" +
          `&organizationalEntity=${encodeURIComponent(LinkedInFake.organizationUrn)}` +
          `&shares=List(${encodeURIComponent(share.platformPostId)})`
      )
      expect(call.headers["linkedin-version"]).toBe(LinkedIn.defaultVersion)

      const clip = yield* client.publish(
        pageRequest(page!, "A clip", [media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(1500, 5) })])
      )
      expect(clip.platformPostId).toMatch(/^urn:li:ugcPost:/)
      expect((yield* client.metrics!(credentials, clip.platformPostId)).impressions).toBe(stats.impressionCount)
      const videoCall = fake.server.requests.filter((r) => r.path === "/rest/organizationalEntityShareStatistics")[1]!
      expect(videoCall.target).toContain(`&ugcPosts=List(${encodeURIComponent(clip.platformPostId)})`)
    }))

  it.scopedLive("statistics refused (a content administrator): likes and comments from socialActions instead", () =>
    Effect.gen(function*() {
      const { client, fake, provider } = yield* setup()
      const [, page] = yield* connect(provider, fake.issueCode(LinkedInFake.allScopes))
      const { platformPostId } = yield* client.publish(pageRequest(page!, "Shared by a content admin"))
      fake.organizations.get(LinkedInFake.organizationId)!.roles.set(LinkedInFake.authorUrn, {
        role: "CONTENT_ADMINISTRATOR",
        state: "APPROVED"
      })
      const metrics = yield* client.metrics!(Redacted.make(page!.credentials), platformPostId)
      expect(metrics).toMatchObject({
        likes: LinkedInFake.socialCounts.likes,
        comments: LinkedInFake.socialCounts.comments,
        impressions: 0,
        clicks: 0
      })
      // The statistics were asked first and refused; then the social actions.
      expect(fake.server.requests.map((r) => `${r.method} ${r.path}`).slice(-2)).toEqual([
        "GET /rest/organizationalEntityShareStatistics",
        `GET /rest/socialActions/${encodeURIComponent(platformPostId)}`
      ])
    }))

  it.scopedLive("the fake refuses a statistics list written with encoded parentheses or a raw URN, as Rest.li 2.0 requires", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup()
      const get = (query: string) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/rest/organizationalEntityShareStatistics?${query}`, {
            headers: {
              authorization: `Bearer ${LinkedInFake.accessToken}`,
              "linkedin-version": LinkedIn.defaultVersion,
              "x-restli-protocol-version": "2.0.0"
            }
          }).then(async (r) => ({ status: r.status, body: await r.json() as { message: string } }))
        )
      const base = `q=organizationalEntity&organizationalEntity=${encodeURIComponent(LinkedInFake.organizationUrn)}`
      const encoded = yield* get(`${base}&shares=List%28${encodeURIComponent("urn:li:share:1")}%29`)
      expect(encoded.status).toBe(400)
      expect(encoded.body.message).toContain("protocol-version")
      const rawUrn = yield* get(`${base}&shares=List(urn:li:share:1)`)
      expect(rawUrn.status).toBe(400)
      expect(fake.rules.violations).toHaveLength(2)
      fake.rules.violations.length = 0
    }))
})
