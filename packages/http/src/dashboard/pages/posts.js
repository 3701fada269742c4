import { v1 } from "../api.js"
import { h, notice, render, status, table, time } from "../ui.js"
import { approvalStatuses, campaigns, excerpt, platforms, postStatuses } from "./shared.js"

const select = (name, label, values, current, labelOf = (v) => v.replaceAll("_", " ")) => {
  const el = h("select", { name, id: `filter-${name}` }, h("option", { value: "" }, "Any"), values.map((v) =>
    h("option", { value: String(v), selected: String(v) === current }, labelOf(v))))
  return h("div", { class: "filter" }, h("label", { for: el.id }, label), el)
}

export default async () => {
  const query = new URLSearchParams(location.search)
  const offset = Math.max(0, Number(query.get("offset") ?? 0) || 0)
  const limit = 20
  const list = await campaigns()
  const filters = h(
    "form",
    { method: "get", action: "/posts", "aria-label": "Filter posts" },
    h(
      "fieldset",
      { class: "filters" },
      h("legend", {}, "Filters"),
      select("status", "Status", postStatuses, query.get("status") ?? ""),
      select("platform", "Platform", platforms, query.get("platform") ?? ""),
      select("campaign_id", "Campaign", list.map((c) => c.id), query.get("campaign_id") ?? "", (id) => list.find((c) => c.id === id)?.name ?? String(id)),
      select("approval", "Approval", approvalStatuses, query.get("approval") ?? ""),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Apply"), h("a", { href: "/posts" }, "Clear"))
    )
  )
  const params = new URLSearchParams({ limit: String(limit), offset: String(offset) })
  for (const key of ["status", "platform", "campaign_id", "approval"]) {
    const value = query.get(key)
    if (value) params.set(key, value)
  }
  const data = await v1("GET", `/posts?${params}`)
  const posts = data.posts ?? []
  const rows = posts.map((p) =>
    h(
      "tr",
      {},
      h("td", {}, h("a", { href: `/posts/${p.id}` }, excerpt(p.content))),
      h("td", {}, status(p.status)),
      h("td", {}, p.approval_status ? status(p.approval_status) : h("span", { class: "muted" }, "—")),
      h("td", {}, [...new Set((p.destinations ?? []).map((d) => d.platform))].join(", ") || "—"),
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
  render(
    "Posts",
    h("p", {}, h("a", { href: "/compose" }, "Compose a post"), " · ", h("a", { href: "/calendar" }, "Week calendar")),
    filters,
    posts.length === 0
      ? notice("No posts match.")
      : table(["Post", "Status", "Approval", "Platforms", "Scheduled for", "Created"], rows, `${data.pagination?.total ?? posts.length} posts`),
    pager
  )
}
