/**
 * A Discord webhook fake: `GET|POST /api/v{n}/webhooks/{id}/{token}` with Discord's error bodies
 * (reference §4): 10015 unknown webhook, 50027 invalid token, 50035 invalid form body, 429 with
 * `retry_after` and the rate-limit headers, 204 without `wait=true`.
 */
import * as FakeServer from "./FakeServer.js"

export interface Hook {
  readonly id: string
  token: string
  readonly guildId: string
  readonly channelId: string
  readonly name: string
  readonly avatar: string | null
  /** A forum channel: a message needs `thread_name` (a new post) or `?thread_id`. */
  forum: boolean
}

/** Upload bytes one message takes on an unboosted server. */
export const maxUploadBytes = 10 * 1024 * 1024

export interface PostedMessage {
  readonly id: string
  readonly content: string
  readonly files: ReadonlyArray<{ readonly field: string; readonly filename: string; readonly bytes: Uint8Array }>
  readonly payload: Record<string, unknown>
  /** The channel (or forum thread) the message went to. */
  readonly channelId: string
}

export interface DiscordFake {
  readonly server: FakeServer.FakeServer
  readonly hook: Hook
  readonly posted: Array<PostedMessage>
  readonly failNext: (reply: FakeServer.Reply) => void
}

export const hookId = "1234567890123456789"
export const hookToken = "Xk2-fake_WebhookToken-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"
export const webhookUrl = `https://discord.com/api/webhooks/${hookId}/${hookToken}`

export const rateLimited: FakeServer.Reply = {
  status: 429,
  headers: {
    "retry-after": "1",
    "x-ratelimit-limit": "5",
    "x-ratelimit-remaining": "0",
    "x-ratelimit-reset": "1767225601.530",
    "x-ratelimit-reset-after": "0.530",
    "x-ratelimit-bucket": "abcd1234",
    "x-ratelimit-scope": "shared"
  },
  body: { message: "You are being rate limited.", retry_after: 0.53, global: false }
}

export const start = async (): Promise<DiscordFake> => {
  const hook: Hook = {
    id: hookId,
    token: hookToken,
    guildId: "111111111111111111",
    channelId: "222222222222222222",
    name: "Herald Announcements",
    avatar: "a1b2c3d4e5f6",
    forum: false
  }
  const posted: Array<PostedMessage> = []
  const queued: Array<FakeServer.Reply> = []
  let nextId = 900000000000000000n

  const handler = async (request: FakeServer.Recorded): Promise<FakeServer.Reply> => {
    const match = /^\/api(?:\/v\d+)?\/webhooks\/(\d+)\/([\w-]+)$/.exec(request.path)
    if (match === null) return { status: 404, body: { message: "404: Not Found", code: 0 } }
    const [, id, token] = match as unknown as [string, string, string]
    if (id !== hook.id) return { status: 404, body: { message: "Unknown Webhook", code: 10015 } }
    if (token !== hook.token) return { status: 401, body: { message: "Invalid Webhook Token", code: 50027 } }
    const injected = queued.shift()
    if (injected !== undefined) return injected
    if (request.method === "GET") {
      return {
        status: 200,
        body: {
          application_id: null,
          avatar: hook.avatar,
          channel_id: hook.channelId,
          guild_id: hook.guildId,
          id: hook.id,
          name: hook.name,
          type: 1,
          token: hook.token,
          url: `https://discord.com/api/webhooks/${hook.id}/${hook.token}`
        }
      }
    }
    if (request.method !== "POST") return { status: 405, body: { message: "405: Method Not Allowed", code: 0 } }

    let payload: Record<string, unknown> = {}
    const files: Array<{ field: string; filename: string; bytes: Uint8Array }> = []
    if (request.form !== undefined) {
      payload = JSON.parse(String(request.form.get("payload_json") ?? "{}"))
      for (const [field, value] of request.form.entries()) {
        if (field.startsWith("files[") && typeof value !== "string") {
          files.push({ field, filename: (value as File).name, bytes: new Uint8Array(await value.arrayBuffer()) })
        }
      }
    } else {
      payload = (request.json ?? {}) as Record<string, unknown>
    }
    const content = typeof payload["content"] === "string" ? payload["content"] : ""
    if (content.length > 2000) {
      return {
        status: 400,
        body: {
          message: "Invalid Form Body",
          code: 50035,
          errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } }
        }
      }
    }
    if (content === "" && files.length === 0) {
      return { status: 400, body: { message: "Cannot send an empty message", code: 50006 } }
    }
    if (files.length > 10) return { status: 400, body: { message: "Maximum number of attachments exceeded", code: 30015 } }
    if (files.reduce((sum, f) => sum + f.bytes.length, 0) > maxUploadBytes) {
      return { status: 413, body: { message: "Request entity too large", code: 40005 } }
    }
    const threadId = request.query.get("thread_id")
    const threadName = payload["thread_name"]
    let channelId = hook.channelId
    if (threadId !== null) {
      channelId = threadId
    } else if (hook.forum) {
      if (typeof threadName !== "string") {
        return {
          status: 400,
          body: { message: "Webhooks posted to forum channels must have a thread_name or thread_id", code: 220001 }
        }
      }
      nextId += 1n
      channelId = String(nextId)
    } else if (threadName !== undefined) {
      return { status: 400, body: { message: "Webhooks can only create threads in forum channels", code: 220003 } }
    }
    nextId += 1n
    const message = { id: String(nextId), content, files, payload, channelId }
    posted.push(message)
    if (request.query.get("wait") !== "true") return { status: 204 }
    return {
      status: 200,
      body: {
        id: message.id,
        type: 0,
        content,
        channel_id: channelId,
        author: { id: hook.id, username: hook.name, bot: true },
        attachments: files.map((f, i) => ({ id: String(i), filename: f.filename, size: f.bytes.length })),
        embeds: [],
        timestamp: "2026-01-01T00:00:00.000000+00:00",
        webhook_id: hook.id
      }
    }
  }

  const server = await FakeServer.start(handler)
  return { server, hook, posted, failNext: (reply) => queued.push(reply) }
}
