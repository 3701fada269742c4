/**
 * Discord through an incoming webhook (platform reference §4). The credential is the webhook URL,
 * whose last path segment is a token, so request tracing is disabled for this client and no client
 * error text reaches a `PublishError`.
 *
 * Posts go to `{origin}/api/v10/webhooks/{id}/{token}?wait=true`, which answers with the created
 * message. Webhooks cannot reply, so thread parts and the first comment are follow-up messages.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type {
  ConnectedIdentity,
  MediaRef,
  PlatformClient,
  PublishError,
  PublishPart,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as MediaBytes from "./internal/MediaBytes.js"
import {
  field,
  isRecord,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /**
   * Replaces the `https://discord.com` origin of every webhook URL (tests point it at a fake).
   * The stored webhook URL keeps its real origin.
   */
  readonly baseUrl?: string
  /** The `User-Agent` every request carries; `userAgent` unless set. */
  readonly userAgent?: string
}

export const defaultBaseUrl = "https://discord.com"

/**
 * Discord requires `User-Agent: DiscordBot ($url, $versionNumber)` naming the client library, and may
 * block other agents at its edge (https://discord.com/developers/docs/reference#user-agent).
 */
export const userAgent = "DiscordBot (https://www.npmjs.com/package/@herald/adapters, 0.1.0)"

const webhookPattern =
  /^https:\/\/(?:(?:canary|ptb)\.)?discord(?:app)?\.com\/api(?:\/v\d+)?\/webhooks\/(\d+)\/([\w-]+)$/

export interface Webhook {
  readonly id: string
  readonly token: string
}

export const parseWebhookUrl = (url: string): Webhook | undefined => {
  const match = webhookPattern.exec(url.trim().replace(/\/+$/, ""))
  return match === null ? undefined : { id: match[1]!, token: match[2]! }
}

export const messageUrl = (guildId: string | undefined, channelId: string, messageId: string): string =>
  `https://discord.com/channels/${guildId ?? "@me"}/${channelId}/${messageId}`

const maxFilesPerMessage = 10

/** Upload bytes per message on a server without boosts (reference §4 Limits: 10 MiB per request). */
export const maxBytesPerMessage = 10 * 1024 * 1024

/** A forum channel post needs a thread name (Discord: at most 100 characters). */
const maxThreadNameLength = 100

/** Discord's answer to a forum post without `thread_name` or `thread_id`. */
const forumNeedsThreadCode = 220001

/**
 * `settings.allowMentions` → `allowed_mentions.parse`. The default `none` sends `{parse: []}` so
 * that `@everyone`, `@here`, role and user mentions in a post never ping anybody unless asked for.
 */
export const allowMentionsValues = ["none", "users", "users_and_roles", "all"] as const
export const allowedMentions = (setting: unknown): { readonly parse: ReadonlyArray<string> } => {
  switch (setting) {
    case "users":
      return { parse: ["users"] }
    case "users_and_roles":
      return { parse: ["users", "roles"] }
    case "all":
      return { parse: ["users", "roles", "everyone"] }
    default:
      return { parse: [] }
  }
}

/**
 * Files grouped into messages of at most ten files and `maxBytes` upload bytes, in order. A file
 * larger than the cap on its own still goes alone (the media rules refuse it before publishing).
 */
export const batchFiles = <A extends { readonly size: number }>(
  files: ReadonlyArray<A>,
  maxBytes: number = maxBytesPerMessage
): ReadonlyArray<ReadonlyArray<A>> => {
  const batches: Array<Array<A>> = []
  let current: Array<A> = []
  let bytes = 0
  for (const file of files) {
    if (current.length > 0 && (current.length >= maxFilesPerMessage || bytes + file.size > maxBytes)) {
      batches.push(current)
      current = []
      bytes = 0
    }
    current.push(file)
    bytes += file.size
  }
  if (current.length > 0) batches.push(current)
  return batches
}

/** A forum post's title: the setting, else the first non-empty line of the text, else "Post". */
export const threadNameOf = (setting: unknown, content: string): string => {
  const explicit = typeof setting === "string" ? setting.trim() : ""
  const firstLine = content.split("\n").map((line) => line.trim()).find((line) => line !== "") ?? ""
  const name = explicit !== "" ? explicit : firstLine !== "" ? firstLine : "Post"
  return Array.from(name).slice(0, maxThreadNameLength).join("")
}

const authCodes = new Set([10015, 50027, 50013, 50001, 10003])

