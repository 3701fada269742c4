// Approve, or request changes with a note: on the approvals inbox and on a post's page.
import { v1 } from "../api.js"
import { busy, field, flash, h } from "../ui.js"

/** `approved` runs after an approval, `changed` after a request for changes (`approved` when not given). */
export const reviewControls = (post, approved, changed = approved) => {
  const out = h("div", { "aria-live": "polite" })
  const approve = h("button", { type: "button", "data-action": "Approve" }, "Approve")
  approve.addEventListener("click", () =>
    busy(approve, out, async () => {
      await v1("POST", `/posts/${post.id}/approve`, {})
      flash("Approved.")
      await approved()
    }))
  const note = h("textarea", { name: "note", required: true, rows: "3" })
  const noteField = field("What should change", note, undefined, "note")
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
          await changed()
        })
      }
    },
    noteField,
    h("div", { class: "actions" }, send)
  )
  return h("section", { class: "review", "aria-label": "Review" }, h("div", { class: "actions" }, approve), form, out)
}
