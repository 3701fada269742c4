import { v1 } from "../api.js"
import { isReviewer, refreshBadge } from "../app.js"
import { h, notice, render, time } from "../ui.js"
import { accountNames, accounts } from "./shared.js"
import { reviewControls } from "./review.js"

export default async function page({ session }) {
  if (!isReviewer(session)) {
    render("Approvals", notice("Only owners and admins review posts.", "bad"))
    return
  }
  const [data, list] = await Promise.all([v1("GET", "/posts?approval=pending&limit=100&sort=created_at&order=asc"), accounts()])
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
          h("h2", { id: `post-${post.id}` }, h("a", { href: `/posts/${post.id}` }, "Draft"), " from ", time(post.created_at)),
          h("p", { class: "content" }, post.content || h("span", { class: "muted" }, "(no text)")),
          h("p", { class: "muted" }, "To: ", (post.account_ids ?? []).map((id) => names.get(id) ?? `account ${id}`).join(", ") || "no accounts yet"),
          reviewControls(post, () => page({ session }))
        ))
  )
}
