/** The sandbox platform on its own: markers, post ids and URLs per platform, latency, the journal. */
import { describe, expect, it } from "@effect/vitest"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import { SocialAccount } from "@herald/core/domain/Account"
import { AccountId, DestinationId, OrganizationId } from "@herald/core/kernel/Ids"
import { type Platform, platforms } from "@herald/core/domain/Platform"
import type { PublishRequest } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const account = (platform: Platform) =>
  new SocialAccount({
    id: AccountId.make(3),
    organizationId: OrganizationId.make("00000000-0000-4000-8000-000000000001"),
    platform,
    platformAccountId: `sandbox-${platform}`,
    accountName: `Sandbox ${platform}`,
    avatarUrl: "https://sandbox.herald.invalid/a.png",
    isActive: true,
    connectionFlow: "direct",
    needsReconnection: false,
    tokenExpiresAt: Option.none(),
    lastSuccessAt: Option.none(),
    recentFailures: 0,
    credentials: Option.none(),
    createdAt: DateTime.unsafeMake(0),
    updatedAt: DateTime.unsafeMake(0)
  })

const request = (
  platform: Platform,
  content: string,
  attempt?: number,
  thread: ReadonlyArray<string> = []
): PublishRequest => ({
  account: account(platform),
  credentials: Redacted.make({}),
  main: { content, media: [] },
  contentType: Option.none(),
  settings: {},
  thread: thread.map((t) => ({ content: t, media: [] })),
  destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000aa"),
  ...(attempt === undefined ? {} : { attempt })
})

const urlShapes: Record<Platform, RegExp> = {
  x: /^https:\/\/x\.com\/sandbox_x\/status\/\d{19}$/,
  instagram: /^https:\/\/www\.instagram\.com\/p\/[\w-]{11}\/$/,
  facebook: /^https:\/\/www\.facebook\.com\/\d{15}\/posts\/\d{16}$/,
  linkedin: /^https:\/\/www\.linkedin\.com\/feed\/update\/urn:li:share:\d{19}\/$/,
  youtube: /^https:\/\/www\.youtube\.com\/watch\?v=[\w-]{11}$/,
  tiktok: /^https:\/\/www\.tiktok\.com\/@sandbox_tiktok\/video\/\d{19}$/,
  threads: /^https:\/\/www\.threads\.net\/@sandbox_threads\/post\/[\w-]{11}$/,
  pinterest: /^https:\/\/www\.pinterest\.com\/pin\/\d{18}\/$/,
  bluesky: /^https:\/\/bsky\.app\/profile\/sandbox_bluesky\.bsky\.social\/post\/[a-z2-7]{13}$/,
  telegram: /^https:\/\/t\.me\/sandbox_telegram\/\d+$/,
  discord: /^https:\/\/discord\.com\/channels\/\d{18}\/\d{18}\/\d{19}$/
}

