/**
 * The connection use cases over real stores (SQLite, credentials encrypted) and the platforms' loopback
 * fakes: credential platforms connected live and publishing with what was stored, the X connect-link
 * round trip, Facebook logins granting several Pages, reconnect, disconnect, the refresh sweep (X's
 * refresh tokens, Threads' self-renewing long-lived token), and dead tokens turning accounts broken.
 */
import * as PlatformTransport from "@herald/adapters/platforms/PlatformTransport"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as NodeCrypto from "@herald/adapters/NodeCrypto"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as ConnectionsConfig from "@herald/adapters/oauth/Config"
import * as Bluesky from "@herald/adapters/platforms/Bluesky"
import * as Discord from "@herald/adapters/platforms/Discord"
import * as Registry from "@herald/adapters/platforms/Registry"
import * as Telegram from "@herald/adapters/platforms/Telegram"
import * as X from "@herald/adapters/platforms/X"
import * as CredentialCipher from "@herald/adapters/security/CredentialCipher"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import { SocialAccount } from "@herald/core/domain/Account"
import * as AccountHealth from "@herald/core/accounts/AccountHealth"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as ConnectLinks from "@herald/core/accounts/ConnectLinks"
import * as ConnectedAccounts from "@herald/core/accounts/ConnectedAccounts"
import * as CredentialConnect from "@herald/core/accounts/CredentialConnect"
import * as OAuthCallback from "@herald/core/accounts/OAuthCallback"
import * as OAuthProviders from "@herald/core/accounts/OAuthProviders"
import * as TokenRefresh from "@herald/core/accounts/TokenRefresh"
import * as ConnectState from "@herald/core/accounts/ConnectState"
import { Destination } from "@herald/core/domain/Destination"
import * as Dispatcher from "@herald/core/publishing/Dispatcher"
import { DomainError } from "@herald/core/kernel/Errors"
import { EventStore } from "@herald/core/webhooks/EventStore"
import { DestinationId, OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { Platforms } from "@herald/core/platforms/Platforms"
import { Post } from "@herald/core/domain/Post"
import * as PublishAuthRetry from "@herald/core/publishing/PublishAuthRetry"
import { PostStore } from "@herald/core/posts/PostStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import * as ConnectionsHttp from "@herald/http/groups/Connections"
import * as FacebookFake from "../../packages/adapters/test/oauth/fakes/FacebookOAuthFake.js"
import * as ThreadsFake from "../../packages/adapters/test/oauth/fakes/ThreadsOAuthFake.js"
import * as XFake from "../../packages/adapters/test/oauth/fakes/XOAuthFake.js"
import * as BlueskyFake from "../../packages/adapters/test/platforms/fakes/BlueskyFake.js"
import * as DiscordFake from "../../packages/adapters/test/platforms/fakes/DiscordFake.js"
import * as TelegramFake from "../../packages/adapters/test/platforms/fakes/TelegramFake.js"
import * as XApiFake from "../../packages/adapters/test/platforms/fakes/XFake.js"
import { bytesOf, media, part, request } from "../../packages/adapters/test/platforms/fixtures.js"
import * as TestDatabases from "../../packages/adapters/test/support/TestDatabases.js"

const publicUrl = "https://herald.example.com"

interface Fakes {
  readonly telegram: TelegramFake.TelegramFake
  readonly discord: DiscordFake.DiscordFake
  readonly bluesky: BlueskyFake.BlueskyFake
  readonly x: XFake.XOAuthFake
  /** X's posting API, accepting the tokens the OAuth fake issued. */
  readonly xApi: XApiFake.XFake
  readonly facebook: FacebookFake.FacebookFake
  readonly threads: ThreadsFake.ThreadsFake
}

const fakes = Effect.acquireRelease(
  Effect.promise(async (): Promise<Fakes> => ({
    telegram: await TelegramFake.start(),
    discord: await DiscordFake.start(),
    bluesky: await BlueskyFake.start(),
    ...(await (async () => {
      const x = await XFake.start()
      return { x, xApi: await XApiFake.start({ acceptsToken: (token) => x.accessTokens.has(token) }) }
    })()),
    facebook: await FacebookFake.start(),
    threads: await ThreadsFake.start()
  })),
  (f) =>
    Effect.promise(() =>
      Promise.all([
        f.telegram.server.close(),
        f.discord.server.close(),
        f.bluesky.close(),
        f.x.close(),
        f.xApi.server.close(),
        f.facebook.close(),
        f.threads.close()
      ])
    )
)

const servicesFor = (f: Fakes) => {
  const platforms = Layer.effect(
    Platforms,
    Effect.map(
      Effect.all([
        Telegram.make({ baseUrl: f.telegram.server.url }),
        Discord.make({ baseUrl: f.discord.server.url }),
        // The fake's PDS is another loopback port: the operator switch lets it through the address guard.
        Bluesky.make({ service: f.bluesky.entryway.url, allowInsecureService: true, allowPrivate: true }),
        X.make({ apiUrl: f.xApi.server.url })
      ]),
      Registry.make
    )
  )
  const providers = Layer.effect(
    OAuthProviders.OAuthProviders,
    ConnectionsConfig.makeProviders({
      HERALD_X_CLIENT_ID: f.x.clientId,
      HERALD_X_CLIENT_SECRET: f.x.clientSecret,
      HERALD_X_AUTHORIZE_URL: `${f.x.server.url}/i/oauth2/authorize`,
      HERALD_X_API_URL: f.x.server.url,
      HERALD_FACEBOOK_CLIENT_ID: f.facebook.clientId,
      HERALD_FACEBOOK_CLIENT_SECRET: f.facebook.clientSecret,
      HERALD_FACEBOOK_AUTHORIZE_URL: `${f.facebook.server.url}/v26.0/dialog/oauth`,
      HERALD_FACEBOOK_API_URL: f.facebook.server.url,
      HERALD_THREADS_CLIENT_ID: f.threads.clientId,
      HERALD_THREADS_CLIENT_SECRET: f.threads.clientSecret,
      HERALD_THREADS_AUTHORIZE_URL: `${f.threads.server.url}/oauth/authorize`,
      HERALD_THREADS_API_URL: f.threads.server.url
      // Instagram left out: it answers what to configure.
    })
  )
  const settings = Layer.succeed(OAuthProviders.ConnectSettings, {
    publicUrl: Option.some(publicUrl),
    stateSecret: Redacted.make("test-state-secret")
  })
  const stores = SqlStores.layer.pipe(
    Layer.provide(CredentialCipher.layer({ secret: Redacted.make("test-secret"), dataDir: "/nonexistent" })),
    Layer.provideMerge(NodeIdGenerator.layer),
    Layer.provideMerge(TestDatabases.sqlite)
  )
  return Layer.mergeAll(platforms, providers, settings, NodeCrypto.layer).pipe(
    Layer.provide(PlatformTransport.layer),
    Layer.provideMerge(stores),
    Layer.orDie
  )
}

/** Runs `body` with fresh fakes and a fresh database. */
const withWorld = <A, E, R>(body: (f: Fakes) => Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.flatMap(fakes, (f) => body(f).pipe(Effect.provide(servicesFor(f))))
  )

const givenOrgOn = (plan: Organization["plan"]) =>
  Effect.gen(function*() {
    const id = OrganizationId.make(randomUUID())
    yield* (yield* OrganizationStore).insert(
      new Organization({
        id,
        name: "Herald test",
        plan,
        subscriptionStatus: "active",
        trialEndsAt: Option.none(),
        createdAt: yield* DateTime.now
      })
    )
    return id
  })

const givenOrg = givenOrgOn("scale")

const eventsOf = (orgId: OrganizationId) =>
  Effect.flatMap(EventStore, (store) => store.list(orgId)).pipe(
    Effect.map((events) => events.map((e) => ({ type: e.type, data: e.data })))
  )

const reload = (account: SocialAccount) =>
  Effect.flatMap(AccountStore, (store) => store.findById(account.organizationId, account.id)).pipe(
    Effect.map(Option.getOrThrow)
  )

const storedCredentials = (account: SocialAccount): Record<string, string> =>
  JSON.parse(Redacted.value(Option.getOrThrow(account.credentials))) as Record<string, string>

const rawCredentials = (account: SocialAccount) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ credentials: string }>`SELECT credentials FROM social_accounts WHERE id = ${account.id}`
  ).pipe(
    Effect.map((rows) => rows[0]!.credentials)
  )

