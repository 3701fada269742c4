import { v1 } from "../api.js"
import { isReviewer, refreshBadge } from "../app.js"
import { busy, flash, h, notice, render, status, table, time } from "../ui.js"
import { reviewControls } from "./review.js"

const metricNames = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"]

const metrics = (d) => {
  const source = d.metrics ?? d
  const parts = metricNames.filter((m) => typeof source[m] === "number").map((m) => `${m} ${source[m]}`)
  return parts.length === 0 ? h("span", { class: "muted" }, "—") : parts.join(", ")
}

/** Still moving: the page refreshes itself until every destination has an outcome. */
const moving = (post) => post.status === "publishing" || (post.status === "scheduled" && post.scheduled_for !== null && Date.parse(post.scheduled_for) - Date.now() < 120_000)

export default async function page({ session, params }) {
  const id = params[0]
  const post = await v1("GET", `/posts/${id}`)
  const out = h("div", { "aria-live": "polite" })
  const failed = (post.destinations ?? []).filter((d) => d.status === "failed")
  const retry = (accountIds) => async (event) => {
    await busy(event.currentTarget, out, async () => {
      const result = await v1("POST", `/posts/${id}/retry`, accountIds === undefined ? {} : { account_ids: accountIds })
      flash(`Retrying ${result.retried_count} destination(s).`)
      await page({ session, params })
    })
  }
  const rows = (post.destinations ?? []).map((d) =>
    h(
      "tr",
      {},
      h("td", {}, `${d.account_name} (${d.platform})`),
      h("td", {}, status(d.status)),
      h("td", { class: d.error ? "error" : "" }, d.error ?? "—"),
      h("td", {}, d.platform_post_url ? h("a", { href: d.platform_post_url, rel: "noopener noreferrer", target: "_blank" }, "Open post") : "—"),
      h("td", {}, time(d.published_at)),
      h("td", {}, metrics(d)),
      h("td", {}, String(d.attempts ?? 0)),
      h("td", {}, d.status === "failed" ? h("button", { type: "button", class: "secondary", onclick: retry([d.account_id]) }, "Retry") : "")
    )
  )
  const facts = h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Status"), h("dd", { id: "post-status" }, status(post.status)),
    h("dt", {}, "Approval"), h("dd", { id: "post-approval" }, status(post.approval_status)),
    post.approval_note ? [h("dt", {}, "Reviewer's note"), h("dd", {}, post.approval_note)] : null,
    h("dt", {}, "Scheduled for"), h("dd", {}, time(post.scheduled_for), post.timezone ? h("span", { class: "muted" }, ` (${post.timezone})`) : null),
    h("dt", {}, "Created"), h("dd", {}, time(post.created_at)),
    post.campaign_id !== null ? [h("dt", {}, "Campaign"), h("dd", {}, String(post.campaign_id))] : null,
    post.media_ids?.length ? [h("dt", {}, "Media"), h("dd", {}, `${post.media_ids.length} file(s)`)] : null
  )
  const reviewing = isReviewer(session) && post.approval_status === "pending"
    ? reviewControls(post, async () => {
      refreshBadge()
      await page({ session, params })
    })
    : null
  render(
    "Post",
    h("p", { class: "content card" }, post.content || h("span", { class: "muted" }, "(no text)")),
    facts,
    out,
    reviewing,
    h("h2", {}, "Destinations"),
    rows.length === 0
      ? notice("No destinations yet (a draft has none until it is scheduled).")
      : table(["Account", "Status", "Error", "Link", "Published", "Metrics", "Attempts", ""], rows),
    failed.length > 1 ? h("div", { class: "actions" }, h("button", { type: "button", onclick: retry(undefined) }, "Retry all failed")) : null
  )
  clearTimeout(page.timer)
  if (moving(post)) page.timer = setTimeout(() => page({ session, params }).catch(() => {}), 1500)
}
