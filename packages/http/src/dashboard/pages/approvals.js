import { v1 } from "../api.js"
import { isReviewer, refreshBadge } from "../app.js"
import { flashNext, h, notice, render, replace, time } from "../ui.js"
import { draftActions } from "./post-actions.js"
import { accountNames, accounts } from "./shared.js"
import { reviewControls } from "./review.js"

/**
 * A card's controls: review, then (once approved) the draft's publishing actions in its place, so
 * approve-then-publish is two clicks.
 */
const controls = (post, onChanges) => {
  const box = h("div", {})
  const published = (label) => {
    flashNext(
      label === "Publish now"
        ? "Approved and publishing now."
        : label === "Add to queue"
        ? "Approved and added to the queue."
        : "Approved and scheduled."
    )
    location.assign(`/posts/${post.id}`)
  }
  const approved = async () => {
    refreshBadge()
    replace(box, draftActions({ ...post, approval_status: "approved" }, published))
    box.querySelector("[data-action='Publish now']")?.focus()
  }
  replace(box, reviewControls(post, approved, onChanges))
  return box
}

export default async function page({ session }) {
  if (!isReviewer(session)) {
    render("Approvals", notice("Only owners and admins review posts.", "bad"))
    return
  }
  const [data, list] = await Promise.all([
    v1("GET", "/posts?approval=pending&limit=100&sort=created_at&order=asc"),
    accounts()
  ])
  const names = accountNames(list)
  const posts = data.posts ?? []
  refreshBadge()
  render(
    "Approvals",
    h("p", { class: "muted" }, `${data.pagination?.total ?? posts.length} post(s) waiting for review.`),
    posts.length === 0
      ? notice("Nothing is waiting for approval.")
      : posts.map((post) =>
        h(
          "article",
          { class: "card", "aria-labelledby": `post-${post.id}` },
          h(
            "h2",
            { id: `post-${post.id}` },
            h("a", { href: `/posts/${post.id}` }, "Draft"),
            " from ",
            time(post.created_at)
          ),
          h("p", { class: "content" }, post.content || h("span", { class: "muted" }, "(no text)")),
          h(
            "p",
            { class: "muted" },
            "To: ",
            (post.account_ids ?? []).map((id) => names.get(id) ?? `account ${id}`).join(", ") || "no accounts yet"
          ),
          controls(post, () => page({ session }))
        )
      )
  )
}
