// What can be done to one post, on its page and in the approvals inbox: schedule, publish or queue
// a draft; reschedule a scheduled post; edit, duplicate or delete any post. Which of these a state
// allows is the server's rule: the controls offer them, a refusal is shown under the field it names.
import { v1 } from "../api.js"
import { busy, confirmAction, field, flashNext, h, instantOf, localInputValue, zone } from "../ui.js"

const soon = () => new Date(Date.now() + 3_600_000)

/** A draft that may be scheduled: it never asked for approval, or an owner approved it. */
export const mayPublish = (post) => post.draft && (post.approval_status === null || post.approval_status === "approved")

/** Some destination still waits for its time (the one thing a reschedule moves). */
export const waiting = (post) =>
  !post.draft && (post.destinations ?? []).some((d) => d.status === "queued") && post.scheduled_for !== null

const actionButton = (label, cls, onClick) => {
  const el = h(
    "button",
    { type: "button", class: cls, "data-action": label, "data-focus-key": `action-${label}` },
    label
  )
  el.addEventListener("click", () => onClick(el))
  return el
}

/**
 * Schedule (at the time picked), Publish now, Add to queue for a draft that may publish.
 * `done(label)` runs after the server took it.
 */
export const draftActions = (post, done) => {
  const out = h("div", { "aria-live": "polite" })
  const start = post.scheduled_for && Date.parse(post.scheduled_for) > Date.now() + 60_000
    ? new Date(post.scheduled_for)
    : soon()
  const when = h("input", {
    type: "datetime-local",
    name: "scheduled_for",
    step: "1",
    value: localInputValue(start),
    "data-focus-key": "draft-time"
  })
  const section = h("section", { class: "post-actions", "aria-labelledby": `publish-${post.id}` })
  const send = (label, body) => (button) =>
    busy(button, out, async () => {
      await v1("POST", `/posts/${post.id}/schedule`, body())
      await done(label)
    }, { scope: section })
  section.append(
    h(
      "h2",
      { id: `publish-${post.id}` },
      post.approval_status === "approved" ? "Approved: publish it" : "Publish this draft"
    ),
    h(
      "div",
      { class: "inline-form" },
      field(`Time (your zone, ${zone()})`, when, undefined, "scheduled_for"),
      h(
        "div",
        { class: "actions", "data-field": "use_queue" },
        actionButton(
          "Schedule",
          "",
          send("Schedule", () => {
            const at = instantOf(when)
            if (at === undefined) {
              throw Object.assign(new Error("Pick a date and time."), { details: { fields: ["scheduled_for"] } })
            }
            return { scheduled_for: at, timezone: zone() }
          })
        ),
        actionButton("Publish now", "secondary", send("Publish now", () => ({ publish_now: true }))),
        actionButton("Add to queue", "secondary", send("Add to queue", () => ({ use_queue: true })))
      )
    ),
    out
  )
  return section
}

/** A new time for a scheduled post (PATCH scheduled_for). */
export const rescheduleForm = (post, done) => {
  const out = h("div", { "aria-live": "polite" })
  const when = h("input", {
    type: "datetime-local",
    name: "scheduled_for",
    step: "1",
    value: localInputValue(new Date(post.scheduled_for)),
    "data-focus-key": "reschedule-time"
  })
  const form = h("form", { class: "post-actions", "aria-label": "Reschedule" })
  const submit = actionButton("Reschedule", "", (button) =>
    busy(button, out, async () => {
      const at = instantOf(when)
      if (at === undefined) {
        throw Object.assign(new Error("Pick a date and time."), { details: { fields: ["scheduled_for"] } })
      }
      await v1("PATCH", `/posts/${post.id}`, { scheduled_for: at })
      await done("Rescheduled")
    }, { scope: form }))
  form.addEventListener("submit", (e) => {
    e.preventDefault()
    submit.click()
  })
  form.append(
    h(
      "div",
      { class: "inline-form" },
      field(`New time (your zone, ${zone()})`, when, undefined, "scheduled_for"),
      h("div", { class: "actions" }, submit)
    ),
    out
  )
  return form
}

/** Edit, Duplicate and Delete (after a confirmation), for any post. */
export const postTools = (post, out) => {
  const editable = post.status !== "publishing" && post.status !== "published"
  const remove = actionButton("Delete", "danger", async (button) => {
    const what = post.draft
      ? "this draft"
      : post.status === "scheduled"
      ? "this scheduled post; it will not be published"
      : "this post (copies already published stay on the platforms)"
    if (!(await confirmAction(`Delete ${what}? This cannot be undone.`, "Delete post"))) return
    await busy(button, out, async () => {
      await v1("DELETE", `/posts/${post.id}`)
      flashNext("Post deleted.")
      location.assign("/posts")
    }, { leaving: true })
  })
  return h(
    "div",
    { class: "actions", role: "group", "aria-label": "Post tools" },
    editable
      ? h(
        "a",
        { class: "button", href: `/compose?post=${post.id}`, "data-focus-key": "tool-edit" },
        post.draft ? "Edit draft" : "Edit"
      )
      : null,
    h("a", { class: "button", href: `/compose?from=${post.id}`, "data-focus-key": "tool-duplicate" }, "Duplicate"),
    post.status === "publishing" ? null : remove
  )
}
