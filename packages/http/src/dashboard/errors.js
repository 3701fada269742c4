// A refused call in the user's words: request field names ("use_queue", "settings.replySettings",
// "platform_content.x.content") become the names the pages give those fields, each problem is said
// once, and each keeps the path of the field it concerns so the page can show it there.

export const platformNames = {
  x: "X",
  instagram: "Instagram",
  facebook: "Facebook",
  linkedin: "LinkedIn",
  youtube: "YouTube",
  tiktok: "TikTok",
  threads: "Threads",
  pinterest: "Pinterest",
  bluesky: "Bluesky",
  telegram: "Telegram",
  discord: "Discord"
}

export const platformName = (platform) => platformNames[platform] ?? platform

/**
 * A setting's key as words for a label: "replySettings" -> "Reply settings", "coverImageUrl" ->
 * "Cover image URL", "boardId" -> "Board ID".
 */
export const settingLabel = (key) => {
  const words = key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[\s_]+/).map((w) => w.toLowerCase())
  const fixed = words.map((w) => (w === "url" ? "URL" : w === "id" ? "ID" : w))
  return fixed.join(" ").replace(/^./, (c) => c.toUpperCase())
}

const fieldNames = {
  content: "the text",
  account_ids: "the accounts",
  scheduled_for: "the time",
  scheduled_at: "the time",
  publish_now: "Publish now",
  use_queue: "Add to queue",
  media_ids: "the media",
  campaign_id: "the campaign",
  timezone: "the time zone",
  threadPosts: "the thread",
  bot_token: "the bot token",
  channel: "the channel",
  webhook_url: "the webhook URL",
  handle: "the handle",
  app_password: "the app password",
  email: "the email",
  password: "the password"
}

/** What the pages call the request field at `path`. */
export const fieldName = (path) => {
  const setting = /^platform_content\.(\w+)\.settings\.(\w+)$/.exec(path)
  if (setting) return `${settingLabel(setting[2]).toLowerCase()} for ${platformName(setting[1])}`
  const text = /^platform_content\.(\w+)\.content$/.exec(path)
  if (text) return `the text for ${platformName(text[1])}`
  const type = /^platform_content\.(\w+)\.contentType$/.exec(path)
  if (type) return `the content type for ${platformName(type[1])}`
  const part = /^threadPosts\.(\d+)\.content$/.exec(path)
  if (part) return `part ${Number(part[1]) + 2} of the thread`
  return fieldNames[path] ?? path.replaceAll("_", " ")
}

// API words inside messages, and the words a person uses for them.
const phrases = [
  [/^([a-z]+) requires settings\.(\w+)/, (m, p, k) => `${platformName(p)} needs the ${settingLabel(k).toLowerCase()}`],
  [/\bsend (scheduled_for|scheduled_at) instead\b/g, "pick a time instead"],
  [/POST \/posts\/\{id\}\/retry/g, "Retry"],
  [/POST \/posts\/\{id\}\/schedule/g, "Schedule"],
  [/PATCH \/posts\/\{id\}/g, "Edit"],
  [/POST \/posts/g, "Compose"],
  [/\bplatform_content\.(\w+)\.settings\.(\w+)/g, (_, p, k) => fieldName(`platform_content.${p}.settings.${k}`)],
  [/\bplatform_content\.(\w+)\.content\b/g, (_, p) => fieldName(`platform_content.${p}.content`)],
  [/\bsettings\.(\w+)/g, (_, k) => settingLabel(k).toLowerCase()],
  [/\buse_queue: true\b/g, "Add to queue"],
  [/\bpublish_now: true\b/g, "Publish now"],
  [
    /\b(use_queue|scheduled_for|scheduled_at|publish_now|account_ids|media_ids|campaign_id|threadPosts|draft: true)\b/g,
    (w) => fieldName(w.replace(": true", ""))
  ],
  [/\bgraphemes\b/g, "characters"],
  [/\bweighted characters\b/g, "characters (as X counts them)"],
  [/\butf16 units\b/g, "characters"]
]

/** A message with its API words replaced, starting with a capital and ending with a full stop. */
export const plainText = (text) => {
  let out = String(text ?? "").trim()
  for (const [pattern, words] of phrases) out = out.replace(pattern, words)
  out = out.replace(
    /^([a-z]+)( requires| needs)\b/,
    (m, p, verb) => (platformNames[p] ? `${platformNames[p]}${verb}` : m)
  )
  if (out === "") return "Something went wrong."
  out = out.charAt(0).toUpperCase() + out.slice(1)
  return /[.!?)]$/.test(out) ? out : `${out}.`
}

const unitWords = {
  graphemes: "characters",
  characters: "characters",
  utf16_units: "characters",
  bytes: "bytes",
  weighted_characters: "characters (as X counts them)"
}

/** A message for one validation problem at `path`. */
const issueMessage = (path, message) => {
  const text = String(message ?? "")
  if (new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is required`).test(text)) {
    const name = fieldName(path)
    return `Enter ${name}.`
  }
  return plainText(text)
}

/**
 * The problems of a refusal, each `{ path, message }` (`path` null when it names no field): every
 * validation problem, a text over its platform's limit under that text, a refusal naming fields
 * (`details.fields`, `details.field`) under the first; otherwise the message alone. A failure without an API error (the network)
 * says the server could not be reached.
 */
export const plainError = (error) => {
  if (error === null || error === undefined) return [{ path: null, message: "Something went wrong." }]
  if (error instanceof TypeError) {
    return [{ path: null, message: "The server could not be reached. Check the connection and try again." }]
  }
  const details = error.details ?? {}
  const issues = Array.isArray(details.validation_errors) ? details.validation_errors : []
  if (issues.length > 0) {
    const seen = new Set()
    return issues.flatMap((issue) => {
      const path = typeof issue.path === "string" && issue.path !== "" ? issue.path : null
      const message = path ? issueMessage(path, issue.message) : plainText(issue.message)
      const key = `${path}\u0000${message}`
      if (seen.has(key)) return []
      seen.add(key)
      return [{ path, message }]
    })
  }
  if (error.code === "content_too_long" && typeof details.field === "string") {
    const unit = unitWords[details.unit] ?? "characters"
    const length = `${details.length_is_minimum ? "more than " : ""}${details.length}`
    return [{
      path: details.field,
      message: `Too long for ${platformName(details.platform)}: ${length} ${unit}, at most ${details.limit}.`
    }]
  }
  const fields = Array.isArray(details.fields) ? details.fields : typeof details.field === "string" ?
    [details.field]
    : error.code === "invalid_timezone"
    ? ["timezone"]
    : []
  return [{ path: fields[0] ?? null, message: plainText(error.message) }]
}
