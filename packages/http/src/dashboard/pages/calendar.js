import { v1 } from "../api.js"
import { h, render, zone } from "../ui.js"
import { excerpt } from "./shared.js"

const day = 86_400_000

/** Monday 00:00 in the viewer's zone of the week holding `date`. */
const weekStart = (date) => {
  const d = new Date(date.getFullYear(), date.getMonth(), date.getDate())
  const shift = (d.getDay() + 6) % 7
  d.setDate(d.getDate() - shift)
  return d
}

const isoDay = (d) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`

const clock = new Intl.DateTimeFormat(undefined, { timeStyle: "short" })
const heading = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" })

export default async () => {
  const query = new URLSearchParams(location.search)
  const asked = query.get("week")
  const start = weekStart(asked && /^\d{4}-\d{2}-\d{2}$/.test(asked) ? new Date(`${asked}T00:00:00`) : new Date())
  const days = Array.from({ length: 7 }, (_, i) => new Date(start.getFullYear(), start.getMonth(), start.getDate() + i))
  const end = new Date(start.getFullYear(), start.getMonth(), start.getDate() + 7)
  const params = new URLSearchParams({
    scheduled_after: start.toISOString(),
    scheduled_before: end.toISOString(),
    sort: "scheduled_for",
    order: "asc",
    limit: "100"
  })
  const posts = ((await v1("GET", `/posts?${params}`)).posts ?? []).filter((p) => p.scheduled_for !== null)
  const columns = days.map((d) => {
    const from = d.getTime()
    const items = posts.filter((p) => {
      const t = Date.parse(p.scheduled_for)
      return t >= from && t < new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime()
    })
    const today = isoDay(d) === isoDay(new Date())
    return h(
      "section",
      { "aria-label": heading.format(d), class: today ? "today" : "" },
      h("h2", {}, heading.format(d), today ? " (today)" : ""),
      items.length === 0
        ? h("p", { class: "muted" }, "Nothing scheduled")
        : h("ul", {}, items.map((p) => {
          const at = new Date(p.scheduled_for)
          return h(
            "li",
            {},
            h("time", { datetime: at.toISOString(), title: `UTC: ${at.toISOString()}` }, clock.format(at)),
            " ",
            h("a", { href: `/posts/${p.id}` }, excerpt(p.content, 40)),
            " ",
            h("span", { class: `status ${p.status}` }, p.status.replaceAll("_", " "))
          )
        }))
    )
  })
  const prev = new Date(start.getTime() - 7 * day + 12 * 3_600_000)
  const next = new Date(start.getTime() + 7 * day + 12 * 3_600_000)
  render(
    "Week calendar",
    h("p", { class: "muted" }, `Times in your zone (${zone()}); hover a time for its UTC instant.`),
    h(
      "nav",
      { class: "actions", "aria-label": "Weeks" },
      h("a", { href: `/calendar?week=${isoDay(prev)}` }, "Previous week"),
      h("a", { href: "/calendar" }, "This week"),
      h("a", { href: `/calendar?week=${isoDay(next)}` }, "Next week")
    ),
    h("div", { class: "week" }, columns)
  )
}