/** The X connect flow as a browser would run it: link, consent at X, back to the callback. */
const connectX = (f: Fakes, orgId: OrganizationId, reconnect?: SocialAccount) =>
  Effect.gen(function*() {
    const link = reconnect === undefined
      ? yield* ConnectLinks.createConnectLink({ organizationId: orgId, platform: "x" })
      : yield* ConnectLinks.createReconnectLink({ organizationId: orgId, account: reconnect })
    const back = new URL(f.x.authorize(link.url))
    expect(back.origin + back.pathname).toBe(`${publicUrl}/oauth/callback/x`)
    const result = yield* OAuthCallback.completeCallback({
      platform: "x",
      state: back.searchParams.get("state") ?? undefined,
      code: back.searchParams.get("code") ?? undefined,
      error: undefined,
      errorDescription: undefined
    })
    expect(result.accounts).toHaveLength(1)
    return result.accounts[0]
  })

/** A Meta connect flow as the browser runs it: link (or reconnect link), the consent, the callback. */
const connectVia = (
  platform: "facebook" | "threads",
  authorize: (url: string) => string,
  orgId: OrganizationId,
  reconnect?: SocialAccount
) =>
  Effect.gen(function*() {
    const link = reconnect === undefined
      ? yield* ConnectLinks.createConnectLink({ organizationId: orgId, platform })
      : yield* ConnectLinks.createReconnectLink({ organizationId: orgId, account: reconnect })
    const back = new URL(authorize(link.url))
    expect(back.origin + back.pathname).toBe(`${publicUrl}/oauth/callback/${platform}`)
    return yield* OAuthCallback.completeCallback({
      platform,
      state: back.searchParams.get("state") ?? undefined,
      code: back.searchParams.get("code") ?? undefined,
      error: back.searchParams.get("error") ?? undefined,
      errorDescription: back.searchParams.get("error_description") ?? undefined
    })
  })

