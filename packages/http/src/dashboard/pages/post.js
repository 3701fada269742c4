import { v1 } from "../api.js"
import { isReviewer, refreshBadge } from "../app.js"
import { platformName } from "../errors.js"
import { busy, flash, h, keepingFocus, notice, render, replace, status, table, time, zonedTime } from "../ui.js"
import { draftActions, mayPublish, postTools, rescheduleForm, waiting } from "./post-actions.js"
import { reviewControls } from "./review.js"
import { commentsSection } from "./comments.js"

const metricNames = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"]

const metrics = (d) => {
  const source = d.metrics ?? d
  const parts = metricNames.filter((m) => typeof source[m] === "number").map((m) => `${m} ${source[m]}`)
  return parts.length === 0 ? h("span", { class: "muted" }, "—") : parts.join(", ")
}

/** Still moving: the page refreshes itself until every destination has an outcome. */
const moving = (post) =>
  post.status === "publishing" ||
  (post.status === "scheduled" && post.scheduled_for !== null && Date.parse(post.scheduled_for) - Date.now() < 120_000)

/** What decides which controls the post gets: they are drawn again only when it changes. */
const controlsKey = (post) =>
  [post.status, post.approval_status, post.draft, post.scheduled_for, waiting(post)].join("|")

export default async function page({ session, params }) {
  const id = params[0]
  let post = await v1("GET", `/posts/${id}`)
  const out = h("div", { "aria-live": "polite" })
  const head = h("div", {})
  const live = h("div", {})
  let drawnKey = null

  const reload = async (message) => {
    if (message) flash(message)
    post = await v1("GET", `/posts/${id}`)
    draw()
  }

  const retry = (accountIds) => (event) =>
    busy(event.currentTarget, out, async () => {
      const result = await v1("POST", `/posts/${id}/retry`, accountIds === undefined ? {} : { account_ids: accountIds })
      await reload(`Retrying ${result.retried_count} destination(s).`)
    })

  const drawControls = () => {
    const reviewing = isReviewer(session) && post.approval_status === "pending"
    const afterApproval = async () => {
      refreshBadge()
      await reload("Approved.")
      // The next step of approve-then-publish is one key press away.
      head.querySelector("[data-action='Publish now']")?.focus()
    }
    replace(
      head,
      h("p", { class: "content card" }, post.content || h("span", { class: "muted" }, "(no text)")),
      postTools(post, out),
      out,
      reviewing ? reviewControls(post, afterApproval) : null,
      mayPublish(post)
        ? draftActions(
          post,
          (label) =>
            reload(
              label === "Publish now"
                ? "Publishing now."
                : label === "Add to queue"
                ? "Added to the queue."
                : "Scheduled."
            )
        )
        : null,
      post.draft && post.approval_status === "pending" && !reviewing
        ? notice("Waiting for an owner or admin to approve it.")
        : null,
      post.draft && post.approval_status === "changes_requested"
        ? notice("Changes were requested: edit the draft to send it for approval again.")
        : null,
      waiting(post) ? rescheduleForm(post, () => reload("Rescheduled.")) : null
    )
    drawnKey = controlsKey(post)
  }

  const drawLive = () => {
    const failed = (post.destinations ?? []).filter((d) => d.status === "failed")
    const rows = (post.destinations ?? []).map((d) =>
      h(
        "tr",
        {},
        h("td", {}, `${d.account_name} (${platformName(d.platform)})`),
        h("td", {}, status(d.status)),
        h("td", { class: d.error ? "error" : "" }, d.error ?? "—"),
        h(
          "td",
          {},
          d.platform_post_url
            ? h("a", { href: d.platform_post_url, rel: "noopener noreferrer", target: "_blank" }, "Open post")
            : "—"
        ),
        h("td", {}, time(d.published_at)),
        h("td", {}, metrics(d)),
        h("td", {}, String(d.attempts ?? 0)),
        h(
          "td",
          {},
          d.status === "failed"
            ? h("button", {
              type: "button",
              class: "secondary",
              onclick: retry([d.account_id]),
              "data-focus-key": `retry-${d.account_id}`
            }, "Retry")
            : ""
        )
      )
    )
    replace(
      live,
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Status"),
        h("dd", { id: "post-status" }, status(post.status)),
        h("dt", {}, "Approval"),
        h("dd", { id: "post-approval" }, status(post.approval_status)),
        post.approval_note ? [h("dt", {}, "Reviewer's note"), h("dd", {}, post.approval_note)] : null,
        h("dt", {}, "Scheduled for"),
        h("dd", { id: "post-scheduled" }, zonedTime(post.scheduled_for, post.timezone)),
        h("dt", {}, "Created"),
        h("dd", {}, time(post.created_at)),
        post.campaign_id !== null ? [h("dt", {}, "Campaign"), h("dd", {}, String(post.campaign_id))] : null,
        post.media_ids?.length ? [h("dt", {}, "Media"), h("dd", {}, `${post.media_ids.length} file(s)`)] : null
      ),
      h("h2", {}, "Destinations"),
      rows.length === 0
        ? notice("No destinations yet (a draft has none until it is scheduled).")
        : table(["Account", "Status", "Error", "Link", "Published", "Metrics", "Attempts", ""], rows),
      failed.length > 1
        ? h(
          "div",
          { class: "actions" },
          h("button", { type: "button", onclick: retry(undefined), "data-focus-key": "retry-all" }, "Retry all failed")
        )
        : null
    )
  }

  let timer
  /** Draws what changed, keeping focus (and what is typed into the controls) where the user left it. */
  const draw = () => {
    keepingFocus(() => {
      if (drawnKey !== controlsKey(post)) drawControls()
      drawLive()
    })
    clearTimeout(timer)
    if (moving(post)) {
      timer = setTimeout(() => reload().catch(() => {}), 1500)
    }
  }

  render("Post", head, live, commentsSection(id))
  draw()
}
