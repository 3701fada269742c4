import { v1 } from "../api.js"
import { platformName } from "../errors.js"
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

/** Every post a filter matches, a page of 100 at a time (the list's largest page). */
export const fetchAll = async (filter) => {
  const posts = []
  for (let offset = 0; ; ) {
    const data = await v1("GET", `/posts?${new URLSearchParams({ ...filter, limit: "100", offset: String(offset) })}`)
    const page = data.posts ?? []
    posts.push(...page)
    if (!data.pagination?.has_more || page.length === 0) return posts
    offset += page.length
  }
}

/** When a post shows on the calendar: its scheduled time, else when it first went out, else when it was made. */
export const calendarTime = (post) => {
  if (post.scheduled_for) return Date.parse(post.scheduled_for)
  const published = (post.destinations ?? []).map((d) => d.published_at).filter(Boolean).map(Date.parse)
  return published.length > 0 ? Math.min(...published) : Date.parse(post.created_at)
}

/**
 * The posts of [from, to): those scheduled in it, those published in it (a "Publish now" post has no
 * scheduled time), and those sent at once that are still publishing or failed; each once, by time.
 */
export const postsBetween = async (from, to) => {
  const range = (name) => ({ [`${name}_after`]: from.toISOString(), [`${name}_before`]: to.toISOString() })
  const lists = await Promise.all([
    fetchAll({ ...range("scheduled"), sort: "scheduled_for", order: "asc" }),
    fetchAll({ ...range("published"), sort: "published_at", order: "asc" }),
    fetchAll({ ...range("created"), status: "publishing,failed,partially_failed", sort: "created_at", order: "asc" })
      .then((posts) => posts.filter((p) => p.scheduled_for === null))
  ])
  const byId = new Map()
  for (const post of lists.flat()) byId.set(post.id, post)
  return [...byId.values()]
    .map((post) => ({ post, at: calendarTime(post) }))
    .filter(({ at }) => at >= from.getTime() && at < to.getTime())
    .sort((a, b) => a.at - b.at)
}

const platformsOf = (post) => [...new Set((post.destinations?.length ? post.destinations : []).map((d) => d.platform))]

const entry = ({ post, at }) => {
  const when = new Date(at)
  const platforms = platformsOf(post)
  return h(
    "li",
    { class: `entry ${post.status}`, "data-post": post.id },
    h("time", { datetime: when.toISOString(), title: `UTC: ${when.toISOString()}` }, clock.format(when)),
    " ",
    h("a", { href: `/posts/${post.id}` }, excerpt(post.content, 40)),
    " ",
    h("span", { class: `status ${post.status}` }, post.status.replaceAll("_", " ")),
    platforms.length > 0 ? h("span", { class: "platforms muted" }, ` ${platforms.map(platformName).join(", ")}`) : null
  )
}

export default async () => {
  const query = new URLSearchParams(location.search)
  const asked = query.get("week")
  const start = weekStart(asked && /^\d{4}-\d{2}-\d{2}$/.test(asked) ? new Date(`${asked}T00:00:00`) : new Date())
  const days = Array.from({ length: 7 }, (_, i) => new Date(start.getFullYear(), start.getMonth(), start.getDate() + i))
  const end = new Date(start.getFullYear(), start.getMonth(), start.getDate() + 7)
  const posts = await postsBetween(start, end)
  const columns = days.map((d) => {
    const from = d.getTime()
    const to = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime()
    const items = posts.filter(({ at }) => at >= from && at < to)
    const today = isoDay(d) === isoDay(new Date())
    return h(
      "section",
      { "aria-label": heading.format(d), class: today ? "today" : "", "data-day": isoDay(d) },
      h("h2", {}, heading.format(d), today ? " (today)" : "", items.length > 0 ? h("span", { class: "muted count" }, ` · ${items.length}`) : null),
      items.length === 0 ? h("p", { class: "muted" }, "Nothing planned") : h("ul", {}, items.map(entry))
    )
  })
  const prev = new Date(start.getTime() - 7 * day + 12 * 3_600_000)
  const next = new Date(start.getTime() + 7 * day + 12 * 3_600_000)
  render(
    "Week calendar",
    h("p", { class: "muted" }, `Times in your zone (${zone()}); hover a time for its UTC instant. ${posts.length} post${posts.length === 1 ? "" : "s"} this week.`),
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
