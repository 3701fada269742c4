/**
 * A Telegram Bot API fake: `/bot{token}/{method}` with the Bot API's envelope and error bodies
 * (reference §3). Accepts JSON and multipart; keeps the messages it created so replies to unknown
 * messages fail as Telegram's do. Every request is checked against the Bot API reference
 * (`TelegramDescription`) and every answer conforms to it.
 */
import * as FakeServer from "./FakeServer.js"
import * as TelegramDescription from "./TelegramDescription.js"

export interface Chat {
  id: number
  type: "channel" | "supergroup" | "group"
  title: string
  username?: string
  /** The bot's membership status in the chat. */
  botStatus: "creator" | "administrator" | "member" | "left" | "kicked"
  canPostMessages: boolean
  /** When set, sending to this chat answers "group chat was upgraded" with this id. */
  migrateTo?: number
}

export interface Bot {
  readonly id: number
  readonly username: string
  readonly token: string
}

export interface SentMessage {
  readonly method: string
  readonly chatId: number
  readonly messageId: number
  readonly params: Record<string, unknown>
}

export interface TelegramFake {
  readonly server: FakeServer.FakeServer
  readonly bot: Bot
  readonly chats: Array<Chat>
  readonly sent: Array<SentMessage>
  /** Tokens that now answer 401 (revoked in BotFather). */
  readonly revoked: Set<string>
  /** Replies served, in order, to the next calls of a method instead of the normal behaviour. */
  readonly failNext: (method: string, reply: FakeServer.Reply) => void
  /** A reply that replaces the normal behaviour whenever it returns one. */
  failWhen: ((method: string, params: Record<string, unknown>) => FakeServer.Reply | undefined) | undefined
}

export const botToken = "7012345678:AAH3kq-Zx8vJ_9LmN0pQrStUvWxYz123456"

const ok = (result: unknown): FakeServer.Reply => ({ status: 200, body: { ok: true, result } })
export const apiError = (
  code: number,
  description: string,
  parameters?: Record<string, unknown>
): FakeServer.Reply => ({
  status: code,
  body: { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) }
})

const params = (request: FakeServer.Recorded): Record<string, unknown> => {
  if (request.form !== undefined) {
    const out: Record<string, unknown> = {}
    request.form.forEach((value, key) => {
      if (typeof value !== "string") {
        out[key] = value
        return
      }
      try {
        out[key] = key === "chat_id" || key === "text" || key === "caption" ? value : JSON.parse(value)
      } catch {
        out[key] = value
      }
    })
    return out
  }
  const fromQuery: Record<string, unknown> = {}
  request.query.forEach((value, key) => (fromQuery[key] = value))
  return { ...fromQuery, ...(typeof request.json === "object" && request.json !== null ? request.json : {}) }
}

/** Telegram's answer to parameters the reference refuses: 400 with what is wrong, as the Bot API words it. */
const refusal = (problems: ReadonlyArray<string>): FakeServer.Reply => {
  const text = problems.join("; ")
  return /\/caption must NOT have more than/.test(text)
    ? apiError(400, "Bad Request: message caption is too long")
    : /\/text must NOT have more than/.test(text)
    ? apiError(400, "Bad Request: message is too long")
    : apiError(400, `Bad Request: ${text}`)
}

