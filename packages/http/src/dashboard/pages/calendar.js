// The calendar: a week by day, a week by hour (calendar-hours.js) or a month grid, in the viewer's
// zone. Every post of the range is fetched (by range, a page of 100 at a time), published and failed
// ones included; a post dragged to another day (or day and hour) is rescheduled there
// (calendar-moves.js). The week by hour also draws the queue's free openings (queue-slots.js).
import { v1 } from "../api.js"
import { platformBadges } from "./platform-badge.js"
import { h, render, replace, zone } from "../ui.js"
import { hourGrid } from "./calendar-hours.js"
import { enableMoves } from "./calendar-moves.js"
import { openingsBetween } from "./queue-slots.js"
import { campaigns as loadCampaigns, excerpt } from "./shared.js"

/** Monday 00:00 in the viewer's zone of the week holding `date`. */
const weekStart = (date) => {
  const d = new Date(date.getFullYear(), date.getMonth(), date.getDate())
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7))
  return d
}

const addDays = (d, n) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + n)

const isoDay = (d) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`
const isoMonth = (d) => isoDay(d).slice(0, 7)

const clock = new Intl.DateTimeFormat(undefined, { timeStyle: "short" })
const heading = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" })
const monthTitle = new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric" })
const weekdayName = new Intl.DateTimeFormat(undefined, { weekday: "short" })

/** Every post a filter matches, a page of 100 at a time (the list's largest page). */
export const fetchAll = async (filter) => {
  const posts = []
  for (let offset = 0;;) {
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
export const postsBetween = async (from, to, campaignId) => {
  const range = (name) => ({
    [`${name}_after`]: from.toISOString(),
    [`${name}_before`]: to.toISOString(),
    ...(campaignId ? { campaign_id: campaignId } : {})
  })
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

const platformsOf = (post) => [...new Set((post.destinations ?? []).map((d) => d.platform))]

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
    " ",
    platformBadges(platforms)
  )
}

const onDate = (posts, d) => {
  const from = d.getTime()
  const to = addDays(d, 1).getTime()
  return posts.filter(({ at }) => at >= from && at < to)
}

/** A link to compose a post for day `d`: 09:00 there, or the next full hour when that has passed; none for a past day. */
const composeFor = (d) => {
  const nine = new Date(d.getFullYear(), d.getMonth(), d.getDate(), 9)
  const next = new Date()
  next.setHours(next.getHours() + 1, 0, 0, 0)
  const at = nine.getTime() > Date.now() ? nine : next.getTime() < addDays(d, 1).getTime() ? next : null
  return at === null
    ? null
    : h("a", {
      class: "compose-for",
      href: `/compose?at=${encodeURIComponent(at.toISOString())}`,
      "aria-label": `Compose a post for ${heading.format(d)}`
    }, "+ Compose")
}

const weekGrid = (start, posts) =>
  h(
    "div",
    { class: "week" },
    Array.from({ length: 7 }, (_, i) => addDays(start, i)).map((d) => {
      const items = onDate(posts, d)
      const today = isoDay(d) === isoDay(new Date())
      return h(
        "section",
        { "aria-label": heading.format(d), class: today ? "today" : "", "data-day": isoDay(d) },
        h(
          "h2",
          {},
          heading.format(d),
          today ? " (today)" : "",
          items.length > 0 ? h("span", { class: "muted count" }, ` · ${items.length}`) : null
        ),
        composeFor(d),
        items.length === 0 ? h("p", { class: "muted" }, "Nothing planned") : h("ul", {}, items.map(entry))
      )
    })
  )

/** How many posts a month's day shows before "n more" (the week view of that day shows them all). */
const perDay = 4

const monthGrid = (first, start, posts) =>
  h(
    "div",
    { class: "month", role: "list", "aria-label": monthTitle.format(first) },
    Array.from({ length: 7 }, (_, i) =>
      h("div", { class: "weekday", "aria-hidden": "true" }, weekdayName.format(addDays(start, i)))),
    Array.from({ length: 42 }, (_, i) =>
      addDays(start, i)).map((d) => {
        const items = onDate(posts, d)
        const outside = d.getMonth() !== first.getMonth()
        const today = isoDay(d) === isoDay(new Date())
        return h(
          "section",
          {
            role: "listitem",
            "aria-label": heading.format(d),
            class: ["day", outside ? "outside" : "", today ? "today" : ""].join(" ").trim(),
            "data-day": isoDay(d)
          },
          h(
            "h2",
            {},
            h(
              "a",
              { href: `/calendar?week=${isoDay(d)}`, "aria-label": `Week of ${heading.format(d)}` },
              String(d.getDate())
            ),
            items.length > 0 ? h("span", { class: "muted count" }, ` · ${items.length}`) : null
          ),
          items.length === 0 ? null : h("ul", {}, items.slice(0, perDay).map(entry)),
          items.length > perDay
            ? h("a", { class: "more", href: `/calendar?week=${isoDay(d)}` }, `${items.length - perDay} more`)
            : null
        )
      })
  )

/**
 * The campaign filter: a select that reloads the calendar on that campaign's posts (`campaign_id` in
 * the URL, kept by every link of the view). None when the organization has no campaign.
 */
const campaignFilter = (campaigns, chosen) => {
  if (campaigns.length === 0) return null
  const select = h(
    "select",
    { id: "calendar-campaign" },
    h("option", { value: "" }, "All campaigns"),
    campaigns.map((c) =>
      h(
        "option",
        { value: c.id, selected: String(c.id) === chosen },
        `${c.name}${c.status === "archived" ? " (archived)" : ""}`
      )
    )
  )
  select.addEventListener("change", () => {
    const url = new URL(location.href)
    if (select.value === "") url.searchParams.delete("campaign_id")
    else url.searchParams.set("campaign_id", select.value)
    location.assign(url.pathname + url.search)
  })
  return h("p", { class: "field" }, h("label", { for: "calendar-campaign" }, "Campaign "), select)
}

export default async () => {
  const query = new URLSearchParams(location.search)
  const month = query.get("view") === "month"
  const campaignId = query.get("campaign_id") ?? ""
  const campaigns = await loadCampaigns()
  // Every link of the view keeps the campaign filter.
  const kept = (href) =>
    campaignId === "" ? href : `${href}${href.includes("?") ? "&" : "?"}campaign_id=${encodeURIComponent(campaignId)}`
  let from, to, title, nav, draw
  if (month) {
    const asked = query.get("month")
    const base = asked && /^\d{4}-\d{2}$/.test(asked) ? new Date(`${asked}-01T00:00:00`) : new Date()
    const first = new Date(base.getFullYear(), base.getMonth(), 1)
    from = weekStart(first)
    to = addDays(from, 42)
    title = `Month: ${monthTitle.format(first)}`
    const link = (d, text) => h("a", { href: kept(`/calendar?view=month&month=${isoMonth(d)}`) }, text)
    nav = [
      link(new Date(first.getFullYear(), first.getMonth() - 1, 1), "Previous month"),
      h("a", { href: kept("/calendar?view=month") }, "This month"),
      link(new Date(first.getFullYear(), first.getMonth() + 1, 1), "Next month"),
      h("a", { href: kept(`/calendar?week=${isoDay(first)}`) }, "Week view"),
      h("a", { href: kept(`/calendar?view=hours&week=${isoDay(first)}`) }, "Week by hour")
    ]
    draw = (posts) => monthGrid(first, from, posts)
  } else {
    const byHour = query.get("view") === "hours"
    const asked = query.get("week")
    from = weekStart(asked && /^\d{4}-\d{2}-\d{2}$/.test(asked) ? new Date(`${asked}T00:00:00`) : new Date())
    to = addDays(from, 7)
    title = byHour ? "Week by hour" : "Week calendar"
    const view = byHour ? "view=hours&" : ""
    const link = (d, text) => h("a", { href: kept(`/calendar?${view}week=${isoDay(d)}`) }, text)
    nav = [
      link(addDays(from, -7), "Previous week"),
      h("a", { href: kept(`/calendar${byHour ? "?view=hours" : ""}`) }, "This week"),
      link(addDays(from, 7), "Next week"),
      byHour
        ? h("a", { href: kept(`/calendar?week=${isoDay(from)}`) }, "Week by day")
        : h("a", { href: kept(`/calendar?view=hours&week=${isoDay(from)}`) }, "Week by hour"),
      h("a", { href: kept(`/calendar?view=month&month=${isoMonth(from)}`) }, "Month view")
    ]
    if (byHour) {
      // The queue's openings are drawn when it can be read; a calendar without them still works.
      const queue = await v1("GET", "/queue?count=1").catch(() => null)
      const slots = openingsBetween(queue, Math.max(from.getTime(), Date.now()), to.getTime())
      draw = (posts) => hourGrid(from, posts, slots, entry, zone())
    } else draw = (posts) => weekGrid(from, posts)
  }
  const summary = h("p", { class: "muted", id: "calendar-summary" })
  const status = h("div", { "aria-live": "polite", id: "calendar-status" })
  const grid = h("div", {})
  const fill = async () => {
    const posts = await postsBetween(from, to, campaignId)
    replace(
      summary,
      `Times in your zone (${zone()}); hover a time for its UTC instant. ${posts.length} post${
        posts.length === 1 ? "" : "s"
      } ${month ? "in view" : "this week"}. ${
        title === "Week by hour"
          ? "Drag a scheduled post to another hour to move it; click an empty hour to compose (arrow keys move between empty hours). Dashed green: the queue's free openings."
          : "Drag a scheduled post to another day to move it."
      }`
    )
    const drawn = draw(posts)
    enableMoves(drawn, new Map(posts.map(({ post }) => [post.id, post])), status, fill)
    replace(grid, drawn)
  }
  await fill()
  render(
    title,
    summary,
    h("nav", { class: "actions", "aria-label": month ? "Months" : "Weeks" }, nav),
    campaignFilter(campaigns, campaignId),
    status,
    grid
  )
}
