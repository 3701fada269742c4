// The dashboard shell: finds the session, shows the navigation, and renders the page the path names.
import { api, setCsrfToken, signInPath } from "./api.js"
import { notice, render, showPendingFlash } from "./ui.js"

const pages = [
  [/^\/sign-in$/, "sign-in", { public: true }],
  [/^\/set-password$/, "set-password", { public: true }],
  [/^\/(posts)?$/, "posts"],
  [/^\/posts\/([0-9a-fA-F-]{36})$/, "post"],
  [/^\/calendar$/, "calendar"],
  [/^\/compose$/, "compose"],
  [/^\/media$/, "media"],
  [/^\/approvals$/, "approvals"],
  [/^\/queue$/, "queue"],
  [/^\/campaigns$/, "campaigns"],
  [/^\/accounts$/, "accounts"],
  [/^\/developer$/, "developer"],
  [/^\/device$/, "device"],
  [/^\/team$/, "team"],
  [/^\/join$/, "join", { public: true }],
  [/^\/notifications$/, "notifications"],
  [/^\/analytics$/, "analytics"],
  [/^\/bulk$/, "bulk"]
]

const route = () => {
  for (const [pattern, name, options] of pages) {
    const match = pattern.exec(location.pathname)
    if (match) return { name, params: match.slice(1), public: options?.public === true }
  }
  return undefined
}

export const isReviewer = (session) => session?.user?.role === "owner" || session?.user?.role === "admin"

/** The pending-approvals badge (owners and admins). */
export const refreshBadge = async () => {
  const badge = document.getElementById("approvals-badge")
  try {
    const data = await api("GET", "/api/v1/posts?approval=pending&limit=1")
    const total = data?.pagination?.total ?? 0
    badge.textContent = total > 0 ? String(total) : ""
    badge.setAttribute("aria-label", `${total} pending approval${total === 1 ? "" : "s"}`)
  } catch {
    badge.textContent = ""
  }
}

/** The unread-notifications badge; the link's name says the count to a screen reader. */
export const refreshNotificationsBadge = async () => {
  const badge = document.getElementById("notifications-badge")
  try {
    const data = await api("GET", "/dashboard/api/notifications?limit=0")
    const unread = data?.unread_count ?? 0
    badge.textContent = unread > 0 ? String(unread) : ""
    badge.setAttribute("aria-label", `${unread} unread`)
  } catch {
    badge.textContent = ""
  }
}

const showChrome = (session) => {
  document.getElementById("nav").hidden = false
  document.getElementById("who").hidden = false
  document.getElementById("who-email").textContent = `${session.user.email} (${session.user.role})`
  for (const link of document.querySelectorAll("#nav a")) {
    const here = location.pathname === "/" ? "/posts" : location.pathname
    if (here === link.getAttribute("href")) link.setAttribute("aria-current", "page")
  }
  if (isReviewer(session)) {
    document.getElementById("nav-approvals").hidden = false
    document.getElementById("nav-team").hidden = false
    refreshBadge()
  }
  refreshNotificationsBadge()
  // New notifications show up while a page stays open (only the badge changes: focus stays put).
  setInterval(() => {
    if (document.visibilityState === "visible") refreshNotificationsBadge()
  }, 30_000)
  document.getElementById("sign-out").addEventListener("click", async () => {
    try {
      await api("DELETE", "/dashboard/api/session", undefined, { allowUnauthorized: true })
    } catch {
      // Signed out already: the sign-in page follows either way.
    }
    location.assign("/sign-in?reason=signed-out")
  })
}

const start = async () => {
  const found = route()
  if (found === undefined) {
    render("Not found", notice("There is no such page."))
    return
  }
  let session
  try {
    session = await api("GET", "/dashboard/api/session", undefined, { allowUnauthorized: true })
  } catch {
    session = null
  }
  if (session !== null) setCsrfToken(session.csrf_token)
  if (!found.public && session === null) {
    location.replace(signInPath())
    return
  }
  if (session !== null) {
    showChrome(session)
    // A tab coming back to the front learns at once whether its session has ended meanwhile.
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") api("GET", "/dashboard/api/session").catch(() => {})
    })
  }
  const module = await import(`./pages/${found.name}.js`)
  await module.default({ session, params: found.params })
  showPendingFlash()
}

start().catch((e) => {
  render("Something went wrong", notice(String(e?.message ?? e), "bad"))
})