const markBroken = (account: SocialAccount) =>
  Effect.gen(function*() {
    yield* (yield* AccountStore).update(new SocialAccount({ ...(yield* reload(account)), needsReconnection: true }))
    return yield* reload(account)
  })

const queuedPost = (account: SocialAccount, content: string) =>
  Effect.gen(function*() {
    const now = yield* DateTime.now
    const postId = PostId.make(randomUUID())
    const post = new Post({
      id: postId,
      organizationId: account.organizationId,
      createdByKey: Option.none(),
      content,
      accountIds: [account.id],
      platformContent: {},
      mediaIds: [],
      scheduledFor: Option.none(),
      timezone: Option.none(),
      campaignId: Option.none(),
      isDraft: false,
      createdStatus: "publishing",
      approval: Option.none(),
      idempotencyKey: Option.none(),
      requestHash: Option.none(),
      threadPosts: [],
      useQueue: false,
      createdAt: now,
      updatedAt: now
    })
    const destination = Destination.queued({
      id: DestinationId.make(randomUUID()),
      post: { id: postId, organizationId: account.organizationId },
      account,
      dueAt: now,
      now
    })
    yield* (yield* PostStore).insert({ post, destinations: [destination] })
    return postId
  })

const destinationOf = (orgId: OrganizationId, postId: PostId) =>
  Effect.flatMap(PostStore, (store) => store.findById(orgId, postId)).pipe(
    Effect.map((record) => Option.getOrThrow(record).destinations[0]!)
  )

const png = bytesOf(2048, 3)

describe("credential platforms", () => {
  it.effect("connect live, update in place on resubmission, and publish text, image and thread with what was stored", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const telegram = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "@herald_news" }
        })
        expect(telegram.created).toBe(true)
        expect(telegram.account.accountName).toBe("Herald News")
        expect(telegram.account.connectionFlow).toBe("credential")
        const again = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "https://t.me/herald_news" }
        })
        expect(again.created).toBe(false)
        expect(again.account.id).toBe(telegram.account.id)
        expect((yield* (yield* AccountStore).list(orgId)).length).toBe(1)

        const discord = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "discord",
          input: { webhook_url: DiscordFake.webhookUrl }
        })
        expect(discord.account.accountName).toBe("Herald Announcements")
        const bluesky = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "bluesky",
          input: { handle: "herald.bsky.social", app_password: BlueskyFake.appPassword }
        })
        expect(bluesky.account.platformAccountId).toBe(BlueskyFake.did)

        // Encrypted at rest; the store opens it again for publishing.
        expect(yield* rawCredentials(telegram.account)).not.toContain(TelegramFake.botToken)
        expect(yield* rawCredentials(discord.account)).not.toContain(DiscordFake.hookToken)
        expect(yield* rawCredentials(bluesky.account)).not.toContain(BlueskyFake.appPassword)

        const platforms = yield* Platforms
        for (const connected of [telegram.account, discord.account, bluesky.account]) {
          const account = yield* reload(connected)
          const client = Option.getOrThrow(platforms.get(account.platform))
          const credentials = storedCredentials(account)
          const text = yield* client.publish({
            ...request({ platform: account.platform, credentials, main: part("hello") }),
            account
          })
          expect(text.platformPostId).not.toBe("")
          const image = yield* client.publish({
            ...request({
              platform: account.platform,
              credentials,
              main: part("with a picture", [
                media({ kind: "image", mimeType: "image/png", bytes: png, filename: "a.png" })
              ])
            }),
            account
          })
          expect(image.platformPostId).not.toBe(text.platformPostId)
          const thread = yield* client.publish({
            ...request({ platform: account.platform, credentials, main: part("1/2"), thread: [part("2/2")] }),
            account
          })
          expect(thread.platformPostId).not.toBe(image.platformPostId)
          // What the engine runs once the post is recorded: the thread's second part.
          yield* thread.followUps ?? Effect.void
        }
        expect(f.telegram.sent.map((m) => m.method)).toEqual(["sendMessage", "sendPhoto", "sendMessage", "sendMessage"])
        expect(f.telegram.sent[3]!.params["reply_parameters"]).toEqual({ message_id: f.telegram.sent[2]!.messageId })
        expect(f.discord.posted.map((m) => m.content)).toEqual(["hello", "with a picture", "1/2", "2/2"])
        expect(f.discord.posted[1]!.files).toHaveLength(1)
        const texts = f.bluesky.records.map((r) => r.record["text"])
        expect(texts).toEqual(["hello", "with a picture", "1/2", "2/2"])
        expect(f.bluesky.records[3]!.record["reply"]).toBeDefined()

        const events = yield* eventsOf(orgId)
        expect(events.map((e) => [e.type, e.data["reconnected"]])).toEqual([
          ["account.connected", false],
          ["account.connected", true],
          ["account.connected", false],
          ["account.connected", false]
        ])
      })
    ))

  it.effect("refused credentials are 400 auth_failed with the platform's reason; missing fields are validation_error", () =>
    withWorld(() =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const badToken = yield* Effect.flip(CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: "7012345678:AAH3kq-Zx8vJ_9LmN0pQrStUvWxYz999999", channel: "@herald_news" }
        }))
        expect(badToken).toBeInstanceOf(DomainError)
        expect(badToken).toMatchObject({ code: "auth_failed", status: 400, message: "Telegram: Unauthorized" })
        const notAdmin = yield* Effect.flip(CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "@lurkers" }
        }))
        expect(notAdmin).toMatchObject({ code: "auth_failed", status: 400 })
        expect((notAdmin as DomainError).message).toContain("not an administrator")
        const badPassword = yield* Effect.flip(CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "bluesky",
          input: { handle: "herald.bsky.social", app_password: "zzzz-zzzz-zzzz-zzzz" }
        }))
        expect(badPassword).toMatchObject({ code: "auth_failed", status: 400 })
        expect((badPassword as DomainError).message).not.toContain("zzzz-zzzz-zzzz-zzzz")
        const missing = yield* Effect.flip(CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "bluesky",
          input: { handle: "herald.bsky.social" }
        }))
        expect(missing).toMatchObject({ code: "validation_error" })
        expect((yield* (yield* AccountStore).list(orgId)).length).toBe(0)
        expect(yield* eventsOf(orgId)).toEqual([])
      })
    ))

  it.effect("a revoked bot token found by the dispatcher turns the account broken, needing reconnection, with the event", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "@herald_news" }
        })
        f.telegram.revoked.add(TelegramFake.botToken)
        const postId = yield* queuedPost(account, "after revocation")
        yield* Dispatcher.runOnce({ workerId: "test", leaseFor: "2 minutes" })
        const destination = yield* destinationOf(orgId, postId)
        expect(destination.status).toBe("failed")
        const after = yield* reload(account)
        expect(after.needsReconnection).toBe(true)
        const health = AccountHealth.assess(after, yield* DateTime.now)
        expect(health).toMatchObject({ status: "broken", canPost: false, needsReconnection: true })
        const events = yield* eventsOf(orgId)
        expect(events.filter((e) => e.type === "account.reconnect_needed")).toHaveLength(1)
        // Resubmitting valid credentials is how a credential platform reconnects.
        f.telegram.revoked.clear()
        const repaired = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "@herald_news" }
        })
        expect(repaired.account.id).toBe(account.id)
        expect(repaired.account.needsReconnection).toBe(false)
      })
    ))
})

