import { describe, expect, it } from "@effect/vitest"
import type { PlatformClient, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Discord from "../../src/platforms/Discord.js"
import * as DiscordFake from "./fakes/DiscordFake.js"
import { bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => DiscordFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  const client = yield* Discord.make({ baseUrl: fake.server.url }).pipe(Effect.provide(HttpLive))
  return { fake, client: withFollowUps(client) }
})

const stored = {
  webhook_url: DiscordFake.webhookUrl,
  webhook_id: DiscordFake.hookId,
  guild_id: "111111111111111111",
  channel_id: "222222222222222222"
}

const publishFails = (client: PlatformClient, content: string) =>
  client.publish(request({ platform: "discord", credentials: stored, main: part(content) })).pipe(Effect.flip)

const expectNoSecret = (error: PublishError) => {
  expect(error.message).not.toContain(DiscordFake.hookToken)
  expect(error.message).not.toContain(DiscordFake.webhookUrl)
}

describe("Discord adapter against the webhook fake", () => {
  it("parses webhook URLs of every documented shape and rejects others", () => {
    expect(Discord.parseWebhookUrl("https://discord.com/api/webhooks/1/ab-c_D")).toEqual({ id: "1", token: "ab-c_D" })
    expect(Discord.parseWebhookUrl("https://canary.discordapp.com/api/v10/webhooks/2/t/")).toEqual({
      id: "2",
      token: "t"
    })
    expect(Discord.parseWebhookUrl("http://discord.com/api/webhooks/1/t")).toBeUndefined()
    expect(Discord.parseWebhookUrl("https://evil.example/api/webhooks/1/t")).toBeUndefined()
  })

  it.scopedLive("connect: GETs the webhook and returns its name, avatar, guild and channel", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const identity = yield* client.connectWithCredentials!({ webhook_url: `${DiscordFake.webhookUrl}/` })
      expect(identity.platformAccountId).toBe(DiscordFake.hookId)
      expect(identity.accountName).toBe("Herald Announcements")
      expect(identity.avatarUrl).toBe(`https://cdn.discordapp.com/avatars/${DiscordFake.hookId}/a1b2c3d4e5f6.png`)
      expect(identity.credentials).toEqual(stored)
      expect(fake.server.requests).toHaveLength(1)
      expect(fake.server.requests[0]!.method).toBe("GET")
      expect(fake.server.requests[0]!.path).toBe(`/api/v10/webhooks/${DiscordFake.hookId}/${DiscordFake.hookToken}`)
    }))

  it.scopedLive("connect: unknown webhook, bad token and a non-webhook URL are auth errors without the token", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const unknown = yield* client.connectWithCredentials!({
        webhook_url: `https://discord.com/api/webhooks/999/${DiscordFake.hookToken}`
      }).pipe(Effect.flip)
      expect(unknown.kind).toBe("auth")
      expect(unknown.message).toBe("Discord: Unknown Webhook (code 10015)")
      expectNoSecret(unknown)

      const badToken = "wrong-token-wrong-token-wrong-token"
      const invalid = yield* client.connectWithCredentials!({
        webhook_url: `https://discord.com/api/webhooks/${DiscordFake.hookId}/${badToken}`
      }).pipe(Effect.flip)
      expect(invalid.kind).toBe("auth")
      expect(invalid.message).toBe("Discord: Invalid Webhook Token (code 50027)")
      expect(invalid.message).not.toContain(badToken)

      const notAWebhook = yield* client.connectWithCredentials!({ webhook_url: "https://example.com/hook" })
        .pipe(Effect.flip)
      expect(notAWebhook.kind).toBe("auth")
      expect(fake.server.requests).toHaveLength(2)
    }))

  it.scopedLive("publish text: JSON with wait=true, message id and channel URL from the guild", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        request({ platform: "discord", credentials: stored, main: part("Hello 🌍") })
      )
      const id = fake.posted[0]!.id
      expect(result).toEqual({
        platformPostId: id,
        platformPostUrl: `https://discord.com/channels/111111111111111111/222222222222222222/${id}`
      })
      const received = fake.server.requests[0]!
      expect(received.method).toBe("POST")
      expect(received.query.get("wait")).toBe("true")
      expect(received.json).toEqual({ content: "Hello 🌍", allowed_mentions: { parse: [] } })
    }))

  it.scopedLive("credentials without a guild: the webhook is fetched once and the guild returned to store", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const result = yield* client.publish(request({
        platform: "discord",
        credentials: { webhook_url: DiscordFake.webhookUrl },
        main: part("hi")
      }))
      expect(result.platformPostUrl).toMatch(
        /^https:\/\/discord\.com\/channels\/111111111111111111\/222222222222222222\/\d+$/
      )
      expect(result.renewedCredentials).toEqual({ webhook_url: DiscordFake.webhookUrl, guild_id: "111111111111111111" })
    }))

  it.scopedLive("alt text: an attachment's description is its medium's alt text", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("Two pictures", [
          {
            ...media({ kind: "image", mimeType: "image/png", bytes: bytesOf(100, 1), filename: "a.png" }),
            altText: "A red kite"
          },
          media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(100, 2), filename: "b.jpg" })
        ])
      }))
      const payload = JSON.parse(String(fake.server.requests[0]!.form!.get("payload_json"))) as {
        attachments: ReadonlyArray<Record<string, unknown>>
      }
      expect(payload.attachments).toEqual([
        { id: "0", filename: "a.png", description: "A red kite" },
        { id: "1", filename: "b.jpg" }
      ])
    }))

  it.scopedLive("publish images: multipart with payload_json attachments and files[n] bytes", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const a = bytesOf(1500, 1)
      const b = bytesOf(700, 2)
      yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("Two pictures", [
          media({ kind: "image", mimeType: "image/png", bytes: a, filename: "a.png" }),
          media({ kind: "image", mimeType: "image/jpeg", bytes: b, filename: "b.jpg" })
        ])
      }))
      const received = fake.server.requests[0]!
      expect(received.headers["content-type"]).toContain("multipart/form-data")
      expect(JSON.parse(String(received.form!.get("payload_json")))).toEqual({
        content: "Two pictures",
        allowed_mentions: { parse: [] },
        attachments: [{ id: "0", filename: "a.png" }, { id: "1", filename: "b.jpg" }]
      })
      const files = fake.posted[0]!.files
      expect(files.map((f) => [f.field, f.filename])).toEqual([["files[0]", "a.png"], ["files[1]", "b.jpg"]])
      expect(files[0]!.bytes).toEqual(a)
      expect(files[1]!.bytes).toEqual(b)
    }))

  it.scopedLive("thread parts and the first comment are follow-up messages after the main post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("main"),
        thread: [part("second"), part("third")],
        settings: { firstComment: "comment" }
      }))
      expect(fake.posted.map((m) => m.content)).toEqual(["main", "second", "third", "comment"])
      expect(result.platformPostId).toBe(fake.posted[0]!.id)
    }))

  it.scopedLive("a deleted webhook during publish is kind auth", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.hook.token = "rotated-token"
      const error = yield* publishFails(client, "x")
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
    }))

  it.scopedLive("429 is rate_limit with the body's retry_after", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext(DiscordFake.rateLimited)
      const error = yield* publishFails(client, "x")
      expect(error.kind).toBe("rate_limit")
      expect(error.retryAfterSeconds).toBe(0.53)
    }))

  it.scopedLive("a 429 without a JSON body (edge ban) falls back to the Retry-After header", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext({ status: 429, headers: { "retry-after": "12", "content-type": "text/html" }, body: "<html/>" })
      const error = yield* publishFails(client, "x")
      expect(error.kind).toBe("rate_limit")
      expect(error.retryAfterSeconds).toBe(12)
    }))

  it.scopedLive("5xx is transient", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext({ status: 503, body: { message: "Service Unavailable", code: 0 } })
      const error = yield* publishFails(client, "x")
      expect(error.kind).toBe("transient")
    }))

  it.scopedLive("content over 2000 characters is too_long with Discord's field message", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const error = yield* publishFails(client, "z".repeat(2001))
      expect(error.kind).toBe("too_long")
      expect(error.message).toBe("Discord: Invalid Form Body (code 50035): content: Must be 2000 or fewer in length.")
      // Refused by the description's maxLength, as Discord refuses it.
      expect(fake.server.takeViolations()[0]!.problems.join(" ")).toContain("content must NOT have more than 2000")
    }))

  it.scopedLive("413 is kind media", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext({ status: 413, body: { message: "Request entity too large", code: 40005 } })
      const error = yield* publishFails(client, "x")
      expect(error.kind).toBe("media")
    }))

  it.scopedLive("allowed_mentions: no pings by default; settings.allowMentions widens it explicitly", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(request({ platform: "discord", credentials: stored, main: part("@everyone look") }))
      yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("@everyone look"),
        settings: { allowMentions: "all" }
      }))
      yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("<@123> look"),
        settings: { allowMentions: "users" }
      }))
      expect(fake.posted.map((m) => m.payload["allowed_mentions"])).toEqual([
        { parse: [] },
        { parse: ["users", "roles", "everyone"] },
        { parse: ["users"] }
      ])
    }))

  it("batchFiles: at most ten files and the upload cap per message, in order", () => {
    const sized = (...sizes: Array<number>) => sizes.map((size, i) => ({ i, size }))
    expect(Discord.batchFiles(sized(4, 4, 4), 10).map((b) => b.map((f) => f.i))).toEqual([[0, 1], [2]])
    expect(Discord.batchFiles(sized(...Array(12).fill(1))).map((b) => b.length)).toEqual([10, 2])
    expect(Discord.batchFiles(sized(20, 1), 10).map((b) => b.map((f) => f.i))).toEqual([[0], [1]])
    expect(Discord.batchFiles([])).toEqual([])
  })

  it.scopedLive("files over 10 MiB in total are split across messages; the text goes with the first", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const mib = 1024 * 1024
      const files = [1, 2, 3].map((n) =>
        media({ kind: "video", mimeType: "video/mp4", bytes: bytesOf(4 * mib, n), filename: `v${n}.mp4` })
      )
      const result = yield* client.publish(
        request({ platform: "discord", credentials: stored, main: part("clips", files) })
      )
      expect(fake.posted.map((m) => [m.content, m.files.map((f) => f.filename)])).toEqual([
        ["clips", ["v1.mp4", "v2.mp4"]],
        ["", ["v3.mp4"]]
      ])
      expect(result.platformPostId).toBe(fake.posted[0]!.id)
    }))

  it.scopedLive("forum channel: thread_name from settings.threadName; the rest goes into the new thread", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.hook.forum = true
      const files = Array.from(
        { length: 11 },
        (_, n) => media({ kind: "image", mimeType: "image/png", bytes: bytesOf(10, n), filename: `p${n}.png` })
      )
      const result = yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("Release notes\nmore", files),
        settings: { threadName: "Herald 2.0", firstComment: "questions below" }
      }))
      expect(fake.posted).toHaveLength(3)
      const [first, second, comment] = fake.posted
      expect(first!.payload["thread_name"]).toBe("Herald 2.0")
      expect(second!.payload["thread_name"]).toBeUndefined()
      expect(comment!.payload["thread_name"]).toBeUndefined()
      expect(second!.channelId).toBe(first!.channelId)
      expect(comment!.channelId).toBe(first!.channelId)
      expect(first!.channelId).not.toBe(fake.hook.channelId)
      expect(result.platformPostUrl).toBe(
        `https://discord.com/channels/111111111111111111/${first!.channelId}/${first!.id}`
      )
    }))

  it.scopedLive("forum channel found at publish: retried with the first line as thread_name and remembered", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.hook.forum = true
      const longLine = "L".repeat(150)
      const result = yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part(`\n  ${longLine}  \nbody`)
      }))
      expect(fake.posted).toHaveLength(1)
      expect(fake.posted[0]!.payload["thread_name"]).toBe("L".repeat(100))
      expect(result.renewedCredentials).toEqual({ ...stored, forum: "true" })

      // Remembered: the next post names its thread at once (one request, no refusal first).
      const before = fake.server.requests.length
      yield* client.publish(
        request({ platform: "discord", credentials: { ...stored, forum: "true" }, main: part("Next") })
      )
      expect(fake.server.requests.length - before).toBe(1)
      expect(fake.posted[1]!.payload["thread_name"]).toBe("Next")
    }))

  it.scopedLive("a text channel gets no thread_name", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(request({ platform: "discord", credentials: stored, main: part("Title\nbody") }))
      expect(fake.posted[0]!.payload["thread_name"]).toBeUndefined()
    }))

  it.scopedLive("every request carries User-Agent: DiscordBot ($url, $versionNumber)", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.connectWithCredentials!({ webhook_url: DiscordFake.webhookUrl })
      yield* client.publish(request({
        platform: "discord",
        credentials: stored,
        main: part("ua", [media({ kind: "image", mimeType: "image/png", bytes: bytesOf(50, 1) })])
      }))
      expect(fake.server.requests.map((r) => r.method)).toEqual(["GET", "POST"])
      for (const sent of fake.server.requests) expect(sent.headers["user-agent"]).toBe(Discord.userAgent)
      expect(Discord.userAgent).toMatch(/^DiscordBot \(https:\/\/[^,]+, \d+\.\d+\.\d+\)$/)
    }))

  it.scopedLive("the fake refuses what breaks Discord's description or its written rules", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const url = `${fake.server.url}/api/v10/webhooks/${DiscordFake.hookId}/${DiscordFake.hookToken}?wait=true`
      const post = (headers: Record<string, string>, body: string) =>
        Effect.promise(() => fetch(url, { method: "POST", headers, body }).then((r) => r.json() as Promise<unknown>))
      const json = { "content-type": "application/json" }
      // fetch's own agent, not DiscordBot (…).
      expect(yield* post(json, JSON.stringify({ content: "hi" }))).toMatchObject({ code: 50035 })
      const ua = { ...json, "user-agent": Discord.userAgent }
      // A field outside the schema's types and an attachment id that is not a snowflake string.
      expect(yield* post(ua, JSON.stringify({ content: 42 }))).toMatchObject({ code: 50035 })
      expect(yield* post(ua, JSON.stringify({ content: "hi", attachments: [{ id: 0 }] }))).toMatchObject({
        code: 50035
      })
      const violations = fake.server.takeViolations().map((v) => v.problems.join(" "))
      expect(violations).toHaveLength(3)
      expect(violations[0]).toContain("User-Agent")
      expect(violations[1]).toContain("body/content must be string")
      expect(violations[2]).toContain("body/attachments/0/id must be string")
      expect(fake.posted).toHaveLength(0)
    }))
})
