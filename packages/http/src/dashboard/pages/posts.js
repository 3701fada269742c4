// The posts list with search and filters. Every filter lives in the page's URL (a reload, a bookmark
// or a shared link shows the same list) and maps to a GET /posts query parameter; the date range is
// whole days in the viewer's zone.
import { v1 } from "../api.js"
import { field, h, notice, render, status, table, time } from "../ui.js"
import {
  accountNames,
  accounts as loadAccounts,
  approvalStatuses,
  campaigns as loadCampaigns,
  excerpt,
  platforms,
  postStatuses
} from "./shared.js"
import { platformName } from "../errors.js"

/** The URL's filter names, in the order the form shows them. */
const filterNames = ["search", "status", "platform", "account_id", "campaign_id", "approval", "date", "from", "to"]
const dateKinds = [["scheduled", "Scheduled"], ["created", "Created"], ["published", "Published"]]
const day = /^\d{4}-\d{2}-\d{2}$/

const select = (name, label, options, current) => {
  const el = h(
    "select",
    { name, id: `filter-${name}` },
    options.map(([value, text]) => h("option", { value, selected: value === current }, text))
  )
  return h("div", { class: "filter" }, h("label", { for: el.id }, label), el)
}
const any = (
  values,
  labelOf = (v) => v.replaceAll("_", " ")
) => [["", "Any"], ...values.map((v) => [String(v), labelOf(v)])]

/** Midnight starting `date` (YYYY-MM-DD) in the viewer's zone, `days` later, as an instant. */
const startOfDay = (date, days = 0) => {
  const [y, m, d] = date.split("-").map(Number)
  return new Date(y, m - 1, d + days).toISOString()
}

/** The GET /posts query the URL's filters ask for. */
export const listQuery = (query, limit, offset) => {
  const params = new URLSearchParams({ limit: String(limit), offset: String(offset) })
  for (const key of ["search", "status", "platform", "account_id", "campaign_id", "approval"]) {
    const value = query.get(key)?.trim()
    if (value) params.set(key, value)
  }
  const kind = dateKinds.some(([k]) => k === query.get("date")) ? query.get("date") : "scheduled"
  const from = query.get("from") ?? ""
  const to = query.get("to") ?? ""
  if (day.test(from)) params.set(`${kind}_after`, startOfDay(from))
  if (day.test(to)) params.set(`${kind}_before`, startOfDay(to, 1))
  if (kind !== "created" && (day.test(from) || day.test(to))) {
    params.set("sort", kind === "scheduled" ? "scheduled_for" : "published_at")
  }
  return params
}

export default async () => {
  const query = new URLSearchParams(location.search)
  const offset = Math.max(0, Number(query.get("offset") ?? 0) || 0)
  const limit = 20
  const [campaigns, accounts] = await Promise.all([loadCampaigns(), loadAccounts().catch(() => [])])
  const names = accountNames(accounts)
  const searchInput = h("input", {
    type: "search",
    name: "search",
    value: query.get("search") ?? "",
    autocomplete: "off"
  })
  const from = h("input", { type: "date", name: "from", value: query.get("from") ?? "" })
  const to = h("input", { type: "date", name: "to", value: query.get("to") ?? "" })
  const form = h(
    "form",
    {
      method: "get",
      action: "/posts",
      role: "search",
      "aria-label": "Search and filter posts",
      // Only the filters in use go into the URL.
      onsubmit: (e) => {
        e.preventDefault()
        const params = new URLSearchParams()
        for (const [key, value] of new FormData(form)) {
          if (String(value).trim() !== "") params.set(key, String(value).trim())
        }
        if (!params.has("from") && !params.has("to")) params.delete("date")
        location.assign(params.size === 0 ? "/posts" : `/posts?${params}`)
      }
    },
    h(
      "fieldset",
      { class: "filters" },
      h("legend", {}, "Search and filters"),
      h("div", { class: "filter wide" }, field("Text contains", searchInput)),
      select("status", "Status", any(postStatuses), query.get("status") ?? ""),
      select("platform", "Platform", any(platforms, platformName), query.get("platform") ?? ""),
      select(
        "account_id",
        "Account",
        any(accounts.map((a) => a.id), (id) => names.get(id)),
        query.get("account_id") ?? ""
      ),
      select(
        "campaign_id",
        "Campaign",
        any(campaigns.map((c) => c.id), (id) => {
          const c = campaigns.find((x) => x.id === id)
          return c.status === "archived" ? `${c.name} (archived)` : c.name
        }),
        query.get("campaign_id") ?? ""
      ),
      select("approval", "Approval", any(approvalStatuses), query.get("approval") ?? ""),
      select("date", "Dates", dateKinds, query.get("date") ?? "scheduled"),
      h("div", { class: "filter" }, field("From (your zone)", from)),
      h("div", { class: "filter" }, field("To (your zone)", to)),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Apply"), h("a", { href: "/posts" }, "Clear"))
    )
  )
  const data = await v1("GET", `/posts?${listQuery(query, limit, offset)}`)
  const posts = data.posts ?? []
  const rows = posts.map((p) =>
    h(
      "tr",
      {},
      h("td", {}, h("a", { href: `/posts/${p.id}` }, excerpt(p.content))),
      h("td", {}, status(p.status)),
      h("td", {}, p.approval_status ? status(p.approval_status) : h("span", { class: "muted" }, "—")),
      h("td", {}, [...new Set((p.destinations ?? []).map((d) => platformName(d.platform)))].join(", ") || "—"),
      h("td", {}, time(p.scheduled_for)),
      h("td", {}, time(p.created_at))
    )
  )
  const page = new URLSearchParams(query)
  const pager = h("nav", { "aria-label": "Pages", class: "actions" })
  if (offset > 0) {
    page.set("offset", String(Math.max(0, offset - limit)))
    pager.append(h("a", { href: `/posts?${page}` }, "Newer"))
  }
  if (data.pagination?.has_more) {
    page.set("offset", String(offset + limit))
    pager.append(h("a", { href: `/posts?${page}` }, "Older"))
  }
  const filtered = filterNames.some((k) => k !== "date" && (query.get(k) ?? "") !== "")
  const total = data.pagination?.total ?? posts.length
  render(
    "Posts",
    h("p", {}, h("a", { href: "/compose" }, "Compose a post"), " · ", h("a", { href: "/calendar" }, "Week calendar")),
    form,
    posts.length === 0
      ? notice(filtered ? "No posts match these filters." : "No posts yet.")
      : table(
        ["Post", "Status", "Approval", "Platforms", "Scheduled for", "Created"],
        rows,
        `${total} post${total === 1 ? "" : "s"}${filtered ? " match" : ""}`
      ),
    pager
  )
}