describe("X connect link", () => {
  it.effect("round trip: authorize URL, consent, callback, account with encrypted tokens; again updates in place", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const link = yield* ConnectLinks.createConnectLink({ organizationId: orgId, platform: "x" })
        expect(link.expiresInSeconds).toBe(600)
        const url = new URL(link.url)
        expect(url.searchParams.get("code_challenge_method")).toBe("S256")
        expect(url.searchParams.get("redirect_uri")).toBe(`${publicUrl}/oauth/callback/x`)
        expect(url.searchParams.get("scope")).toContain("offline.access")

        const first = yield* connectX(f, orgId)
        expect(first.created).toBe(true)
        expect(first.account).toMatchObject({ platform: "x", platformAccountId: "1111", accountName: "@herald_app" })
        // X grants offline access: the connection has no expiry, so health does not warn every 2 hours.
        expect(first.account.tokenExpiresAt).toEqual(Option.none())
        expect(AccountHealth.assess(first.account, yield* DateTime.now).status).toBe("healthy")
        const stored = storedCredentials(yield* reload(first.account))
        expect(Number(stored.expires_at)).toBe(DateTime.toEpochMillis(yield* DateTime.now) + 7200 * 1000)
        expect(f.x.accessTokens.get(stored.access_token!)).toBe("1111")
        const raw = yield* rawCredentials(first.account)
        expect(raw).not.toContain(stored.access_token!)
        expect(raw).not.toContain(stored.refresh_token!)

        const second = yield* connectX(f, orgId)
        expect(second.created).toBe(false)
        expect(second.account.id).toBe(first.account.id)
        expect(f.x.counts.exchanges).toBe(2)
        const events = yield* eventsOf(orgId)
        expect(events.map((e) => e.type)).toEqual(["account.connected", "account.connected"])
        expect(events[0]!.data).toMatchObject({
          account_id: first.account.id,
          platform: "x",
          account_name: "@herald_app"
        })
      })
    ))

  it.effect("a connected X account publishes through the dispatcher with its stored token; a revoked grant turns it broken", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* connectX(f, orgId)
        const postId = yield* queuedPost(account, "hello from Herald")
        yield* Dispatcher.runOnce({ workerId: "test", leaseFor: "2 minutes" })
        const published = yield* destinationOf(orgId, postId)
        expect(published.status).toBe("published")
        expect(f.xApi.posts.map((p) => p.text)).toEqual(["hello from Herald"])
        const tweetId = f.xApi.posts[0]!.id
        expect(Option.getOrNull(published.platformPostId)).toBe(tweetId)
        expect(Option.getOrNull(published.platformPostUrl)).toBe(`https://x.com/herald_app/status/${tweetId}`)

        f.x.revoke("1111")
        const refused = yield* queuedPost(account, "after the app was removed")
        yield* Dispatcher.runOnce({ workerId: "test", leaseFor: "2 minutes" })
        expect((yield* destinationOf(orgId, refused)).status).toBe("failed")
        expect(f.xApi.posts).toHaveLength(1)
        const after = yield* reload(account)
        expect(AccountHealth.assess(after, yield* DateTime.now)).toMatchObject({
          status: "broken",
          needsReconnection: true
        })
        expect((yield* eventsOf(orgId)).filter((e) => e.type === "account.reconnect_needed")).toHaveLength(1)
      })
    ))

  it.effect("a tampered, expired or foreign state is refused before any code exchange", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const link = yield* ConnectLinks.createConnectLink({ organizationId: orgId, platform: "x" })
        const back = new URL(f.x.authorize(link.url))
        const state = back.searchParams.get("state")!
        const code = back.searchParams.get("code")!
        const callback = (s: string | undefined, platform: "x" | "linkedin" = "x") =>
          Effect.flip(
            OAuthCallback.completeCallback({ platform, state: s, code, error: undefined, errorDescription: undefined })
          )

        // Another organization's id with the original signature.
        const [payload, mac] = state.split(".") as [string, string]
        const decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
        const forged = `${Buffer.from(JSON.stringify({ ...decoded, o: randomUUID() })).toString("base64url")}.${mac}`
        expect(yield* callback(forged)).toMatchObject({ _tag: "ConnectStateError", reason: "tampered" })
        expect(yield* callback(undefined)).toMatchObject({ _tag: "ConnectStateError", reason: "malformed" })
        // A state for X presented on another platform's callback.
        expect(yield* callback(state, "linkedin")).toMatchObject({ _tag: "ConnectStateError", reason: "tampered" })

        yield* TestClock.adjust("600 seconds")
        expect(yield* callback(state)).toMatchObject({ _tag: "ConnectStateError", reason: "expired" })
        expect(f.x.counts.exchanges).toBe(0)
        expect((yield* (yield* AccountStore).list(orgId)).length).toBe(0)
      })
    ))

  it.effect("a declined consent and a refused code are 400 auth_failed; an unconfigured platform is misconfig", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const link = yield* ConnectLinks.createConnectLink({ organizationId: orgId, platform: "x" })
        const state = new URL(link.url).searchParams.get("state")!
        const declined = yield* Effect.flip(OAuthCallback.completeCallback({
          platform: "x",
          state,
          code: undefined,
          error: "access_denied",
          errorDescription: "The user denied the request"
        }))
        expect(declined).toMatchObject({ code: "auth_failed", status: 400 })
        const refused = yield* Effect.flip(OAuthCallback.completeCallback({
          platform: "x",
          state,
          code: "not-a-code",
          error: undefined,
          errorDescription: undefined
        }))
        expect(refused).toMatchObject({ code: "auth_failed", status: 400 })
        expect(f.x.counts.exchanges).toBe(1)
        const linkedin = yield* Effect.flip(
          ConnectLinks.createConnectLink({ organizationId: orgId, platform: "linkedin" })
        )
        expect(linkedin).toMatchObject({ code: "misconfig" })
        expect((linkedin as DomainError).message).toContain("HERALD_LINKEDIN_CLIENT_ID")
      })
    ))
})

