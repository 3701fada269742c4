/**
 * Telegram through the Bot API (platform reference §3): a bot token plus a channel the bot
 * administers. Every call is `POST {baseUrl}/bot{token}/{method}`, JSON or multipart, answered with
 * `{ok, result}` or `{ok:false, error_code, description, parameters}`.
 *
 * The token sits in the URL path, so request tracing is disabled for this client and no client
 * error text ever reaches a `PublishError`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type {
  ConnectedIdentity,
  MediaRef,
  PlatformClient,
  PublishPart,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import { PublishError } from "@herald/core/platforms/Platforms"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as MediaBytes from "./internal/MediaBytes.js"
import {
  field,
  numberField,
  publishError,
  scrub,
  secondsHeader,
  send,
  stringField,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /** Bot API origin; `https://api.telegram.org` unless a fake or a local Bot API server is used. */
  readonly baseUrl?: string
}

export const defaultBaseUrl = "https://api.telegram.org"

const tokenPattern = /^\d+:[A-Za-z0-9_-]+$/

/** Telegram's limits for sending a file by URL; larger files are uploaded instead. */
const urlPhotoLimit = 5 * 1024 * 1024
const urlFileLimit = 20 * 1024 * 1024

/** A failed Bot API call, before classification. */
class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly status: number
  readonly description: string
  readonly retryAfter: number | undefined
  readonly migrateTo: string | undefined
}> {}

interface Message {
  readonly messageId: number
  readonly chatId: string
  readonly chatUsername: string | undefined
}

const readMessage = (u: unknown): Message | undefined => {
  const messageId = numberField(u, "message_id")
  const chat = field(u, "chat")
  const chatIdNumber = numberField(chat, "id")
  if (messageId === undefined || chatIdNumber === undefined) return undefined
  return { messageId, chatId: String(chatIdNumber), chatUsername: stringField(chat, "username") }
}

/**
 * `@name`, `name`, `https://t.me/name` become `@name`; a numeric chat id stays as it is.
 */
