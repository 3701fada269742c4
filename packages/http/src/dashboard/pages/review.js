// Approve, or request changes with a note: on the approvals inbox and on a post's page.
import { v1 } from "../api.js"
import { busy, field, flash, h } from "../ui.js"

export const reviewControls = (post, done) => {
  const out = h("div", { "aria-live": "polite" })
  const approve = h("button", { type: "button" }, "Approve")
  approve.addEventListener("click", () =>
    busy(approve, out, async () => {
      await v1("POST", `/posts/${post.id}/approve`, {})
      flash("Approved.")
      await done()
    }))
  const note = h("textarea", { name: "note", required: true, rows: "3" })
  const send = h("button", { type: "submit", class: "secondary" }, "Request changes")
  const form = h(
    "form",
    {
      "aria-label": "Request changes",
      onsubmit: (event) => {
        event.preventDefault()
        busy(send, out, async () => {
          await v1("POST", `/posts/${post.id}/request-changes`, { note: note.value })
          flash("Changes requested.")
          await done()
        })
      }
    },
    field("What should change", note),
    h("div", { class: "actions" }, send)
  )
  return h("section", { class: "review", "aria-label": "Review" }, h("div", { class: "actions" }, approve), form, out)
}