describe("Meta connect links", () => {
  it.effect("Facebook: one login connects every granted Page as its own account, each with account.connected; again updates them in place", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const link = yield* ConnectLinks.createConnectLink({ organizationId: orgId, platform: "facebook" })
        expect(link.instructions).toContain("Each Page becomes its own account")
        f.facebook.pageSize = 2
        const first = yield* connectVia("facebook", f.facebook.authorize, orgId)
        expect(first.accounts.map((s) => [s.account.platformAccountId, s.account.accountName, s.created])).toEqual([
          ["501", "Herald News", true],
          ["502", "Herald Sports", true],
          ["503", "Herald Weather", true]
        ])
        for (const { account } of first.accounts) {
          expect(account).toMatchObject({ platform: "facebook", connectionFlow: "direct" })
          // Page tokens from a long-lived user token do not expire: nothing to warn about or renew.
          expect(account.tokenExpiresAt).toEqual(Option.none())
          expect(AccountHealth.assess(account, yield* DateTime.now).status).toBe("healthy")
          const stored = storedCredentials(yield* reload(account))
          expect(f.facebook.pageTokens.get(stored.access_token!)).toEqual({
            pageId: account.platformAccountId,
            expires: false
          })
          expect(yield* rawCredentials(account)).not.toContain(stored.access_token!)
        }
        const events = yield* eventsOf(orgId)
        expect(events.map((e) => [e.type, e.data["account_name"], e.data["reconnected"]])).toEqual([
          ["account.connected", "Herald News", false],
          ["account.connected", "Herald Sports", false],
          ["account.connected", "Herald Weather", false]
        ])
        expect(ConnectionsHttp.callbackSummary(first)).toBe(
          "Herald News on facebook is now connected. Herald Sports on facebook is now connected. " +
            "Herald Weather on facebook is now connected."
        )

        // The same person again, keeping two Pages selected: those two are updated in place.
        f.facebook.selectPages = ["501", "503"]
        const again = yield* connectVia("facebook", f.facebook.authorize, orgId)
        expect(again.accounts.map((s) => [s.account.id, s.created])).toEqual([
          [first.accounts[0].account.id, false],
          [first.accounts[2]!.account.id, false]
        ])
        expect((yield* (yield* AccountStore).list(orgId)).length).toBe(3)
        expect((yield* eventsOf(orgId)).slice(3).map((e) => [e.data["account_name"], e.data["reconnected"]])).toEqual([
          ["Herald News", true],
          ["Herald Weather", true]
        ])
      })
    ))

  it.effect("Facebook reconnect repairs the Page it is for and connects other granted Pages; without that Page, it stays broken", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        f.facebook.selectPages = ["501", "502"]
        const [news, sports] = (yield* connectVia("facebook", f.facebook.authorize, orgId)).accounts
        const broken = yield* markBroken(news.account)
        const link = yield* ConnectLinks.createReconnectLink({ organizationId: orgId, account: broken })
        expect(link.instructions).toContain("the Page Herald News")

        f.facebook.selectPages = ["501", "503"]
        const repaired = yield* connectVia("facebook", f.facebook.authorize, orgId, broken)
        expect(repaired.accounts.map((s) => [s.account.platformAccountId, s.created])).toEqual([["501", false], [
          "503",
          true
        ]])
        expect(repaired.accounts[0].account.id).toBe(news.account.id)
        expect((yield* reload(news.account)).needsReconnection).toBe(false)
        expect(ConnectionsHttp.callbackSummary(repaired)).toBe(
          "Herald News on facebook is reconnected. Herald Weather on facebook is now connected."
        )

        // Reconnecting Sports while granting only News: News is refreshed, Sports still needs reconnection.
        const brokenSports = yield* markBroken(sports!.account)
        f.facebook.selectPages = ["501"]
        const without = yield* connectVia("facebook", f.facebook.authorize, orgId, brokenSports)
        expect(without.accounts.map((s) => s.account.id)).toEqual([news.account.id])
        expect((yield* reload(sports!.account)).needsReconnection).toBe(true)
        expect(ConnectionsHttp.callbackSummary(without)).toBe(
          "Herald News on facebook was already connected and has been updated. " +
            "The account this link was for was not among those authorized and still needs reconnection."
        )
      })
    ))

  it.effect("Facebook: a login granting no Page is 400 auth_failed saying so; past the plan's allowance no Page is connected", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        f.facebook.selectPages = []
        const none = yield* Effect.flip(connectVia("facebook", f.facebook.authorize, orgId))
        expect(none).toMatchObject({ code: "auth_failed", status: 400 })
        expect((none as DomainError).message).toContain("granted no Facebook Page")

        // Three Pages on a plan that allows two accounts: all or none.
        f.facebook.selectPages = undefined
        const lite = yield* givenOrgOn("lite")
        const capped = yield* Effect.flip(connectVia("facebook", f.facebook.authorize, lite))
        expect(capped).toMatchObject({ code: "limit_reached", details: { limit: 2, plan: "lite" } })
        expect((yield* (yield* AccountStore).list(lite)).length).toBe(0)
        expect(yield* eventsOf(lite)).toEqual([])

        const declined = yield* Effect.flip(connectVia("facebook", f.facebook.decline, orgId))
        expect(declined).toMatchObject({ code: "auth_failed", status: 400 })
        expect((declined as DomainError).message).toContain("access_denied")
        expect((yield* (yield* AccountStore).list(orgId)).length).toBe(0)
      })
    ))

  it.effect("Threads: the sweep renews the long-lived token ten days before it expires, extending the connection", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const [{ account }] = (yield* connectVia("threads", f.threads.authorize, orgId)).accounts
        expect(account).toMatchObject({
          platform: "threads",
          platformAccountId: "25990011",
          accountName: "@herald.threads"
        })
        const start = DateTime.toEpochMillis(yield* DateTime.now)
        expect(Option.map(account.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(Option.some(start + 60 * 86_400_000))
        const before = storedCredentials(account)
        // No refresh token, yet not skipped: it renews itself at refresh_at.
        yield* TestClock.adjust("49 days")
        expect(yield* TokenRefresh.refreshExpiring()).toEqual({ refreshed: 0, dead: 0, deferred: 0, skipped: 0 })
        expect(AccountHealth.assess(yield* reload(account), yield* DateTime.now).status).toBe("healthy")
        yield* TestClock.adjust("1 day")
        expect(yield* TokenRefresh.refreshExpiring()).toEqual({ refreshed: 1, dead: 0, deferred: 0, skipped: 0 })
        const after = yield* reload(account)
        const renewed = storedCredentials(after)
        expect(renewed.access_token).not.toBe(before.access_token)
        expect(f.threads.tokens.get(renewed.access_token!)).toEqual({ userId: "25990011", longLived: true })
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        expect(Option.map(after.tokenExpiresAt, DateTime.toEpochMillis)).toEqual(Option.some(now + 60 * 86_400_000))
        expect(Number(renewed.refresh_at)).toBe(now + 50 * 86_400_000)
        expect(AccountHealth.assess(after, yield* DateTime.now).status).toBe("healthy")

        // A dead token: the renewal is refused and the account needs reconnection.
        f.threads.revoke("25990011")
        yield* TestClock.adjust("50 days")
        expect(yield* TokenRefresh.refreshExpiring()).toMatchObject({ refreshed: 0, dead: 1 })
        expect((yield* reload(account)).needsReconnection).toBe(true)
      })
    ))

  it.effect("an unconfigured Meta platform answers misconfig naming the variables; none says \"not available\"", () =>
    withWorld(() =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const instagram = yield* Effect.flip(
          ConnectLinks.createConnectLink({ organizationId: orgId, platform: "instagram" })
        )
        expect(instagram).toMatchObject({ code: "misconfig" })
        expect((instagram as DomainError).message).toContain(
          "HERALD_INSTAGRAM_CLIENT_ID and HERALD_INSTAGRAM_CLIENT_SECRET"
        )
        expect((instagram as DomainError).message).toContain("/oauth/callback/instagram")
        const bare = yield* ConnectionsConfig.makeProviders({}).pipe(Effect.provide(PlatformTransport.layer))
        for (const platform of ["facebook", "instagram", "threads"] as const) {
          const answer = bare.get(platform)
          expect(answer._tag).toBe("Left")
          if (answer._tag === "Left") {
            expect(answer.left).toContain(`HERALD_${platform.toUpperCase()}_CLIENT_SECRET`)
            expect(answer.left).not.toContain("not available")
          }
        }
      })
    ))
})

