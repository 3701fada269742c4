// Analytics: GET /analytics/summary over the period the URL names (posts by status, per-platform
// totals of the synced metrics, AI credits), and from the period's posts, posts by status over time,
// per-account totals and the top posts. Every chart has its table, which holds the figures; the period
// lives in the URL (a reload or a shared link shows the same figures).
import { v1 } from "../api.js"
import { platformName } from "../errors.js"
import { errorText, field, h, notice, render, replace, time } from "../ui.js"
import {
  metrics,
  perAccount,
  periodPosts,
  periodQuery,
  periods,
  postCap,
  statusOverTime,
  topPosts
} from "./analytics-data.js"
import { chartFigure, loadChart, numberFormat, statusColours } from "./charts.js"
import { excerpt, postStatuses, scrollableTable } from "./shared.js"

const metricLabel = (m) => m.charAt(0).toUpperCase() + m.slice(1)
const statusLabel = (s) => {
  const words = s.replaceAll("_", " ")
  return words.charAt(0).toUpperCase() + words.slice(1)
}
const n = (value) => numberFormat.format(value ?? 0)
const cell = (value, attrs = {}) => h("td", { class: "num", ...attrs }, n(value))

/** The period picker: a GET form whose fields become the page's URL. */
const periodForm = (query, current, problem) => {
  const select = h(
    "select",
    { name: "period", id: "period" },
    periods.map(([value, label]) => h("option", { value, selected: value === current }, label))
  )
  const from = h("input", { type: "date", name: "from", id: "period-from", value: query.get("from") ?? "" })
  const to = h("input", { type: "date", name: "to", id: "period-to", value: query.get("to") ?? "" })
  const custom = h(
    "fieldset",
    { class: "filters", id: "custom-range" },
    h("legend", {}, "Custom range (whole days, your zone)"),
    h("div", { class: "filter" }, field("First day", from)),
    h("div", { class: "filter" }, field("Last day", to)),
    problem && current === "custom" ? h("p", { class: "field-error error", role: "alert" }, problem) : null
  )
  const showCustom = () => (custom.hidden = select.value !== "custom")
  select.addEventListener("change", showCustom)
  showCustom()
  const form = h(
    "form",
    {
      method: "get",
      action: "/analytics",
      "aria-label": "Choose the period",
      onsubmit: (e) => {
        e.preventDefault()
        const params = new URLSearchParams({ period: select.value })
        if (select.value === "custom") {
          if (from.value) params.set("from", from.value)
          if (to.value) params.set("to", to.value)
        }
        location.assign(`/analytics?${params}`)
      }
    },
    h("div", { class: "filters" }, h("div", { class: "filter" }, field("Period", select))),
    custom,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Show"))
  )
  return form
}

const totalsList = (summary) =>
  h(
    "dl",
    { class: "tiles", id: "totals" },
    [["posts", "Posts", summary.posts.total], ["destinations", "Destinations", summary.totals.destinations]]
      .concat(metrics.map((m) => [m, metricLabel(m), summary.totals[m]]))
      .concat([["ai_credits_used", "AI credits used", summary.ai_credits_used]])
      .map(([key, label, value]) => h("div", { dataset: { metric: key } }, h("dt", {}, label), h("dd", {}, n(value))))
  )

const statusFigure = (summary, posts) => {
  const { unit, buckets } = statusOverTime(posts.list, summary.from, summary.to)
  const labelOf = (key) => {
    const [y, m, d] = key.split("-").map(Number)
    const date = new Date(y, m - 1, d ?? 1)
    return date.toLocaleDateString(
      undefined,
      unit === "month" ? { year: "numeric", month: "short" } : {
        month: "short",
        day: "numeric"
      }
    )
  }
  const used = buckets.filter(([, counts]) => postStatuses.some((s) => counts[s] > 0))
  const rows = used.map(([key, counts]) =>
    h("tr", {}, h("th", { scope: "row" }, labelOf(key)), postStatuses.map((s) => cell(counts[s])))
  )
  rows.push(
    h(
      "tr",
      { class: "total", id: "status-totals" },
      h("th", { scope: "row" }, "All (summary)"),
      postStatuses.map((s) => cell(summary.posts.by_status[s], { dataset: { status: s } }))
    )
  )
  return chartFigure({
    title: `Posts by status, per ${unit} created (your zone)`,
    labels: buckets.map(([key]) => labelOf(key)),
    datasets: postStatuses.map((s) => ({
      label: statusLabel(s),
      data: buckets.map(([, counts]) => counts[s]),
      colour: statusColours[s]
    })),
    stacked: true,
    table: h(
      "div",
      { id: "status-table" },
      scrollableTable(
        "Posts by status, table",
        [unit === "month" ? "Month" : "Day", ...postStatuses.map(statusLabel)],
        rows,
        `Only ${unit}s with posts are listed; the last row is the summary's count for the whole period.`
      )
    )
  })
}

const platformFigure = (summary) => {
  const entries = Object.entries(summary.platforms)
  const rows = entries.map(([platform, p]) =>
    h(
      "tr",
      { dataset: { platform } },
      h("th", { scope: "row" }, platformName(platform)),
      cell(p.destinations, { dataset: { metric: "destinations" } }),
      metrics.map((m) => cell(p[m], { dataset: { metric: m } }))
    )
  )
  return chartFigure({
    title: "Metrics per platform",
    labels: entries.map(([platform]) => platformName(platform)),
    datasets: metrics.map((m) => ({ label: metricLabel(m), data: entries.map(([, p]) => p[m]) })),
    horizontal: true,
    table: h(
      "div",
      { id: "platform-table" },
      scrollableTable("Metrics per platform, table", ["Platform", "Destinations", ...metrics.map(metricLabel)], rows)
    )
  })
}