describe("Sandbox platform", () => {
  it.effect("publishes with a post id and URL shaped like each platform's own", () =>
    Effect.gen(function*() {
      for (const platform of platforms) {
        const result = yield* Sandbox.make(platform).publish(request(platform, "hello"))
        expect(result.platformPostUrl).toMatch(urlShapes[platform])
        expect(result.platformPostId.length).toBeGreaterThan(0)
      }
      const bluesky = yield* Sandbox.make("bluesky").publish(request("bluesky", "hi"))
      expect(bluesky.platformPostId).toMatch(/^at:\/\/did:plc:[a-z2-7]{24}\/app\.bsky\.feed\.post\/[a-z2-7]{13}$/)
    }))

  it.effect("markers: fail is permanent, auth is auth, flaky fails the first attempt only", () =>
    Effect.gen(function*() {
      const x = Sandbox.make("x")
      const fail = yield* Effect.flip(x.publish(request("x", "no [sandbox:fail]")))
      expect(fail.kind).toBe("permanent")
      // A marker in a thread part counts too.
      const auth = yield* Effect.flip(x.publish(request("x", "fine", 1, ["part [sandbox:auth]"])))
      expect(auth.kind).toBe("auth")
      const flaky = yield* Effect.flip(x.publish(request("x", "[sandbox:flaky]", 1)))
      expect(flaky.kind).toBe("transient")
      expect(flaky.retryable).toBe(true)
      yield* x.publish(request("x", "[sandbox:flaky]", 2))
      // Without an attempt number the sandbox remembers the destination itself.
      const fresh = Sandbox.make("x")
      expect((yield* Effect.flip(fresh.publish(request("x", "[sandbox:flaky]")))).kind).toBe("transient")
      yield* fresh.publish(request("x", "[sandbox:flaky]"))
    }))

  it.effect("answers after the configured latency", () =>
    Effect.gen(function*() {
      const slow = Sandbox.make("telegram", { latency: "2 seconds" })
      const fiber = yield* Effect.fork(slow.publish(request("telegram", "slow")))
      yield* TestClock.adjust("1999 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(fiber)
      expect(result.platformPostUrl).toMatch(urlShapes.telegram)
    }))

  it.effect("journals one line per send, with the outcome and post id", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-sandbox-"))
      const journal = path.join(dir, "sends.jsonl")
      const client = Sandbox.make("discord", { journal })
      const ok = yield* client.publish(request("discord", "one", 1))
      yield* Effect.flip(client.publish(request("discord", "[sandbox:fail]", 1)))
      const lines = fs.readFileSync(journal, "utf8").trim().split("\n").map((l) =>
        JSON.parse(l) as Record<string, unknown>
      )
      fs.rmSync(dir, { recursive: true, force: true })
      expect(lines.map((l) => [l.outcome, l.platformPostId ?? null, l.attempt])).toEqual([
        ["published", ok.platformPostId, 1],
        ["failed", null, 1]
      ])
      expect(lines[0]!.destinationId).toBe("00000000-0000-4000-8000-0000000000aa")
    }))

  it.effect("the scoped sandbox opens its ledger and journal once, on their first line, and closes them with its scope", () =>
    Effect.gen(function*() {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "herald-sandbox-")))
      const ledger = path.join(dir, "ledger.jsonl")
      const journal = path.join(dir, "sends.jsonl")
      // This process's descriptors open on `file`.
      const openOn = (file: string) =>
        fs.readdirSync("/proc/self/fd").filter((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`) === file
          } catch {
            return false
          }
        }).length
      const scope = yield* Scope.make()
      const clients = yield* Scope.extend(Sandbox.makeAllScoped({ ledger, journal }), scope)
      const client = (platform: Platform) => clients.find((c) => c.platform === platform)!
      // Nothing written yet: no file created.
      expect([fs.existsSync(ledger), fs.existsSync(journal)]).toEqual([false, false])
      const one = yield* client("x").publish(request("x", "one", 1))
      // Each line is in the file when the publish returns.
      expect(Sandbox.readLedger(ledger).map((e) => e.platformPostId)).toEqual([one.platformPostId])
      const two = yield* client("telegram").publish(request("telegram", "two", 1))
      yield* Effect.flip(client("x").publish(request("x", `three ${Sandbox.markers.fail}`, 2)))
      expect(Sandbox.readLedger(ledger).map((e) => e.platformPostId)).toEqual([one.platformPostId, two.platformPostId])
      const lines = fs.readFileSync(journal, "utf8").split("\n")
      expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { outcome: string }).outcome)).toEqual([
        "published",
        "published",
        "failed"
      ])
      expect(lines.at(-1)).toBe("")
      // One descriptor per file, shared by every platform's client, for the life of the scope.
      expect([openOn(ledger), openOn(journal)]).toEqual([1, 1])
      yield* Scope.close(scope, Exit.void)
      expect([openOn(ledger), openOn(journal)]).toEqual([0, 0])
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it("metrics are plausible and stable for a post", () => {
    const a = Sandbox.fakeMetrics("123")
    expect(Sandbox.fakeMetrics("123")).toEqual(a)
    expect(a.impressions).toBeGreaterThanOrEqual(a.views)
  })
})

describe("Sandbox findPublished", () => {
  const lookup = (platform: Platform, attempt: number) => ({
    account: account(platform),
    credentials: Redacted.make({}),
    destinationId: DestinationId.make("00000000-0000-4000-8000-0000000000aa"),
    attempt,
    content: "hello",
    since: DateTime.unsafeMake(0),
    until: DateTime.unsafeMake(1)
  })

  it.effect("with a shared ledger any process's sandbox answers found or absent, per platform and attempt", () =>
    Effect.gen(function*() {
      const ledger = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "herald-ledger-")), "ledger.jsonl")
      const publisher = Sandbox.make("x", { ledger })
      // Another process: its own sandbox instance, the same ledger file.
      const other = Sandbox.make("x", { ledger })
      expect(yield* other.findPublished!(lookup("x", 1))).toEqual({ _tag: "Absent" })
      const sent = yield* publisher.publish(request("x", "hello", 1))
      const found = { _tag: "Found", platformPostId: sent.platformPostId, platformPostUrl: sent.platformPostUrl }
      expect(yield* other.findPublished!(lookup("x", 1))).toEqual(found)
      expect(yield* publisher.findPublished!(lookup("x", 1))).toEqual(found)
      // Another attempt, or the same destination id on another platform, is not that post.
      expect(yield* other.findPublished!(lookup("x", 2))).toEqual({ _tag: "Absent" })
      expect(yield* Sandbox.make("telegram", { ledger }).findPublished!(lookup("telegram", 1))).toEqual({
        _tag: "Absent"
      })
      // A refused post is not on the platform.
      yield* Effect.flip(publisher.publish(request("x", `no ${Sandbox.markers.fail}`, 2)))
      expect(yield* other.findPublished!(lookup("x", 2))).toEqual({ _tag: "Absent" })
      expect(Sandbox.readLedger(ledger).map((e) => [e.platform, e.attempt, e.platformPostId])).toEqual([
        ["x", 1, sent.platformPostId]
      ])
    }))

  it.effect("without a ledger it answers for what it published itself, and cannot tell otherwise", () =>
    Effect.gen(function*() {
      const publisher = Sandbox.make("x")
      const sent = yield* publisher.publish(request("x", "hello", 1))
      expect(yield* publisher.findPublished!(lookup("x", 1))).toMatchObject({
        _tag: "Found",
        platformPostId: sent.platformPostId
      })
      expect((yield* Sandbox.make("x").findPublished!(lookup("x", 1)))._tag).toBe("Unknown")
      expect((yield* publisher.findPublished!(lookup("x", 2)))._tag).toBe("Unknown")
    }))

  it.effect("keeps only its latest publishes in memory; an older one is asked of the ledger", () =>
    Effect.gen(function*() {
      const alone = Sandbox.make("x", { remembered: 2 })
      const ledger = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "herald-ledger-")), "ledger.jsonl")
      const ledgered = Sandbox.make("x", { remembered: 2, ledger })
      for (const attempt of [1, 2, 3]) {
        yield* alone.publish(request("x", "hello", attempt))
        yield* ledgered.publish(request("x", "hello", attempt))
      }
      // The oldest of three is forgotten: without a ledger the client can no longer tell.
      expect((yield* alone.findPublished!(lookup("x", 1)))._tag).toBe("Unknown")
      expect((yield* alone.findPublished!(lookup("x", 2)))._tag).toBe("Found")
      expect((yield* alone.findPublished!(lookup("x", 3)))._tag).toBe("Found")
      // With one, the ledger still knows it.
      expect((yield* ledgered.findPublished!(lookup("x", 1)))._tag).toBe("Found")
    }))
})
