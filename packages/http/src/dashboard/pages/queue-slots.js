// The queue's weekly openings as instants: each opening is a wall-clock time in the queue's zone
// (GET /queue gives the zone and the openings); here they become the instants of a range, for the
// calendar to draw in the viewer's zone. Daylight-saving changes follow the server's rule
// (QueuePolicy.resolveWallClock): a time in a spring-forward gap moves forward by the gap, a time that
// happens twice (fall back) is its earlier instant. The browser has no zone arithmetic but Intl, so a
// zone's offset at an instant is read from the wall clock Intl gives for it.

const partsFormat = new Map()

/** The wall clock of `zone` at instant `ms`, as the UTC milliseconds of that wall clock. */
const wallMillis = (zone, ms) => {
  let format = partsFormat.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    partsFormat.set(zone, format)
  }
  const p = Object.fromEntries(format.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]))
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
}

/** The zone's offset from UTC at instant `ms`, in milliseconds (Berlin in summer: 7 200 000). */
const offsetAt = (zone, ms) => wallMillis(zone, Math.floor(ms / 1000) * 1000) - Math.floor(ms / 1000) * 1000

/**
 * The instant of wall clock `y-m-d h:min` in `zone`: the earlier one when it happens twice, shifted
 * forward by the gap when it does not happen at all.
 */
export const zonedInstant = (zone, y, m, d, hour, minute) => {
  const wall = Date.UTC(y, m - 1, d, hour, minute)
  // The offsets in force around that wall clock: a change of offset happens at most once in a day.
  const before = offsetAt(zone, wall - 86_400_000)
  const after = offsetAt(zone, wall + 86_400_000)
  const valid = [...new Set([before, after])]
    .map((offset) => wall - offset)
    .filter((at) => wallMillis(zone, at) === wall)
    .sort((a, b) => a - b)
  // In a gap no offset names the wall clock: the offset before it moves it forward by the gap.
  return valid.length > 0 ? valid[0] : wall - before
}

/** YYYY-MM-DD of instant `ms` in `zone`. */
const dateIn = (zone, ms) => new Date(wallMillis(zone, ms)).toISOString().slice(0, 10)

/** 1 = Monday ... 7 = Sunday, of a YYYY-MM-DD date. */
const weekdayOf = (iso) => {
  const sunday0 = new Date(`${iso}T00:00:00Z`).getUTCDay()
  return sunday0 === 0 ? 7 : sunday0
}

/**
 * The queue's openings falling in [from, to) (milliseconds), each `{ at, time }` with `time` the
 * opening's wall clock in the queue's zone; none for a queue that is not set up.
 */
export const openingsBetween = (queue, from, to) => {
  if (!queue?.configured || !queue.timezone || queue.openings.length === 0) return []
  const zone = queue.timezone
  const out = new Map()
  // The queue's dates that can hold an instant of the range: one day either side covers any offset.
  const first = Date.parse(`${dateIn(zone, from)}T00:00:00Z`) - 86_400_000
  for (let day = first; day <= Date.parse(`${dateIn(zone, to)}T00:00:00Z`) + 86_400_000; day += 86_400_000) {
    const iso = new Date(day).toISOString().slice(0, 10)
    const weekday = weekdayOf(iso)
    const [y, m, d] = iso.split("-").map(Number)
    for (const opening of queue.openings) {
      if (opening.weekday_number !== weekday) continue
      const [hour, minute] = opening.time.split(":").map(Number)
      const at = zonedInstant(zone, y, m, d, hour, minute)
      if (at >= from && at < to && !out.has(at)) out.set(at, { at, time: opening.time, zone })
    }
  }
  return [...out.values()].sort((a, b) => a.at - b.at)
}
