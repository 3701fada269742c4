// The week by hour: a table, one row per hour of the viewer's wall clock and one column per day. A
// post sits in the cell of its hour there; the queue's openings still free are drawn in theirs; an
// empty cell still ahead links to the composer for its hour. Cells are drop targets (`data-day`,
// `data-hour`): a post dropped there moves to that day and hour, keeping its minutes
// (calendar-moves.js). On a day a daylight-saving change skips an hour, that hour's cell is shaded
// and takes nothing; on a day an hour happens twice, both stay in the one row.
import { h } from "../ui.js"

const addDays = (d, n) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + n)
const pad = (n) => String(n).padStart(2, "0")
const isoDay = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`

const heading = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" })
const hourLabel = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" })
const clock = new Intl.DateTimeFormat(undefined, { timeStyle: "short" })

/** The cell key of an instant in the viewer's zone: "YYYY-MM-DD Thh". */
const keyOf = (ms) => {
  const d = new Date(ms)
  return `${isoDay(d)}T${pad(d.getHours())}`
}

const bucket = (items, at) => {
  const cells = new Map()
  for (const item of items) {
    const key = keyOf(at(item))
    if (!cells.has(key)) cells.set(key, [])
    cells.get(key).push(item)
  }
  return cells
}

const zoneClocks = new Map()

/** The wall clock of `date` in `zone` (a gap-shifted opening shows where it really lands). */
const clockIn = (zone, date) => {
  if (!zoneClocks.has(zone)) {
    zoneClocks.set(zone, new Intl.DateTimeFormat(undefined, { timeStyle: "short", timeZone: zone }))
  }
  return zoneClocks.get(zone).format(date)
}

/** A free opening of the queue, with its wall clock in the queue's zone when that is not the viewer's. */
const freeSlot = (slot, viewerZone) => {
  const when = new Date(slot.at)
  const there = slot.zone === viewerZone ? "" : ` (${clockIn(slot.zone, when)} ${slot.zone})`
  return h(
    "li",
    { class: "free-slot", "data-slot-at": when.toISOString() },
    h("time", { datetime: when.toISOString(), title: `UTC: ${when.toISOString()}` }, clock.format(when)),
    ` Free queue slot${there}`
  )
}

/**
 * The grid of the week starting at `start` (Monday 00:00, viewer's zone). `posts` are `{ post, at }`,
 * `slots` the queue's openings in the week (`{ at, time, zone }`), `entry` draws a post.
 */
export const hourGrid = (start, posts, slots, entry, viewerZone) => {
  const days = Array.from({ length: 7 }, (_, i) => addDays(start, i))
  const byCell = bucket(posts, (p) => p.at)
  // An opening a post already holds (a queued post lands on the opening's instant) is not free.
  const held = new Set(posts.map(({ post }) => post.scheduled_for && Date.parse(post.scheduled_for)))
  const slotsByCell = bucket(slots.filter((s) => !held.has(s.at)), (s) => s.at)
  const today = isoDay(new Date())
  const now = Date.now()
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Hour")),
      days.map((d) =>
        h(
          "th",
          { scope: "col", class: isoDay(d) === today ? "today" : null },
          heading.format(d),
          isoDay(d) === today ? " (today)" : ""
        )
      )
    )
  )
  const rows = Array.from({ length: 24 }, (_, hour) => {
    const label = hourLabel.format(new Date(2000, 0, 1, hour))
    return h(
      "tr",
      {},
      h("th", { scope: "row" }, label),
      days.map((d) => {
        const key = `${isoDay(d)}T${pad(hour)}`
        const at = new Date(d.getFullYear(), d.getMonth(), d.getDate(), hour)
        // The wall clock a spring-forward change skips: Date moves it on to the next hour.
        if (at.getHours() !== hour) {
          return h("td", { class: "skipped", title: "This hour does not happen on this day (clock change)" })
        }
        const items = byCell.get(key) ?? []
        const free = slotsByCell.get(key) ?? []
        const ahead = at.getTime() + 3_600_000 > now
        // A free opening's cell composes for the opening's instant, any other for the hour's start.
        const composeAt = free.length > 0 ? free[0].at : Math.max(at.getTime(), nextMinute())
        const compose = items.length === 0 && ahead
          ? h("a", {
            class: "slot-new",
            href: `/compose?at=${encodeURIComponent(new Date(composeAt).toISOString())}`,
            "aria-label": `Compose a post for ${heading.format(d)}, ${label}`
          }, "+")
          : null
        return h(
          "td",
          { "data-day": isoDay(d), "data-hour": String(hour) },
          items.length + free.length === 0
            ? null
            : h("ul", {}, items.map(entry), free.map((s) => freeSlot(s, viewerZone))),
          compose
        )
      })
    )
  })
  const wrap = h(
    "div",
    { class: "table-wrap hours-wrap", role: "region", "aria-label": "Week by hour", tabindex: "0" },
    h("table", { class: "hours" }, head, h("tbody", {}, rows))
  )
  roveBetweenHours(wrap, days)
  return wrap
}

const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }

/**
 * The empty hours' compose links are one stop in the tab order, not up to 168: the first is
 * reachable by Tab, and the arrow keys move between them (to the next hour or day that has one).
 */
const roveBetweenHours = (wrap, days) => {
  const links = [...wrap.querySelectorAll("a.slot-new")]
  links.forEach((a, i) => a.setAttribute("tabindex", i === 0 ? "0" : "-1"))
  const dayIndex = new Map(days.map((d, i) => [isoDay(d), i]))
  // The link last focused (by keys, pointer or script) is the grid's one tab stop.
  let stop = links[0]
  wrap.addEventListener("focusin", (e) => {
    const link = e.target instanceof Element ? e.target.closest("a.slot-new") : null
    if (!link || link === stop) return
    stop?.setAttribute("tabindex", "-1")
    link.setAttribute("tabindex", "0")
    stop = link
  })
  wrap.addEventListener("keydown", (e) => {
    const link = e.target instanceof Element ? e.target.closest("a.slot-new") : null
    const step = steps[e.key]
    if (!link || !step) return
    const cell = link.closest("td")
    let day = dayIndex.get(cell.dataset.day)
    let hour = Number(cell.dataset.hour)
    for (;;) {
      day += step[0]
      hour += step[1]
      if (day < 0 || day > 6 || hour < 0 || hour > 23) return
      const next = wrap.querySelector(`td[data-day="${isoDay(days[day])}"][data-hour="${hour}"] a.slot-new`)
      if (next) {
        e.preventDefault()
        next.focus()
        return
      }
    }
  })
}

/** The next whole minute from now (the current hour's compose link cannot ask for a past time). */
const nextMinute = () => {
  const d = new Date()
  d.setSeconds(0, 0)
  return d.getTime() + 60_000
}