export const start = async (): Promise<TelegramFake> => {
  const bot: Bot = { id: 7012345678, username: "herald_test_bot", token: botToken }
  const chats: Array<Chat> = [
    {
      id: -1001234567890,
      type: "channel",
      title: "Herald News",
      username: "herald_news",
      botStatus: "administrator",
      canPostMessages: true
    },
    { id: -1009876543210, type: "channel", title: "Private Desk", botStatus: "administrator", canPostMessages: true },
    {
      id: -1005555555555,
      type: "channel",
      title: "Lurkers",
      username: "lurkers",
      botStatus: "member",
      canPostMessages: false
    },
    {
      id: -1006666666666,
      type: "channel",
      title: "Read Only Admin",
      username: "readonly_admin",
      botStatus: "administrator",
      canPostMessages: false
    }
  ]
  const sent: Array<SentMessage> = []
  const revoked = new Set<string>()
  const queued = new Map<string, Array<FakeServer.Reply>>()
  const nextId = new Map<number, number>()

  const findChat = (chatId: unknown): Chat | undefined => {
    const key = String(chatId)
    return chats.find((c) => String(c.id) === key || (c.username !== undefined && `@${c.username}` === key))
  }
  const chatJson = (chat: Chat) => ({
    id: chat.id,
    type: chat.type,
    title: chat.title,
    ...(chat.username ? { username: chat.username } : {})
  })

  const handler = (request: FakeServer.Recorded): FakeServer.Reply => {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.path)
    if (match === null) return apiError(404, "Not Found")
    const [, token, method] = match as unknown as [string, string, string]
    if (token !== bot.token || revoked.has(token)) return apiError(401, "Unauthorized")
    const injected = queued.get(method)?.shift()
    if (injected !== undefined) return injected
    const p = params(request)
    const override = fake.failWhen?.(method, p)
    if (override !== undefined) return override
    switch (method) {
      case "getMe":
        return ok({ id: bot.id, is_bot: true, first_name: "Herald", username: bot.username })
      case "getChat": {
        const chat = findChat(p["chat_id"])
        // ChatFullInfo: the chat and the fields the reference requires of it.
        return chat === undefined ? apiError(400, "Bad Request: chat not found") : ok({
          ...chatJson(chat),
          accent_color_id: 0,
          max_reaction_count: 11,
          accepted_gift_types: {
            unlimited_gifts: false,
            limited_gifts: false,
            unique_gifts: false,
            premium_subscription: false,
            gifts_from_channels: false
          }
        })
      }
      case "getChatMember": {
        const chat = findChat(p["chat_id"])
        if (chat === undefined) return apiError(400, "Bad Request: chat not found")
        if (Number(p["user_id"]) !== bot.id) return apiError(400, "Bad Request: user not found")
        const user = { id: bot.id, is_bot: true, first_name: "Herald" }
        // ChatMember: one shape per status (ChatMemberAdministrator, ChatMemberOwner, …).
        if (chat.botStatus === "administrator") {
          return ok({
            status: "administrator",
            user,
            can_be_edited: false,
            is_anonymous: false,
            can_manage_chat: true,
            can_delete_messages: true,
            can_manage_video_chats: false,
            can_restrict_members: false,
            can_promote_members: false,
            can_change_info: false,
            can_invite_users: true,
            can_post_stories: false,
            can_edit_stories: false,
            can_delete_stories: false,
            ...(chat.type === "channel" ? { can_post_messages: chat.canPostMessages } : {})
          })
        }
        if (chat.botStatus === "creator") return ok({ status: "creator", user, is_anonymous: false })
        if (chat.botStatus === "kicked") return ok({ status: "kicked", user, until_date: 0 })
        return ok({ status: chat.botStatus, user })
      }
      case "sendMessage":
      case "sendPhoto":
      case "sendVideo":
      case "sendDocument":
      case "sendAnimation":
      case "sendMediaGroup": {
        const chat = findChat(p["chat_id"])
        if (chat === undefined) return apiError(400, "Bad Request: chat not found")
        if (chat.migrateTo !== undefined) {
          return apiError(400, "Bad Request: group chat was upgraded to a supergroup chat", {
            migrate_to_chat_id: chat.migrateTo
          })
        }
        if (chat.botStatus === "left" || chat.botStatus === "kicked") {
          return apiError(403, "Forbidden: bot is not a member of the channel chat")
        }
        if (chat.type === "channel" && !(chat.botStatus === "administrator" && chat.canPostMessages)) {
          return apiError(400, "Bad Request: need administrator rights in the channel chat")
        }
        if (method === "sendMessage") {
          const text = typeof p["text"] === "string" ? p["text"] : ""
          if (text.length === 0) return apiError(400, "Bad Request: message text is empty")
          if (text.length > 4096) return apiError(400, "Bad Request: message is too long")
        } else if (typeof p["caption"] === "string" && p["caption"].length > 1024) {
          return apiError(400, "Bad Request: message caption is too long")
        }
        const reply = p["reply_parameters"] as { message_id?: number } | undefined
        if (reply?.message_id !== undefined) {
          const exists = sent.some((m) => m.chatId === chat.id && m.messageId === reply.message_id)
          if (!exists) return apiError(400, "Bad Request: message to be replied not found")
        }
        const count = method === "sendMediaGroup" ? (p["media"] as Array<unknown>).length : 1
        if (method === "sendMediaGroup" && (count < 2 || count > 10)) {
          return apiError(400, "Bad Request: wrong number of media specified")
        }
        if (method === "sendMediaGroup") {
          // An album takes photos, videos, documents and audio, never animations: a GIF is refused.
          for (const item of p["media"] as Array<{ type?: unknown; media?: unknown }>) {
            const name = typeof item.media === "string" && item.media.startsWith("attach://")
              ? item.media.slice("attach://".length)
              : undefined
            const file = name === undefined ? undefined : request.form?.get(name)
            const gif =
              (file !== undefined && file !== null && typeof file !== "string" && file.type === "image/gif") ||
              (typeof item.media === "string" && item.media.endsWith(".gif"))
            if (item.type === "animation" || gif) {
              return apiError(400, "Bad Request: wrong file type of the media group item")
            }
          }
        }
        const messages = Array.from({ length: count }, () => {
          const id = (nextId.get(chat.id) ?? 100) + 1
          nextId.set(chat.id, id)
          sent.push({ method, chatId: chat.id, messageId: id, params: p })
          return { message_id: id, chat: chatJson(chat), date: 1767225600 }
        })
        return ok(method === "sendMediaGroup" ? messages : messages[0])
      }
      default:
        return apiError(404, "Not Found")
    }
  }

  const server = await FakeServer.start(handler, { check: { ...TelegramDescription.load().check, refusal } })
  const fake: TelegramFake = {
    server,
    failWhen: undefined,
    bot,
    chats,
    sent,
    revoked,
    failNext: (method, reply) => {
      const list = queued.get(method) ?? []
      list.push(reply)
      queued.set(method, list)
    }
  }
  return fake
}
