/**
 * A Discord webhook fake: `GET|POST /api/v10/webhooks/{id}/{token}` with Discord's error bodies
 * (reference §4): 10015 unknown webhook, 50027 invalid token, 50035 invalid form body, 429 with
 * `retry_after` and the rate-limit headers, 204 without `wait=true`.
 *
 * Every request is checked against Discord's published OpenAPI description
 * (`specs/discord-openapi.json`, `ApiDescription`), and every answer conforms to its response schemas.
 * Rules the description does not carry are checked here:
 * - `User-Agent: DiscordBot ($url, $versionNumber)` on every request
 *   (https://discord.com/developers/docs/reference#user-agent);
 * - a multipart body is `payload_json` (the JSON body, validated as one) plus files named `files[n]`
 *   (https://discord.com/developers/docs/reference#uploading-files).
 */
import * as ApiDescription from "./ApiDescription.js"
import * as FakeServer from "./FakeServer.js"

export const description = () => ApiDescription.load({ file: "discord-openapi.json", basePath: "/api/v10" })

/** https://discord.com/developers/docs/reference#user-agent */
const userAgentPattern = /^DiscordBot \([^,()]+, [^,()]+\)/

/** What breaks Discord's description or its written rules in a request. */
export const problemsOf = (request: FakeServer.Recorded): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const agent = request.headers["user-agent"] ?? ""
  if (!userAgentPattern.test(agent)) {
    problems.push(`User-Agent "${agent}" is not "DiscordBot ($url, $versionNumber)"`)
  }
  const type = request.headers["content-type"] ?? ""
  if (!type.startsWith("multipart/form-data") || request.form === undefined) {
    return [...problems, ...description().problemsOf(request)]
  }
  for (const [name, value] of request.form.entries()) {
    if (name === "payload_json") {
      if (typeof value !== "string") problems.push("payload_json must be a text field")
    } else if (!/^files\[\d+\]$/.test(name) || typeof value === "string") {
      problems.push(`form field ${name}: only payload_json and files[n] file parts are allowed`)
    }
  }
  const raw = request.form.get("payload_json")
  let payload: unknown
  try {
    payload = typeof raw === "string" ? JSON.parse(raw) : {}
  } catch {
    return [...problems, "payload_json is not JSON"]
  }
  const text = JSON.stringify(payload)
  return [
    ...problems,
    ...description().problemsOf({
      ...request,
      headers: { ...request.headers, "content-type": "application/json" },
      body: Buffer.from(text),
      json: payload,
      form: undefined
    }).map((p) => `payload_json: ${p}`)
  ]
}

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
  body: { message: "You are being rate limited.", code: 0, retry_after: 0.53, global: false }
}

/**
 * Discord's answer to a body its schema refuses: 50035 Invalid Form Body, the field errors keyed by
 * path as Discord nests them (a length over the limit is BASE_TYPE_MAX_LENGTH).
 */
export const invalidFormBody = (problems: ReadonlyArray<string>): FakeServer.Reply => {
  const errors: Record<string, unknown> = {}
  // The summary of a union ("must match a schema in anyOf") says nothing its branches did not.
  const specific = problems.filter((p) => !/must match (a|exactly one) schema in (anyOf|oneOf)/.test(p))
  for (const problem of new Set(specific.length > 0 ? specific : problems)) {
    const tooLong = /body\/([\w/]+) must NOT have more than (\d+) characters/.exec(problem)
    const key = tooLong?.[1]?.replace(/\//g, ".") ?? "_errors"
    const error = tooLong === null
      ? { code: "BASE_TYPE_INVALID", message: problem }
      : { code: "BASE_TYPE_MAX_LENGTH", message: `Must be ${tooLong[2]} or fewer in length.` }
    if (key === "_errors") errors["_errors"] = [...((errors["_errors"] as Array<unknown>) ?? []), error]
    else errors[key] = { _errors: [error] }
  }
  return { status: 400, body: { message: "Invalid Form Body", code: 50035, errors } }
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

    let payload: Record<string, unknown>
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
          errors: {
            content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] }
          }
        }
      }
    }
    if (content === "" && files.length === 0) {
      return { status: 400, body: { message: "Cannot send an empty message", code: 50006 } }
    }
    if (files.length > 10) {
      return { status: 400, body: { message: "Maximum number of attachments exceeded", code: 30015 } }
    }
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
        author: {
          id: hook.id,
          username: hook.name,
          avatar: hook.avatar,
          discriminator: "0000",
          public_flags: 0,
          flags: 0,
          bot: true,
          global_name: null,
          primary_guild: null
        },
        attachments: files.map((f, i) => ({
          id: String(1300000000000000000n + BigInt(i)),
          filename: f.filename,
          size: f.bytes.length,
          url: `https://cdn.discordapp.com/attachments/${channelId}/${i}/${f.filename}`,
          proxy_url: `https://media.discordapp.net/attachments/${channelId}/${i}/${f.filename}`
        })),
        embeds: [],
        mentions: [],
        mention_roles: [],
        mention_everyone: false,
        pinned: false,
        tts: false,
        flags: 0,
        components: [],
        edited_timestamp: null,
        timestamp: "2026-01-01T00:00:00.000000+00:00",
        webhook_id: hook.id
      }
    }
  }

  const server = await FakeServer.start(handler, {
    check: {
      request: problemsOf,
      refusal: invalidFormBody,
      ...(description().check.reply === undefined ? {} : { reply: description().check.reply })
    }
  })
  return { server, hook, posted, failNext: (reply) => queued.push(reply) }
}