const accountFigure = (posts) => {
  const accounts = perAccount(posts.list)
  const rows = accounts.map((a) =>
    h(
      "tr",
      { dataset: { account: String(a.id) } },
      h("th", { scope: "row" }, `${a.name} (${platformName(a.platform)})`),
      cell(a.destinations, { dataset: { metric: "destinations" } }),
      metrics.map((m) => cell(a[m], { dataset: { metric: m } }))
    )
  )
  return chartFigure({
    title: "Metrics per account",
    labels: accounts.map((a) => `${a.name} (${platformName(a.platform)})`),
    datasets: metrics.map((m) => ({ label: metricLabel(m), data: accounts.map((a) => a[m]) })),
    horizontal: true,
    table: h(
      "div",
      { id: "account-table" },
      scrollableTable("Metrics per account, table", ["Account", "Destinations", ...metrics.map(metricLabel)], rows)
    )
  })
}

const topFigure = (posts) => {
  const top = topPosts(posts.list)
  if (top.length === 0) {
    return {
      el: notice(
        "No post of this period has metrics yet: they are read from the platforms from about an hour after publishing."
      ),
      draw: () => {}
    }
  }
  const rows = top.map((row, i) =>
    h(
      "tr",
      { dataset: { post: row.post.id } },
      h("td", { class: "num" }, String(i + 1)),
      h("th", { scope: "row" }, h("a", { href: `/posts/${row.post.id}` }, excerpt(row.post.content, 60))),
      h("td", {}, [...new Set((row.post.destinations ?? []).map((d) => platformName(d.platform)))].join(", ")),
      cell(row.interactions, { dataset: { metric: "interactions" } }),
      metrics.map((m) => cell(row[m], { dataset: { metric: m } }))
    )
  )
  return chartFigure({
    title: "Top posts by interactions (likes, comments, shares, saves and clicks)",
    labels: top.map((row, i) => `${i + 1}. ${excerpt(row.post.content, 30)}`),
    datasets: [{ label: "Interactions", data: top.map((row) => row.interactions) }],
    horizontal: true,
    table: h(
      "div",
      { id: "top-table" },
      scrollableTable("Top posts, table", ["#", "Post", "Platforms", "Interactions", ...metrics.map(metricLabel)], rows)
    )
  })
}

/** Reads the period's summary and posts and shows them; every failure is said where its figures go. */
const show = async (out, params) => {
  let summary
  try {
    summary = await v1("GET", `/analytics/summary?${params}`)
  } catch (e) {
    replace(
      out,
      notice(`The figures could not be loaded. ${errorText(e)}`, "bad"),
      h("p", {}, h("a", { href: location.pathname + location.search }, "Try again"))
    )
    return
  }
  const range = summary.from === null
    ? h("p", {}, "All posts, whenever created.")
    : h("p", {}, "Posts created from ", time(summary.from), " to ", time(summary.to), " (end not included).")
  if (summary.posts.total === 0) {
    replace(out, range, notice("No posts were created in this period, so there is nothing to chart."))
    return
  }
  let posts
  let postsProblem = null
  try {
    const read = await periodPosts(summary.from, summary.to)
    posts = { list: read.posts, complete: read.complete }
  } catch (e) {
    posts = { list: [], complete: false }
    postsProblem =
      `The posts of the period could not be read, so the charts over time, per account and of top posts are missing. ${
        errorText(e)
      }`
  }
  const figures = [
    ["Posts over time", statusFigure(summary, posts)],
    ["Per platform", platformFigure(summary)],
    ...(postsProblem === null ? [["Per account", accountFigure(posts)], ["Top posts", topFigure(posts)]] : [])
  ]
  const chartsNote = h("div", { id: "charts-note" })
  replace(
    out,
    range,
    totalsList(summary),
    postsProblem ? notice(postsProblem, "bad") : null,
    posts.complete || postsProblem ? null : notice(
      `The period has more than ${n(postCap)} posts: over time, per account and top posts count the newest ${
        n(postCap)
      }; the totals and the per-platform figures count all.`
    ),
    chartsNote,
    figures.map(([heading, figure]) => h("section", { class: "analytics-part" }, h("h2", {}, heading), figure.el))
  )
  try {
    const Chart = await loadChart()
    for (const [, figure] of figures) figure.draw(Chart)
  } catch (e) {
    replace(
      chartsNote,
      notice(`The charts could not be drawn (${e?.message ?? e}); the tables give every figure.`, "bad")
    )
  }
}

export default async () => {
  const query = new URLSearchParams(location.search)
  const { name, params, problem } = periodQuery(query)
  const out = h("div", { id: "analytics" }, h("p", { class: "loading" }, "Loading the figures…"))
  render("Analytics", periodForm(query, name, problem), out)
  if (problem) {
    replace(out, notice("Pick a complete custom range to see its figures."))
    return
  }
  out.setAttribute("aria-busy", "true")
  try {
    await show(out, params)
  } finally {
    out.removeAttribute("aria-busy")
  }
}