describe("reconnect and disconnect", () => {
  it.effect("reconnect: refused while healthy or for credential accounts; repairs in place; another profile is a new account", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* connectX(f, orgId)
        const healthy = yield* Effect.flip(ConnectLinks.createReconnectLink({ organizationId: orgId, account }))
        expect(healthy).toMatchObject({ code: "validation_error", details: { reason: "reconnection_not_needed" } })
        const telegram = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "@herald_news" }
        })
        const credential = yield* Effect.flip(
          ConnectLinks.createReconnectLink({ organizationId: orgId, account: telegram.account })
        )
        expect(credential).toMatchObject({ code: "validation_error", details: { reason: "credential_platform" } })

        // The token dies (the person revoked the app); the account is marked.
        yield* (yield* AccountStore).update(
          new SocialAccount({
            ...(yield* reload(account)),
            needsReconnection: true
          })
        )
        const broken = yield* reload(account)
        const link = yield* ConnectLinks.createReconnectLink({ organizationId: orgId, account: broken })
        expect(link).toMatchObject({
          accountId: account.id,
          platform: "x",
          accountName: "@herald_app",
          expiresInSeconds: 600
        })
        const repaired = yield* connectX(f, orgId, broken)
        expect(repaired.created).toBe(false)
        expect(repaired.account.id).toBe(account.id)
        expect((yield* reload(account)).needsReconnection).toBe(false)

        // Broken again, and this time the browser is signed in to another profile: a new account.
        yield* (yield* AccountStore).update(new SocialAccount({ ...(yield* reload(account)), needsReconnection: true }))
        f.x.signedIn = "2222"
        const other = yield* connectX(f, orgId, yield* reload(account))
        expect(other.created).toBe(true)
        expect(other.account.id).not.toBe(account.id)
        expect(other.account.accountName).toBe("@someone_else")
        expect((yield* reload(account)).needsReconnection).toBe(true)
      })
    ))

  it.effect("disconnect deletes the account and its credentials with account.disconnected; its queued post fails unsent", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "telegram",
          input: { bot_token: TelegramFake.botToken, channel: "@herald_news" }
        })
        const postId = yield* queuedPost(account, "never sent")
        yield* ConnectedAccounts.disconnect(orgId, account.id)
        expect(yield* (yield* AccountStore).findById(orgId, account.id)).toEqual(Option.none())
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT id FROM social_accounts WHERE id = ${account.id}`).toEqual([])
        const again = yield* Effect.flip(ConnectedAccounts.disconnect(orgId, account.id))
        expect(again).toMatchObject({ code: "not_found" })
        const events = yield* eventsOf(orgId)
        expect(events.at(-1)).toEqual({
          type: "account.disconnected",
          data: { account_id: account.id, platform: "telegram", account_name: "Herald News" }
        })
        const sentBefore = f.telegram.sent.length
        yield* Dispatcher.runOnce({ workerId: "test", leaseFor: "2 minutes" })
        const destination = yield* destinationOf(orgId, postId)
        expect(destination.status).toBe("failed")
        expect(Option.getOrNull(destination.error)).toContain("disconnected")
        expect(f.telegram.sent.length).toBe(sentBefore)
      })
    ))
})

describe("refresh sweep", () => {
  it.effect("renews an X token near expiry (new pair saved together); leaves fresh tokens alone", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* connectX(f, orgId)
        const before = storedCredentials(yield* reload(account))
        // Issued with 2 hours to live: nothing to do yet.
        expect(yield* TokenRefresh.refreshExpiring()).toEqual({ refreshed: 0, dead: 0, deferred: 0, skipped: 0 })
        yield* TestClock.adjust("95 minutes")
        expect(yield* TokenRefresh.refreshExpiring()).toEqual({ refreshed: 1, dead: 0, deferred: 0, skipped: 0 })
        const after = yield* reload(account)
        const renewed = storedCredentials(after)
        expect(renewed.refresh_token).not.toBe(before.refresh_token)
        expect(renewed.access_token).not.toBe(before.access_token)
        expect(f.x.refreshTokens.has(before.refresh_token!)).toBe(false)
        expect(f.x.refreshTokens.get(renewed.refresh_token!)).toBe("1111")
        // The access token's expiry schedules the next refresh; the connection itself does not expire.
        expect(Number(renewed.expires_at) - DateTime.toEpochMillis(yield* DateTime.now)).toBe(7200 * 1000)
        expect(after.tokenExpiresAt).toEqual(Option.none())
        expect(f.x.counts.refreshes).toBe(1)
      })
    ))

  it.effect("a refused refresh marks the account as needing reconnection and emits account.reconnect_needed once", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* connectX(f, orgId)
        f.x.revoke("1111")
        yield* TestClock.adjust("95 minutes")
        expect(yield* TokenRefresh.refreshExpiring()).toMatchObject({ refreshed: 0, dead: 1 })
        const after = yield* reload(account)
        expect(after.needsReconnection).toBe(true)
        expect(AccountHealth.assess(after, yield* DateTime.now)).toMatchObject({
          status: "broken",
          needsReconnection: true
        })
        // Already marked: the next sweep leaves it alone.
        expect(yield* TokenRefresh.refreshExpiring()).toMatchObject({ dead: 0 })
        const events = (yield* eventsOf(orgId)).filter((e) => e.type === "account.reconnect_needed")
        expect(events).toHaveLength(1)
        expect(events[0]!.data).toMatchObject({ account_id: account.id, platform: "x" })
        expect(String(events[0]!.data["reason"])).toContain("Value passed for the token was invalid")
      })
    ))

  it.effect("renews a Bluesky session through the client's refreshSession", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* CredentialConnect.connectWithCredentials({
          organizationId: orgId,
          platform: "bluesky",
          input: { handle: "herald.bsky.social", app_password: BlueskyFake.appPassword }
        })
        const before = storedCredentials(account)
        const now = yield* DateTime.now
        yield* (yield* AccountStore).update(
          new SocialAccount({
            ...(yield* reload(account)),
            tokenExpiresAt: Option.some(DateTime.addDuration(now, "10 minutes"))
          })
        )
        const refreshesBefore = f.bluesky.counts.refreshes
        expect(yield* TokenRefresh.refreshExpiring()).toMatchObject({ refreshed: 1 })
        expect(f.bluesky.counts.refreshes).toBe(refreshesBefore + 1)
        const after = storedCredentials(yield* reload(account))
        expect(after.refresh_jwt).not.toBe(before.refresh_jwt)
        expect(after.access_jwt).not.toBe(before.access_jwt)
      })
    ))
})

describe("X: a publish refused as auth renews the token once", () => {
  const publishAs = (account: SocialAccount, credentials: Record<string, string>, text: string) =>
    Effect.gen(function*() {
      const client = Option.getOrThrow((yield* PublishAuthRetry.decorate(["x"])).get("x"))
      return yield* client.publish({ ...request({ platform: "x", credentials, main: part(text) }), account })
    })

  it.effect("an expired token: renewed (new pair stored before the retry), the post goes out once; a stale copy uses the stored pair", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* connectX(f, orgId)
        const before = storedCredentials(yield* reload(account))
        // The access token died while the server was down; the sweep has not run yet.
        f.x.accessTokens.delete(before.access_token!)
        yield* publishAs(yield* reload(account), before, "after downtime")
        expect(f.xApi.posts.map((p) => p.text)).toEqual(["after downtime"])
        expect(f.x.counts.refreshes).toBe(1)
        const after = yield* reload(account)
        const renewed = storedCredentials(after)
        expect(renewed.access_token).not.toBe(before.access_token)
        expect(renewed.refresh_token).not.toBe(before.refresh_token)
        expect(f.x.refreshTokens.has(renewed.refresh_token!)).toBe(true)
        expect(after.needsReconnection).toBe(false)

        // A publish still holding the old pair (racing the renewal): the stored pair, no second refresh.
        yield* publishAs(after, before, "racing")
        expect(f.xApi.posts.map((p) => p.text)).toEqual(["after downtime", "racing"])
        expect(f.x.counts.refreshes).toBe(1)
      })
    ))

  it.effect("a revoked grant: one refresh, refused; the publish fails auth and the account needs reconnection", () =>
    withWorld((f) =>
      Effect.gen(function*() {
        const orgId = yield* givenOrg
        const { account } = yield* connectX(f, orgId)
        const current = yield* reload(account)
        f.x.revoke("1111")
        const error = yield* Effect.flip(publishAs(current, storedCredentials(current), "never"))
        expect(error.kind).toBe("auth")
        expect(f.x.counts.refreshes).toBe(1)
        expect(f.xApi.posts).toHaveLength(0)
        expect((yield* reload(account)).needsReconnection).toBe(true)
        expect((yield* eventsOf(orgId)).filter((e) => e.type === "account.reconnect_needed")).toHaveLength(1)
      })
    ))
})

// Keep the state module's lifetime and the link's in step.
it("links live 600 seconds", () => expect(ConnectState.lifetimeSeconds).toBe(600))