/** Maps a failed webhook call to the reference's error classes (§4 Errors). */
export const classify = (response: RawResponse, secrets: ReadonlyArray<string>): PublishError => {
  const code = numberField(response.body, "code")
  const platformMessage = stringField(response.body, "message") ??
    (response.status >= 500 ? `HTTP ${response.status} server error` : `HTTP ${response.status}`)
  const detail = firstFieldError(field(response.body, "errors"))
  const message = scrub(
    `Discord: ${platformMessage}${code !== undefined ? ` (code ${code})` : ""}${detail ? `: ${detail}` : ""}`,
    secrets
  )
  if (response.status === 429) {
    const retryAfter = numberField(response.body, "retry_after") ??
      secondsHeader(response.headers, "retry-after") ??
      secondsHeader(response.headers, "x-ratelimit-reset-after")
    return publishError("rate_limit", message, retryAfter)
  }
  if (response.status >= 500) return publishError("transient", message)
  if (response.status === 413 || code === 40005) return publishError("media", message)
  if (response.status === 401 || response.status === 403 || response.status === 404) {
    return publishError("auth", message)
  }
  if (code !== undefined && authCodes.has(code)) return publishError("auth", message)
  if (code === 50035) {
    const errors = JSON.stringify(field(response.body, "errors") ?? {})
    if (errors.includes("BASE_TYPE_MAX_LENGTH") || errors.includes("MAX_EMBED_SIZE_EXCEEDED")) {
      return publishError("too_long", message)
    }
    if (/"(files|attachments)"/.test(errors)) return publishError("media", message)
  }
  return publishError("permanent", message)
}

/** `content: Must be 2000 or fewer in length.` from Discord's nested `errors` object. */
const firstFieldError = (errors: unknown, path: ReadonlyArray<string> = []): string | undefined => {
  if (!isRecord(errors)) return undefined
  const list = errors["_errors"]
  if (Array.isArray(list) && list.length > 0) {
    const text = stringField(list[0], "message")
    if (text !== undefined) return path.length > 0 ? `${path.join(".")}: ${text}` : text
  }
  for (const [key, value] of Object.entries(errors)) {
    if (key === "_errors") continue
    const found = firstFieldError(value, [...path, key])
    if (found !== undefined) return found
  }
  return undefined
}