export const normalizeChannel = (channel: string): string => {
  const trimmed = channel.trim()
  if (/^-?\d+$/.test(trimmed)) return trimmed
  const name = trimmed.replace(/^https?:\/\/(www\.)?t\.me\//i, "").replace(/^@/, "").replace(/\/+$/, "")
  return `@${name}`
}

/** `https://t.me/{username}/{id}` for public chats, `https://t.me/c/{id without -100}/{id}` otherwise. */
export const messageUrl = (message: Message): string => {
  if (message.chatUsername !== undefined && message.chatUsername !== "") {
    return `https://t.me/${message.chatUsername}/${message.messageId}`
  }
  const internal = message.chatId.startsWith("-100") ? message.chatId.slice(4) : message.chatId.replace(/^-/, "")
  return `https://t.me/c/${internal}/${message.messageId}`
}

const authHints = [
  "chat not found",
  "need administrator rights",
  "not enough rights",
  "have no rights",
  "chat_admin_required",
  "bot was kicked",
  "bot is not a member",
  "bot was blocked",
  "user is deactivated",
  "chat_write_forbidden"
]
const tooLongHints = ["message is too long", "caption is too long", "message_too_long", "text is too long"]
const mediaHints = [
  "wrong file identifier",
  "failed to get http url content",
  "wrong type of the web page content",
  "wrong remote file",
  "photo_invalid_dimensions",
  "image_process_failed",
  "file is too big",
  "wrong file type",
  "photo_save_file_invalid",
  "webpage_curl_failed",
  "webpage_media_empty",
  "can't parse inputmedia",
  "there is no photo in the request",
  "invalid file http url"
]

/** Maps a failed call to the reference's error classes (§3 Errors). */
export const classify = (failure: ApiFailure, token: string): PublishError => {
  const description = scrub(failure.description, [token])
  const message = `Telegram: ${description}`
  const lower = failure.description.toLowerCase()
  if (failure.status === 429) {
    const fromText = /retry after (\d+)/i.exec(failure.description)
    return publishError("rate_limit", message, failure.retryAfter ?? (fromText ? Number(fromText[1]) : undefined))
  }
  if (failure.status >= 500) return publishError("transient", message)
  if (failure.status === 401 || failure.status === 404 || failure.status === 403) return publishError("auth", message)
  if (failure.status === 413) return publishError("media", message)
  if (tooLongHints.some((h) => lower.includes(h))) return publishError("too_long", message)
  if (authHints.some((h) => lower.includes(h))) return publishError("auth", message)
  if (mediaHints.some((h) => lower.includes(h))) return publishError("media", message)
  return publishError("permanent", message)
}

type Param = string | number | boolean | ReadonlyArray<unknown> | Readonly<Record<string, unknown>>

interface Upload {
  readonly field: string
  readonly media: MediaRef
}

const apiKind = (media: MediaRef): { readonly method: string; readonly field: string; readonly groupType: string } => {
  if (media.kind === "video") return { method: "sendVideo", field: "video", groupType: "video" }
  if (media.kind === "document") return { method: "sendDocument", field: "document", groupType: "document" }
  if (media.mimeType === "image/gif") return { method: "sendAnimation", field: "animation", groupType: "photo" }
  return { method: "sendPhoto", field: "photo", groupType: "photo" }
}

/** A medium goes by its public URL when it has one within Telegram's by-URL limits, else as an upload. */
const urlFor = (media: MediaRef): string | undefined => {
  const limit = media.kind === "image" ? urlPhotoLimit : urlFileLimit
  return Option.isSome(media.publicUrl) && media.size <= limit ? media.publicUrl.value : undefined
}

/** Splits n media into groups of 2–10 items (a media group of one is not allowed). */
export const groupSizes = (n: number): ReadonlyArray<number> => {
  if (n <= 10) return [n]
  const groups = Math.ceil(n / 10)
  const base = Math.floor(n / groups)
  return Array.from({ length: groups }, (_, i) => base + (i < n % groups ? 1 : 0))
}

export const make = (options: Options = {}): Effect.Effect<PlatformClient, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = HttpClient.withTracerDisabledWhen(yield* HttpClient.HttpClient, () => true)
    const base = trimSlash(options.baseUrl ?? defaultBaseUrl)

    const call = (
      token: string,
      method: string,
      params: Readonly<Record<string, Param | undefined>>,
      uploads: ReadonlyArray<Upload> = []
    ): Effect.Effect<unknown, ApiFailure | PublishError> =>
      Effect.gen(function*() {
        const url = `${base}/bot${token}/${method}`
        let request: HttpClientRequest.HttpClientRequest
        if (uploads.length === 0) {
          request = HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUnsafeJson(definedOnly(params)))
        } else {
          // Files stream from the store into the form as it is sent; none is held whole.
          const parts: Array<MediaBytes.Part> = []
          for (const [key, value] of Object.entries(params)) {
            if (value !== undefined) {
              parts.push(MediaBytes.field(key, typeof value === "string" ? value : JSON.stringify(value)))
            }
          }
          for (const upload of uploads) parts.push(MediaBytes.file(upload.field, upload.media))
          request = HttpClientRequest.post(url).pipe(HttpClientRequest.setBody(MediaBytes.multipart(parts)))
        }
        const response = yield* send(client, request, "Telegram")
        if (response.body !== undefined && field(response.body, "ok") === true) return field(response.body, "result")
        const parameters = field(response.body, "parameters")
        const migrate = numberField(parameters, "migrate_to_chat_id")
        return yield* new ApiFailure({
          status: numberField(response.body, "error_code") ?? response.status,
          description: stringField(response.body, "description") ??
            `HTTP ${response.status}${response.status >= 500 ? " server error" : ""}`,
          retryAfter: numberField(parameters, "retry_after") ?? secondsHeader(response.headers, "retry-after"),
          migrateTo: migrate === undefined ? undefined : String(migrate)
        })
      })

    const callClassified = (
      token: string,
      method: string,
      params: Readonly<Record<string, Param | undefined>>
    ): Effect.Effect<unknown, PublishError> =>
      call(token, method, params).pipe(
        Effect.catchTag("ApiFailure", (failure) => Effect.fail(classify(failure, token)))
      )

    const unexpected = (what: string) => publishError("transient", `Telegram: unexpected ${what} response`)

    const connectWithCredentials = (
      input: Readonly<Record<string, string>>
    ): Effect.Effect<ConnectedIdentity, PublishError> =>
      Effect.gen(function*() {
        const token = (input["bot_token"] ?? "").trim()
        const channel = (input["channel"] ?? "").trim()
        if (!tokenPattern.test(token)) {
          return yield* publishError("auth", "Telegram: bot_token is missing or is not a bot token")
        }
        if (channel === "") return yield* publishError("auth", "Telegram: channel is required")
        const chatId = normalizeChannel(channel)

        const me = yield* callClassified(token, "getMe", {})
        const botId = numberField(me, "id")
        if (botId === undefined) return yield* unexpected("getMe")
        const chat = yield* callClassified(token, "getChat", { chat_id: chatId })
        const id = numberField(chat, "id")
        if (id === undefined) return yield* unexpected("getChat")
        const type = stringField(chat, "type") ?? "unknown"
        const member = yield* callClassified(token, "getChatMember", { chat_id: id, user_id: botId })
        const status = stringField(member, "status") ?? "unknown"
        if (status !== "administrator" && status !== "creator") {
          return yield* publishError(
            "auth",
            `Telegram: the bot is not an administrator of this ${type} (status: ${status}); make it an admin`
          )
        }
        if (type === "channel" && status === "administrator" && field(member, "can_post_messages") !== true) {
          return yield* publishError(
            "auth",
            "Telegram: the bot is an administrator of this channel but lacks the right to post messages"
          )
        }
        const username = stringField(chat, "username")
        const title = stringField(chat, "title") ?? (username !== undefined ? `@${username}` : String(id))
        const credentials: Record<string, string> = {
          bot_token: token,
          channel: chatId,
          chat_id: String(id),
          bot_id: String(botId)
        }
        const botUsername = stringField(me, "username")
        if (botUsername !== undefined) credentials["bot_username"] = botUsername
        return {
          platformAccountId: String(id),
          accountName: title,
          // The chat photo is only reachable through a file URL that embeds the bot token.
          avatarUrl: "",
          credentials,
          tokenExpiresAt: Option.none()
        } satisfies ConnectedIdentity
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(request.credentials)
        const token = stored["bot_token"] ?? ""
        const initialChat = stored["chat_id"] ?? (stored["channel"] ? normalizeChannel(stored["channel"]) : "")
        if (!tokenPattern.test(token) || initialChat === "") {
          return yield* publishError("auth", "Telegram: the stored credentials lack a bot token or a chat")
        }
        const chatRef = yield* Ref.make(initialChat)

        // A chat upgraded to a supergroup answers with its new id: follow it once and keep it.
        const callInChat = (
          method: string,
          params: Readonly<Record<string, Param | undefined>>,
          uploads: ReadonlyArray<Upload>
        ): Effect.Effect<unknown, PublishError> =>
          Effect.gen(function*() {
            const chat = yield* Ref.get(chatRef)
            return yield* call(token, method, { chat_id: chat, ...params }, uploads)
          }).pipe(
            Effect.catchTag("ApiFailure", (failure) =>
              failure.migrateTo === undefined
                ? Effect.fail(failure)
                : Effect.zipRight(
                  Ref.set(chatRef, failure.migrateTo),
                  call(token, method, { chat_id: failure.migrateTo, ...params }, uploads)
                )),
            Effect.catchTag("ApiFailure", (failure) => Effect.fail(classify(failure, token)))
          )

        /** One medium as its own message: sendPhoto, sendVideo, sendDocument or sendAnimation. */
        const sendSingle = (
          media: MediaRef,
          caption: string | undefined,
          reply: { readonly message_id: number } | undefined
        ): Effect.Effect<Message, PublishError> =>
          Effect.gen(function*() {
            const kind = apiKind(media)
            const url = urlFor(media)
            const params: Record<string, Param | undefined> = {
              caption,
              reply_parameters: reply,
              [kind.field]: url ?? undefined,
              supports_streaming: media.kind === "video" ? true : undefined
            }
            const uploads = url === undefined ? [{ field: kind.field, media }] : []
            const result = yield* callInChat(kind.method, params, uploads)
            return yield* messageOf(result)
          })

        const sendPart = (
          part: PublishPart,
          replyTo: number | undefined
        ): Effect.Effect<Message, PublishError> =>
          Effect.gen(function*() {
            const reply = replyTo === undefined ? undefined : { message_id: replyTo }
            if (part.media.length === 0) {
              const result = yield* callInChat("sendMessage", { text: part.content, reply_parameters: reply }, [])
              return yield* messageOf(result)
            }
            if (part.media.length === 1) return yield* sendSingle(part.media[0]!, part.content || undefined, reply)
            // GIFs cannot ride in an album (Telegram would send them as stills): they go out after
            // it as animations, in order; the album (or the first medium) carries the caption.
            const isGif = (media: MediaRef) => media.kind === "image" && media.mimeType === "image/gif"
            const album = part.media.filter((media) => !isGif(media))
            const gifs = part.media.filter(isGif)
            const caption = part.content === "" ? undefined : part.content
            let first: Message | undefined
            if (album.length === 1) {
              first = yield* sendSingle(album[0]!, caption, reply)
            } else if (album.length > 1) {
              let offset = 0
              for (const size of groupSizes(album.length)) {
                const group = album.slice(offset, offset + size)
                const uploads: Array<Upload> = []
                const items = group.map((media, i) => {
                  const url = urlFor(media)
                  const name = `file${offset + i}`
                  if (url === undefined) uploads.push({ field: name, media })
                  const itemCaption = offset === 0 && i === 0 ? caption : undefined
                  return {
                    type: apiKind(media).groupType,
                    media: url ?? `attach://${name}`,
                    ...(itemCaption === undefined ? {} : { caption: itemCaption })
                  }
                })
                const result = yield* callInChat("sendMediaGroup", {
                  media: items,
                  reply_parameters: first === undefined ? reply : { message_id: first.messageId }
                }, uploads)
                const message = yield* messageOf(Array.isArray(result) ? result[0] : undefined)
                if (first === undefined) first = message
                offset += size
              }
            }
            for (const gif of gifs) {
              const message = yield* sendSingle(gif, first === undefined ? caption : undefined, reply)
              if (first === undefined) first = message
            }
            return first!
          })

        const main = yield* sendPart(request.main, undefined)
        const firstComment = request.settings["firstComment"]
        const comment = typeof firstComment === "string" && firstComment.trim() !== "" ? firstComment : undefined
        // Run by the engine once the main post is recorded, outside the publish deadline (the main
        // post already followed any chat migration, so the chat id cannot change under them).
        const followUps = Effect.gen(function*() {
          let previous = main.messageId
          for (const part of request.thread) {
            const sent = yield* sendPart(part, previous).pipe(Effect.either)
            if (sent._tag === "Left") {
              yield* logFollowUpFailure("thread part", sent.left)
              break
            }
            previous = sent.right.messageId
          }
          if (comment !== undefined) {
            const sent = yield* sendPart({ content: comment, media: [] }, main.messageId).pipe(Effect.either)
            if (sent._tag === "Left") yield* logFollowUpFailure("first comment", sent.left)
          }
        })

        const finalChat = yield* Ref.get(chatRef)
        const result: PublishResult = {
          platformPostId: String(main.messageId),
          platformPostUrl: messageUrl(main),
          ...(request.thread.length > 0 || comment !== undefined ? { followUps } : {})
        }
        return finalChat === initialChat
          ? result
          : { ...result, renewedCredentials: { ...stored, chat_id: finalChat } }
      })

    const messageOf = (u: unknown): Effect.Effect<Message, PublishError> => {
      const message = readMessage(u)
      return message === undefined ? Effect.fail(unexpected("send")) : Effect.succeed(message)
    }

    return {
      platform: "telegram",
      publish,
      connectWithCredentials,
      timeout: "2 minutes"
    } satisfies PlatformClient
  })

/**
 * Once the main post is out, a failed reply must not fail the publish: a retry would post the main
 * message twice. The failure is logged (its message is already scrubbed) and the rest is skipped.
 */
const logFollowUpFailure = (what: string, error: PublishError) =>
  Effect.logWarning(`Telegram: ${what} not published after the main post: ${error.kind}: ${error.message}`)

const definedOnly = (params: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(params)) if (value !== undefined) out[key] = value
  return out
}

/** Exposed for tests and callers that want to check a value before storing it. */
export const isBotToken = (token: string): boolean => tokenPattern.test(token)
