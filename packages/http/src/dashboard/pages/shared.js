// Lookups several pages share.
import { v1 } from "../api.js"

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