interface SentMessage {
  readonly id: string
  readonly channelId: string
}

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true).pipe(
      HttpClient.mapRequest(HttpClientRequest.setHeader("user-agent", options.userAgent ?? userAgent))
    )
    const origin = trimSlash(options.baseUrl ?? defaultBaseUrl)
    const apiUrl = (webhook: Webhook) => `${origin}/api/v10/webhooks/${webhook.id}/${webhook.token}`

    const secretsOf = (webhook: Webhook, url: string) => [url, webhook.token]

    const fetchWebhook = (webhook: Webhook, url: string) =>
      Effect.gen(function*() {
        const response = yield* send(client, HttpClientRequest.get(apiUrl(webhook)), "Discord")
        if (response.status !== 200 || !isRecord(response.body)) {
          return yield* classify(response, secretsOf(webhook, url))
        }
        return response.body
      })

    const connectWithCredentials = (
      input: Readonly<Record<string, string>>
    ): Effect.Effect<ConnectedIdentity, PublishError> =>
      Effect.gen(function*() {
        const url = (input["webhook_url"] ?? "").trim().replace(/\/+$/, "")
        const webhook = parseWebhookUrl(url)
        if (webhook === undefined) {
          return yield* publishError(
            "auth",
            "Discord: webhook_url is not a Discord webhook URL (https://discord.com/api/webhooks/{id}/{token})"
          )
        }
        const body = yield* fetchWebhook(webhook, url)
        const name = stringField(body, "name") ?? "Discord webhook"
        const avatar = stringField(body, "avatar")
        const credentials: Record<string, string> = { webhook_url: url, webhook_id: webhook.id }
        const guildId = stringField(body, "guild_id")
        const channelId = stringField(body, "channel_id")
        if (guildId !== undefined) credentials["guild_id"] = guildId
        if (channelId !== undefined) credentials["channel_id"] = channelId
        return {
          platformAccountId: webhook.id,
          accountName: name,
          avatarUrl: avatar === undefined ? "" : `https://cdn.discordapp.com/avatars/${webhook.id}/${avatar}.png`,
          credentials,
          tokenExpiresAt: Option.none()
        } satisfies ConnectedIdentity
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(request.credentials)
        const url = stored["webhook_url"] ?? ""
        const webhook = parseWebhookUrl(url)
        if (webhook === undefined) {
          return yield* publishError("auth", "Discord: the stored credentials hold no valid webhook URL")
        }
        const secrets = secretsOf(webhook, url)

        const mentions = allowedMentions(request.settings["allowMentions"])
        const threadSetting = request.settings["threadName"]
        // Known forum channels (or an explicit thread name) get `thread_name` on the first message.
        let forum = stored["forum"] === "true" || (typeof threadSetting === "string" && threadSetting.trim() !== "")
        let learnedForum = false
        /** The forum post (a thread) the main post created: later messages go into it. */
        let threadId: string | undefined

        interface Target {
          readonly threadName?: string
        }

        const executeOnce = (
          content: string,
          files: ReadonlyArray<MediaRef>,
          target: Target
        ): Effect.Effect<SentMessage | "forum_needs_thread", PublishError> =>
          Effect.gen(function*() {
            const url = `${apiUrl(webhook)}?wait=true${threadId === undefined ? "" : `&thread_id=${threadId}`}`
            const base = {
              ...(content === "" ? {} : { content }),
              allowed_mentions: mentions,
              ...(target.threadName === undefined ? {} : { thread_name: target.threadName })
            }
            let httpRequest: HttpClientRequest.HttpClientRequest
            if (files.length === 0) {
              httpRequest = HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUnsafeJson(base))
            } else {
              const payload = {
                ...base,
                // Snowflake-typed in Discord's description: the index as a string.
                attachments: files.map((file, i) => ({
                  id: String(i),
                  filename: file.filename,
                  ...descriptionOf(file)
                }))
              }
              // Files stream from the store into the form as it is sent; none is held whole.
              const form = MediaBytes.multipart([
                MediaBytes.field("payload_json", JSON.stringify(payload)),
                ...files.map((file, i) => MediaBytes.file(`files[${i}]`, file))
              ])
              httpRequest = HttpClientRequest.post(url).pipe(HttpClientRequest.setBody(form))
            }
            const response = yield* send(client, httpRequest, "Discord")
            if (
              response.status === 400 && numberField(response.body, "code") === forumNeedsThreadCode &&
              threadId === undefined && target.threadName === undefined
            ) {
              return "forum_needs_thread" as const
            }
            if (response.status < 200 || response.status >= 300) return yield* classify(response, secrets)
            const id = stringField(response.body, "id")
            const channelId = stringField(response.body, "channel_id") ?? stored["channel_id"]
            if (id === undefined || channelId === undefined) {
              return yield* publishError("transient", "Discord: unexpected response to the webhook post")
            }
            return { id, channelId }
          })

        /**
         * One message. The first message of a forum post creates the thread (`thread_name`); every
         * later one goes into it (`thread_id`). A channel that turns out to be a forum (Discord's
         * 220001) is retried once with a thread name and remembered in the credentials.
         */
        const execute = (content: string, files: ReadonlyArray<MediaRef>): Effect.Effect<SentMessage, PublishError> =>
          Effect.gen(function*() {
            const opensThread = forum && threadId === undefined
            const named: Target = { threadName: threadNameOf(threadSetting, request.main.content) }
            let sent = yield* executeOnce(content, files, opensThread ? named : {})
            if (sent === "forum_needs_thread") {
              forum = true
              learnedForum = true
              sent = yield* executeOnce(content, files, named)
            }
            if (sent === "forum_needs_thread") {
              return yield* publishError("permanent", "Discord: the forum channel refused the post")
            }
            if (forum && threadId === undefined) threadId = sent.channelId
            return sent
          })

        /**
         * A part goes out as several messages when it has more than ten files or more upload bytes
         * than one message takes; the first message carries the text and counts.
         */
        const sendPart = (part: PublishPart): Effect.Effect<SentMessage, PublishError> =>
          Effect.gen(function*() {
            const batches = batchFiles(part.media)
            const first = yield* execute(part.content, batches[0] ?? [])
            for (const batch of batches.slice(1)) yield* execute("", batch)
            return first
          })

        const main = yield* sendPart(request.main)

        const parts: Array<readonly [string, PublishPart]> = request.thread.map((p) => ["thread part", p] as const)
        const firstComment = request.settings["firstComment"]
        if (typeof firstComment === "string" && firstComment.trim() !== "") {
          parts.push(["first comment", { content: firstComment, media: [] }])
        }
        // Run by the engine once the main post is recorded, outside the publish deadline.
        const followUps = Effect.gen(function*() {
          for (const [what, part] of parts) {
            const sent = yield* Effect.either(sendPart(part))
            if (sent._tag === "Left") {
              // The main post is out: failing now would make a retry post it twice.
              yield* Effect.logWarning(
                `Discord: ${what} not published after the main post: ${sent.left.kind}: ${sent.left.message}`
              )
              break
            }
          }
        })

        let guildId: string | undefined = stored["guild_id"]
        let renewed: Record<string, string> | undefined = learnedForum ? { ...stored, forum: "true" } : undefined
        if (guildId === undefined) {
          // Older credentials lack the guild: the webhook knows it, and the link needs it.
          const body = yield* Effect.option(fetchWebhook(webhook, url))
          guildId = Option.isSome(body) ? stringField(body.value, "guild_id") : undefined
          if (guildId !== undefined) renewed = { ...(renewed ?? stored), guild_id: guildId }
        }
        const result: PublishResult = {
          platformPostId: main.id,
          platformPostUrl: messageUrl(guildId, main.channelId, main.id),
          ...(parts.length > 0 ? { followUps } : {})
        }
        return renewed === undefined ? result : { ...result, renewedCredentials: renewed }
      })

    return {
      platform: "discord",
      publish,
      connectWithCredentials,
      timeout: "2 minutes"
    } satisfies PlatformClient
  })

/** Discord's limit on an attachment's `description` (its alt text). */
export const maxAttachmentDescription = 1024

/** An attachment's `description` from the medium's alt text, when it has one. */
const descriptionOf = (file: MediaRef): { readonly description?: string } =>
  file.altText !== undefined && file.altText.trim() !== ""
    ? { description: file.altText.slice(0, maxAttachmentDescription) }
    : {}
