// The figures of the analytics page that GET /analytics/summary does not give, worked out from the
// posts of the period (GET /posts, with each destination's synced metrics): posts by status per day
// or month in the viewer's zone, totals per account, and the top posts. Pure functions of the data.
import { v1 } from "../api.js"
import { postStatuses } from "./shared.js"

export const periods = [
  ["today", "Today (UTC day)"],
  ["week", "This week (UTC, from Monday)"],
  ["month", "This month (UTC)"],
  ["all", "All time"],
  ["custom", "Custom range (your zone)"]
]

export const metrics = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"]

/** What a person does with a post, beyond seeing it: the top posts are ranked by it. */
export const interactionMetrics = ["likes", "comments", "shares", "saves", "clicks"]

const day = /^\d{4}-\d{2}-\d{2}$/

/** Midnight starting `date` (YYYY-MM-DD) in the viewer's zone, `days` later, as an ISO instant. */
export const startOfDay = (date, days = 0) => {
  const [y, m, d] = date.split("-").map(Number)
  return new Date(y, m - 1, d + days).toISOString()
}

/**
 * The period the page's URL asks for, as GET /analytics/summary's query, or `{ problem }` when a
 * custom range is incomplete. A custom range is whole days in the viewer's zone, `to` included.
 */
export const periodQuery = (query) => {
  const name = periods.some(([p]) => p === query.get("period")) ? query.get("period") : "month"
  const params = new URLSearchParams({ period: name })
  if (name !== "custom") return { name, params }
  const from = query.get("from") ?? ""
  const to = query.get("to") ?? ""
  if (!day.test(from) || !day.test(to)) return { name, params, problem: "Pick the first and the last day." }
  if (to < from) return { name, params, problem: "The last day is before the first." }
  params.set("from", startOfDay(from))
  params.set("to", startOfDay(to, 1))
  return { name, params }
}

/** At most this many posts are read for the per-account totals and top posts. */
export const postCap = 1000

/** The posts created in `[from, to)` (null: unbounded), newest first, up to `postCap`. */
export const periodPosts = async (from, to) => {
  const posts = []
  for (let offset = 0; offset < postCap; offset += 100) {
    const params = new URLSearchParams({ limit: "100", offset: String(offset), sort: "created_at", order: "desc" })
    if (from) params.set("created_after", from)
    if (to) params.set("created_before", to)
    const page = await v1("GET", `/posts?${params}`)
    posts.push(...(page.posts ?? []))
    if (!page.pagination?.has_more) return { posts, complete: true }
  }
  return { posts, complete: false }
}

const pad = (n) => String(n).padStart(2, "0")
const dayKey = (date) => `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
const monthKey = (date) => `${date.getFullYear()}-${pad(date.getMonth() + 1)}`

/**
 * Posts by status per day of the viewer's zone over `[from, to)`, or per month when that spans more
 * than 62 days (all time spans the posts found). Every bucket of the range is present, empty or not.
 */
export const statusOverTime = (posts, from, to) => {
  const created = posts.map((p) => new Date(p.created_at).getTime())
  const start = from ? new Date(from).getTime() : Math.min(...created)
  const end = to ? new Date(to).getTime() - 1 : Math.max(...created)
  const byMonth = end - start > 62 * 86_400_000
  const keyOf = byMonth ? monthKey : dayKey
  const buckets = new Map()
  if (Number.isFinite(start) && Number.isFinite(end)) {
    const cursor = new Date(start)
    cursor.setHours(0, 0, 0, 0)
    if (byMonth) cursor.setDate(1)
    while (cursor.getTime() <= end) {
      buckets.set(keyOf(cursor), Object.fromEntries(postStatuses.map((s) => [s, 0])))
      if (byMonth) cursor.setMonth(cursor.getMonth() + 1)
      else cursor.setDate(cursor.getDate() + 1)
    }
  }
  for (const post of posts) {
    const key = keyOf(new Date(post.created_at))
    const bucket = buckets.get(key) ?? Object.fromEntries(postStatuses.map((s) => [s, 0]))
    bucket[post.status] = (bucket[post.status] ?? 0) + 1
    buckets.set(key, bucket)
  }
  return { unit: byMonth ? "month" : "day", buckets: [...buckets.entries()].sort(([a], [b]) => (a < b ? -1 : 1)) }
}

const zero = () => Object.fromEntries(metrics.map((m) => [m, 0]))

/** Destinations and metric sums per account, most viewed first. */
export const perAccount = (posts) => {
  const accounts = new Map()
  for (const post of posts) {
    for (const d of post.destinations ?? []) {
      const entry = accounts.get(d.account_id) ??
        { id: d.account_id, name: d.account_name, platform: d.platform, destinations: 0, ...zero() }
      entry.destinations++
      for (const m of metrics) entry[m] += d[m] ?? 0
      accounts.set(d.account_id, entry)
    }
  }
  return [...accounts.values()].sort((a, b) => b.views - a.views || b.impressions - a.impressions || a.id - b.id)
}

/** The `limit` posts with the most interactions (then views), among those with any metric at all. */
export const topPosts = (posts, limit = 10) =>
  posts
    .map((post) => {
      const sums = zero()
      for (const d of post.destinations ?? []) for (const m of metrics) sums[m] += d[m] ?? 0
      const interactions = interactionMetrics.reduce((n, m) => n + sums[m], 0)
      return { post, ...sums, interactions }
    })
    .filter((row) => metrics.some((m) => row[m] > 0))
    .sort((a, b) =>
      b.interactions - a.interactions || b.views - a.views || (a.post.created_at < b.post.created_at ? 1 : -1)
    )
    .slice(0, limit)
