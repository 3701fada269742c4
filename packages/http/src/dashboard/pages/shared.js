// Lookups several pages share.
import { v1 } from "../api.js"
import { table } from "../ui.js"

export const platforms = [
  "x",
  "instagram",
  "facebook",
  "linkedin",
  "youtube",
  "tiktok",
  "threads",
  "pinterest",
  "bluesky",
  "telegram",
  "discord"
]
export const postStatuses = ["draft", "scheduled", "publishing", "published", "partially_failed", "failed"]
export const approvalStatuses = ["pending", "approved", "changes_requested"]

export const accounts = async () => (await v1("GET", "/accounts")).accounts ?? []

export const campaigns = async () => {
  try {
    return (await v1("GET", "/campaigns?limit=100")).campaigns ?? []
  } catch {
    return []
  }
}

/** "Name (platform)" of each account id. */
export const accountNames = (list) => new Map(list.map((a) => [a.id, `${a.account_name} (${a.platform})`]))

export { settingLabel } from "../errors.js"

export const excerpt = (text, n = 80) => (text.length > n ? `${text.slice(0, n - 1)}…` : text || "(no text)")

/**
 * A table that may scroll sideways (at 375 px): its scrolling wrapper is a named region in the tab
 * order, so a keyboard can scroll it and a screen reader names it.
 */
export const scrollableTable = (label, headers, rows, caption) => {
  const wrap = table(headers, rows, caption)
  wrap.setAttribute("tabindex", "0")
  wrap.setAttribute("role", "region")
  wrap.setAttribute("aria-label", label)
  return wrap
}
