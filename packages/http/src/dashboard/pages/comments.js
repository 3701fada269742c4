// Comments on a post between its author and the reviewers: the thread, oldest first, and a box to add
// one. Shown on the post's page to the people who may read them (the author, owners and admins).
import { api } from "../api.js"
import { busy, field, flash, h, replace, time } from "../ui.js"

export const commentsSection = (postId) => {
  const thread = h("div", { id: "comments" })
  const out = h("div", { "aria-live": "polite" })
  const section = h(
    "section",
    { "aria-labelledby": "comments-heading" },
    h("h2", { id: "comments-heading" }, "Comments"),
    thread
  )
  const text = h("textarea", { name: "body", rows: "3", maxlength: "2000", required: true })
  const submit = h("button", { type: "submit" }, "Add comment")

  const draw = async () => {
    const data = await api("GET", `/dashboard/api/posts/${postId}/comments`)
    replace(
      thread,
      data.data.length === 0
        ? h("p", { class: "muted" }, "No comments yet. Write to the author or the reviewers here.")
        : h(
          "ol",
          { class: "comments" },
          data.data.map((c) =>
            h(
              "li",
              { class: "comment" },
              h("p", { class: "muted" }, `${c.author_name ?? "A former member"} · `, time(c.created_at)),
              h("p", {}, c.body)
            )
          )
        )
    )
  }

  const form = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault()
        busy(submit, out, async () => {
          await api("POST", `/dashboard/api/posts/${postId}/comments`, { body: text.value })
          text.value = ""
          await draw()
          flash("Comment added.")
        }, { scope: form })
      }
    },
    field("Your comment", text, undefined, "body"),
    h("div", { class: "actions" }, submit),
    out
  )

  draw().then(
    () => section.append(form),
    // A member who did not write the post may not read its comments: the section stays away.
    (
      e
    ) => (e.status === 403
      ? section.remove()
      : replace(
        thread,
        h("p", { class: "notice bad", role: "alert" }, `The comments could not be loaded: ${e.message}`)
      ))
  )
  return section
}
