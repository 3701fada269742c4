import { describe, expect, it } from "@effect/vitest"
import type { PlatformClient, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Telegram from "../../src/platforms/Telegram.js"
import * as FakeServer from "./fakes/FakeServer.js"
import * as TelegramFake from "./fakes/TelegramFake.js"
import { bytesOf, HttpLive, media, part, request, withFollowUps } from "./fixtures.js"

const token = TelegramFake.botToken

const setup = Effect.gen(function*() {
  const fake = yield* Effect.acquireRelease(
    Effect.promise(() => TelegramFake.start()),
    (f) => Effect.promise(() => f.server.close())
  )
  const client = yield* Telegram.make({ baseUrl: fake.server.url }).pipe(Effect.provide(HttpLive))
  return { fake, client: withFollowUps(client) }
})

const stored = { bot_token: token, channel: "@herald_news", chat_id: "-1001234567890" }

const publishFails = (client: PlatformClient, req: Parameters<PlatformClient["publish"]>[0]) =>
  client.publish(req).pipe(Effect.flip)

const expectNoSecret = (error: PublishError) => {
  expect(error.message).not.toContain(token)
  expect(error.message).not.toContain(token.split(":")[1])
}

describe("Telegram adapter against the Bot API fake", () => {
  it.scopedLive("connect: validates token, chat and admin rights and returns the identity to store", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const identity = yield* client.connectWithCredentials!({ bot_token: token, channel: "https://t.me/herald_news" })
      expect(identity.platformAccountId).toBe("-1001234567890")
      expect(identity.accountName).toBe("Herald News")
      expect(identity.credentials).toEqual({
        bot_token: token,
        channel: "@herald_news",
        chat_id: "-1001234567890",
        bot_id: String(fake.bot.id),
        bot_username: fake.bot.username
      })
      const methods = fake.server.requests.map((r) => r.path.split("/").pop())
      expect(methods).toEqual(["getMe", "getChat", "getChatMember"])
      expect(fake.server.requests[1]!.json).toEqual({ chat_id: "@herald_news" })
      expect(fake.server.requests[2]!.json).toEqual({ chat_id: -1001234567890, user_id: fake.bot.id })
    }))

  it.scopedLive("connect: a bad token, an unknown chat and a non-admin bot are auth errors with the reason", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const badToken = "7012345678:AAH3kq-Zx8vJ_9LmN0pQrStUvWxYzWRONGxx"
      const unauthorized = yield* client.connectWithCredentials!({ bot_token: badToken, channel: "@herald_news" })
        .pipe(Effect.flip)
      expect(unauthorized.kind).toBe("auth")
      expect(unauthorized.message).toBe("Telegram: Unauthorized")
      expect(unauthorized.message).not.toContain(badToken)

      const unknownChat = yield* client.connectWithCredentials!({ bot_token: token, channel: "@nowhere" }).pipe(
        Effect.flip
      )
      expect(unknownChat.kind).toBe("auth")
      expect(unknownChat.message).toContain("chat not found")

      const member = yield* client.connectWithCredentials!({ bot_token: token, channel: "lurkers" }).pipe(Effect.flip)
      expect(member.kind).toBe("auth")
      expect(member.message).toContain("status: member")

      const noPost = yield* client.connectWithCredentials!({ bot_token: token, channel: "@readonly_admin" })
        .pipe(Effect.flip)
      expect(noPost.kind).toBe("auth")
      expect(noPost.message).toContain("right to post messages")

      const malformed = yield* client.connectWithCredentials!({ bot_token: "not a token", channel: "@herald_news" })
        .pipe(Effect.flip)
      expect(malformed.kind).toBe("auth")
    }))

  it.scopedLive("publish text: sendMessage with the chat id, returns the message id and public t.me URL", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(
        request({ platform: "telegram", credentials: stored, main: part("Hello 👋 世界") })
      )
      expect(result).toEqual({ platformPostId: "101", platformPostUrl: "https://t.me/herald_news/101" })
      const received = fake.server.requests[0]!
      expect(received.path).toBe(`/bot${token}/sendMessage`)
      expect(received.headers["content-type"]).toContain("application/json")
      expect(received.json).toEqual({ chat_id: "-1001234567890", text: "Hello 👋 世界" })
    }))

  it.scopedLive("publish to a private channel gives a t.me/c URL without the -100 prefix", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const result = yield* client.publish(
        request({
          platform: "telegram",
          credentials: { bot_token: token, chat_id: "-1009876543210" },
          main: part("hi")
        })
      )
      expect(result.platformPostUrl).toBe("https://t.me/c/9876543210/101")
    }))

  it.scopedLive("publish one image: uploads the bytes as multipart sendPhoto with the caption", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const bytes = bytesOf(2048, 1)
      const result = yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("A picture", [media({ kind: "image", mimeType: "image/png", bytes, filename: "cat.png" })])
      }))
      expect(result.platformPostId).toBe("101")
      const received = fake.server.requests[0]!
      expect(received.path).toBe(`/bot${token}/sendPhoto`)
      expect(received.headers["content-type"]).toContain("multipart/form-data")
      expect(received.form!.get("chat_id")).toBe("-1001234567890")
      expect(received.form!.get("caption")).toBe("A picture")
      expect(FakeServer.fileName(received.form, "photo")).toBe("cat.png")
      expect(yield* Effect.promise(() => FakeServer.fileBytes(received.form, "photo"))).toEqual(bytes)
    }))

  it.scopedLive("publish an image that has a public URL sends the URL instead of the bytes", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("", [
          media({
            kind: "image",
            mimeType: "image/jpeg",
            bytes: bytesOf(10, 2),
            publicUrl: "https://cdn.example/a.jpg"
          })
        ])
      }))
      expect(fake.server.requests[0]!.json).toEqual({ chat_id: "-1001234567890", photo: "https://cdn.example/a.jpg" })
    }))

  it.scopedLive("publish three media: one sendMediaGroup with attach:// parts, caption on the first item", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const a = bytesOf(300, 3)
      const b = bytesOf(400, 4)
      const c = bytesOf(500, 5)
      const result = yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("Album", [
          media({ kind: "image", mimeType: "image/jpeg", bytes: a }),
          media({ kind: "video", mimeType: "video/mp4", bytes: b }),
          media({ kind: "image", mimeType: "image/png", bytes: c })
        ])
      }))
      expect(result.platformPostId).toBe("101")
      const received = fake.server.requests[0]!
      expect(received.path).toBe(`/bot${token}/sendMediaGroup`)
      expect(JSON.parse(received.form!.get("media") as string)).toEqual([
        { type: "photo", media: "attach://file0", caption: "Album" },
        { type: "video", media: "attach://file1" },
        { type: "photo", media: "attach://file2" }
      ])
      expect(yield* Effect.promise(() => FakeServer.fileBytes(received.form, "file0"))).toEqual(a)
      expect(yield* Effect.promise(() => FakeServer.fileBytes(received.form, "file1"))).toEqual(b)
      expect(yield* Effect.promise(() => FakeServer.fileBytes(received.form, "file2"))).toEqual(c)
    }))

  it.scopedLive("GIFs in a media group go out after the album as sendAnimation; the album keeps the caption", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const gif = bytesOf(200, 6)
      yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("Mixed", [
          media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(300, 3) }),
          media({ kind: "image", mimeType: "image/gif", bytes: gif, filename: "loop.gif" }),
          media({ kind: "image", mimeType: "image/png", bytes: bytesOf(300, 5) })
        ])
      }))
      const paths = fake.server.requests.map((r) => r.path.split("/").pop())
      expect(paths).toEqual(["sendMediaGroup", "sendAnimation"])
      expect(JSON.parse(fake.server.requests[0]!.form!.get("media") as string)).toEqual([
        { type: "photo", media: "attach://file0", caption: "Mixed" },
        { type: "photo", media: "attach://file1" }
      ])
      const animation = fake.server.requests[1]!
      expect(animation.form!.get("caption")).toBeNull()
      expect(yield* Effect.promise(() => FakeServer.fileBytes(animation.form, "animation"))).toEqual(gif)
    }))

  it.scopedLive("one photo and a GIF: sendPhoto with the caption, then sendAnimation; two GIFs: two animations", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("Pair", [
          media({ kind: "image", mimeType: "image/gif", bytes: bytesOf(100, 1) }),
          media({ kind: "image", mimeType: "image/jpeg", bytes: bytesOf(100, 2) })
        ])
      }))
      expect(fake.server.requests.map((r) => r.path.split("/").pop())).toEqual(["sendPhoto", "sendAnimation"])
      expect(fake.server.requests[0]!.form!.get("caption")).toBe("Pair")
      expect(result.platformPostId).toBe("101")

      yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("Gifs", [
          media({ kind: "image", mimeType: "image/gif", bytes: bytesOf(100, 3) }),
          media({ kind: "image", mimeType: "image/gif", bytes: bytesOf(100, 4) })
        ])
      }))
      const later = fake.server.requests.slice(2)
      expect(later.map((r) => r.path.split("/").pop())).toEqual(["sendAnimation", "sendAnimation"])
      expect(later[0]!.form!.get("caption")).toBe("Gifs")
      expect(later[1]!.form!.get("caption")).toBeNull()
    }))

  it("splits more than ten media into groups of two to ten", () => {
    expect(Telegram.groupSizes(3)).toEqual([3])
    expect(Telegram.groupSizes(11)).toEqual([6, 5])
    expect(Telegram.groupSizes(21)).toEqual([7, 7, 7])
  })

  it.scopedLive("thread parts reply to the previous message, the first comment to the main post", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const result = yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("1/3"),
        thread: [part("2/3"), part("3/3")],
        settings: { firstComment: "Comments welcome" }
      }))
      expect(result.platformPostId).toBe("101")
      const bodies = fake.server.requests.map((r) => r.json)
      expect(bodies).toEqual([
        { chat_id: "-1001234567890", text: "1/3" },
        { chat_id: "-1001234567890", text: "2/3", reply_parameters: { message_id: 101 } },
        { chat_id: "-1001234567890", text: "3/3", reply_parameters: { message_id: 102 } },
        { chat_id: "-1001234567890", text: "Comments welcome", reply_parameters: { message_id: 101 } }
      ])
    }))

  it.scopedLive("a failed thread part after the main post is logged without the token, and publish succeeds", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => logs.push(String(message)))
      fake.failWhen = (_method, params) =>
        params["text"] === "reply" ? TelegramFake.apiError(502, `Bad Gateway for /bot${token}/sendMessage`) : undefined
      const result = yield* client.publish(request({
        platform: "telegram",
        credentials: stored,
        main: part("main"),
        thread: [part("reply"), part("never sent")]
      })).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      expect(result.platformPostId).toBe("101")
      expect(fake.server.requests).toHaveLength(2)
      expect(logs.some((l) => l.includes("thread part not published"))).toBe(true)
      expect(logs.join("\n")).not.toContain(token)
      expect(logs.join("\n")).toContain("[redacted]")
    }))

  it.scopedLive("a revoked token is kind auth and the message never carries the token", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.revoked.add(token)
      const error = yield* publishFails(client, request({ platform: "telegram", credentials: stored, main: part("x") }))
      expect(error.kind).toBe("auth")
      expectNoSecret(error)
    }))

  it.scopedLive("a bot removed from the channel is kind auth with Telegram's reason", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.chats[0]!.botStatus = "kicked"
      const error = yield* publishFails(client, request({ platform: "telegram", credentials: stored, main: part("x") }))
      expect(error.kind).toBe("auth")
      expect(error.message).toBe("Telegram: Forbidden: bot is not a member of the channel chat")
    }))

  it.scopedLive("429 with parameters.retry_after is kind rate_limit with that delay", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext(
        "sendMessage",
        TelegramFake.apiError(429, "Too Many Requests: retry after 7", { retry_after: 7 })
      )
      const error = yield* publishFails(client, request({ platform: "telegram", credentials: stored, main: part("x") }))
      expect(error.kind).toBe("rate_limit")
      expect(error.retryAfterSeconds).toBe(7)
      expect(error.retryable).toBe(true)
    }))

  it.scopedLive("5xx is transient, also when the body is not JSON", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("sendMessage", { status: 502, body: "<html>Bad Gateway</html>" })
      const error = yield* publishFails(client, request({ platform: "telegram", credentials: stored, main: part("x") }))
      expect(error.kind).toBe("transient")
      fake.failNext("sendMessage", TelegramFake.apiError(500, "Internal Server Error"))
      const second = yield* publishFails(
        client,
        request({ platform: "telegram", credentials: stored, main: part("x") })
      )
      expect(second.kind).toBe("transient")
    }))

  it.scopedLive("text over 4096 characters and a caption over 1024 are too_long", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      const text = yield* publishFails(
        client,
        request({ platform: "telegram", credentials: stored, main: part("a".repeat(4097)) })
      )
      expect(text.kind).toBe("too_long")
      expect(text.message).toBe("Telegram: Bad Request: message is too long")
      const caption = yield* publishFails(
        client,
        request({
          platform: "telegram",
          credentials: stored,
          main: part("c".repeat(1025), [media({ kind: "image", mimeType: "image/png", bytes: bytesOf(10, 9) })])
        })
      )
      expect(caption.kind).toBe("too_long")
      // Both refused by the reference's lengths (text 1-4096, caption 0-1024 characters).
      expect(fake.server.takeViolations().map((v) => v.problems.join(" "))).toEqual([
        expect.stringContaining("sendMessage/text must NOT have more than 4096 characters"),
        expect.stringContaining("sendPhoto/caption must NOT have more than 1024 characters")
      ])
    }))

  it.scopedLive("a chat upgraded to a supergroup is followed once and the new chat id is returned to store", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.chats.push({
        id: -1002222222222,
        type: "supergroup",
        title: "Upgraded",
        botStatus: "administrator",
        canPostMessages: true
      })
      fake.chats.push({
        id: -3333,
        type: "group",
        title: "Old group",
        botStatus: "administrator",
        canPostMessages: true,
        migrateTo: -1002222222222
      })
      const result = yield* client.publish(
        request({ platform: "telegram", credentials: { bot_token: token, chat_id: "-3333" }, main: part("hi") })
      )
      expect(result.platformPostUrl).toBe("https://t.me/c/2222222222/101")
      expect(result.renewedCredentials).toEqual({ bot_token: token, chat_id: "-1002222222222" })
      expect(fake.server.requests.map((r) => (r.json as { chat_id: string }).chat_id)).toEqual([
        "-3333",
        "-1002222222222"
      ])
    }))

  it.scopedLive("a network failure is transient and does not leak the URL with the token", () =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(() => FakeServer.start(() => ({ status: 200 })))
      yield* Effect.promise(() => server.close())
      const client = yield* Telegram.make({ baseUrl: server.url }).pipe(Effect.provide(HttpLive))
      const error = yield* publishFails(client, request({ platform: "telegram", credentials: stored, main: part("x") }))
      expect(error.kind).toBe("transient")
      expectNoSecret(error)
      expect(error.message).not.toContain("/bot")
    }))

  it.scopedLive("an error description that echoes the token is scrubbed", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* setup
      fake.failNext("sendMessage", TelegramFake.apiError(400, `Bad Request: invalid token ${token} in request`))
      const error = yield* publishFails(client, request({ platform: "telegram", credentials: stored, main: part("x") }))
      expect(error.kind).toBe("permanent")
      expect(error.message).toBe("Telegram: Bad Request: invalid token [redacted] in request")
    }))

  it.scopedLive("the fake refuses what breaks the Bot API reference", () =>
    Effect.gen(function*() {
      const { fake } = yield* setup
      const call = (method: string, body: unknown) =>
        Effect.promise(() =>
          fetch(`${fake.server.url}/bot${token}/${method}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body)
          }).then((r) => r.json() as Promise<{ ok: boolean; description: string }>)
        )
      // A parameter the method does not have; a required one missing; a reply_parameters of the wrong type.
      expect((yield* call("sendMessage", { chat_id: "@herald_news", text: "hi", reply_to: 5 })).ok).toBe(false)
      expect((yield* call("sendPhoto", { chat_id: "@herald_news", caption: "no photo" })).ok).toBe(false)
      expect((yield* call("sendMessage", { chat_id: "@herald_news", text: "hi", reply_parameters: 5 })).ok).toBe(false)
      const problems = fake.server.takeViolations().map((v) => v.problems.join(" "))
      expect(problems[0]).toContain("must NOT have additional properties")
      expect(problems[1]).toContain("must have required property 'photo'")
      expect(problems[2]).toContain("sendMessage/reply_parameters must be object")
      expect(fake.sent).toHaveLength(0)
    }))
})
