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
} from "@herald/core/Platforms"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  blobOf,
  collectBytes,
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
}

export const defaultBaseUrl = "https://discord.com"

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
    const client = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
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

        const execute = (content: string, files: ReadonlyArray<MediaRef>): Effect.Effect<SentMessage, PublishError> =>
          Effect.gen(function*() {
            const target = `${apiUrl(webhook)}?wait=true`
            let httpRequest: HttpClientRequest.HttpClientRequest
            if (files.length === 0) {
              httpRequest = HttpClientRequest.post(target).pipe(HttpClientRequest.bodyUnsafeJson({ content }))
            } else {
              const form = new FormData()
              const payload = {
                ...(content === "" ? {} : { content }),
                attachments: files.map((file, i) => ({ id: i, filename: file.filename, ...descriptionOf(file) }))
              }
              form.append("payload_json", JSON.stringify(payload))
              for (const [i, file] of files.entries()) {
                const bytes = yield* collectBytes(file.bytes, `medium ${file.id}`)
                form.append(`files[${i}]`, blobOf(bytes, file.mimeType), file.filename)
              }
              httpRequest = HttpClientRequest.post(target).pipe(HttpClientRequest.bodyFormData(form))
            }
            const response = yield* send(client, httpRequest, "Discord")
            if (response.status < 200 || response.status >= 300) return yield* classify(response, secrets)
            const id = stringField(response.body, "id")
            const channelId = stringField(response.body, "channel_id") ?? stored["channel_id"]
            if (id === undefined || channelId === undefined) {
              return yield* publishError("transient", "Discord: unexpected response to the webhook post")
            }
            return { id, channelId }
          })

        /** A part with more than ten files goes out as several messages; the first one counts. */
        const sendPart = (part: PublishPart): Effect.Effect<SentMessage, PublishError> =>
          Effect.gen(function*() {
            const first = yield* execute(part.content, part.media.slice(0, maxFilesPerMessage))
            for (let i = maxFilesPerMessage; i < part.media.length; i += maxFilesPerMessage) {
              yield* execute("", part.media.slice(i, i + maxFilesPerMessage))
            }
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
        let renewed: Record<string, string> | undefined
        if (guildId === undefined) {
          // Older credentials lack the guild: the webhook knows it, and the link needs it.
          const body = yield* Effect.option(fetchWebhook(webhook, url))
          guildId = Option.isSome(body) ? stringField(body.value, "guild_id") : undefined
          if (guildId !== undefined) renewed = { ...stored, guild_id: guildId }
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
