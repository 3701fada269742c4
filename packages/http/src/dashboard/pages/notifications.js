// Notifications: what the signed-in person should know about (drafts waiting for their review, their
// drafts approved or sent back, failed posts, accounts to reconnect), newest first, unread ones marked;
// each leads to its post or to the accounts; mark one or all read.
import { api } from "../api.js"
import { refreshNotificationsBadge } from "../app.js"
import { busy, flash, h, notice, render, replace, time } from "../ui.js"

const kindNames = {
  approval_requested: "Approval requested",
  approved: "Approved",
  changes_requested: "Changes requested",
  post_failed: "Post failed",
  account_reconnect_needed: "Reconnect an account",
  comment: "Comment"
}

export default async () => {
  const out = h("div", { "aria-live": "polite" })
  const listArea = h("div", { id: "notifications" })
  const markAll = h("button", { type: "button", class: "secondary" }, "Mark all read")

  const item = (n) => {
    const unread = n.read_at === null
    const markOne = h(
      "button",
      { type: "button", class: "secondary", "aria-label": `Mark read: ${n.title}` },
      "Mark read"
    )
    markOne.hidden = !unread
    markOne.addEventListener("click", () =>
      busy(null, out, async () => {
        await api("POST", "/dashboard/api/notifications/read", { ids: [n.id] })
        await refresh()
      }))
    return h(
      "li",
      { class: `notification${unread ? " unread" : ""}`, "data-kind": n.kind },
      h("p", { class: "muted" }, `${kindNames[n.kind] ?? n.kind} · `, time(n.created_at), unread ? " · unread" : ""),
      h("p", {}, h("a", { href: n.link }, n.title)),
      h("p", {}, n.body),
      h("div", { class: "actions" }, markOne)
    )
  }

  const refresh = async () => {
    const data = await api("GET", "/dashboard/api/notifications?limit=100")
    markAll.hidden = data.unread_count === 0
    replace(
      listArea,
      h(
        "p",
        { class: "muted", id: "unread-count" },
        data.unread_count === 0 ? "Nothing unread." : `${data.unread_count} unread.`
      ),
      data.data.length === 0
        ? h(
          "p",
          {},
          "No notifications yet. You are told here when a draft waits for your review, a draft of yours is reviewed, a post fails or an account needs reconnecting."
        )
        : h("ul", { class: "notifications" }, data.data.map(item))
    )
    refreshNotificationsBadge()
  }

  markAll.addEventListener("click", () =>
    busy(null, out, async () => {
      const done = await api("POST", "/dashboard/api/notifications/read", {})
      flash(`Marked ${done.marked} read.`)
      await refresh()
    }))

  try {
    await refresh()
  } catch (e) {
    render("Notifications", notice(`The notifications could not be loaded: ${e.message}`, "bad"))
    return
  }
  render("Notifications", out, h("div", { class: "actions" }, markAll), listArea)
}
