// Rescheduling by drag on the calendar: a post dropped on another day keeps its wall-clock time in
// the viewer's zone and moves to that day; dropped on an hour of the week by hour, it moves to that
// day and hour and keeps its minutes (PATCH scheduled_for). The move can be undone from the
// message it leaves. Only what a reschedule can move is draggable: a scheduled post still waiting,
// or a draft with a time. The post page's Reschedule form is the way to do the same by keyboard.
import { v1 } from "../api.js"
import { busy, errorText, h, replace } from "../ui.js"
import { excerpt } from "./shared.js"

/** A post a drag may move. */
export const movable = (post) =>
  post.scheduled_for !== null && (post.draft || (post.destinations ?? []).some((d) => d.status === "queued"))

/**
 * The instant at the same wall-clock time as `iso`, on `day` (YYYY-MM-DD), in the viewer's zone; with
 * `hour`, at that hour and the same minutes.
 */
export const onDay = (iso, day, hour) => {
  const t = new Date(iso)
  const [y, m, d] = day.split("-").map(Number)
  return new Date(y, m - 1, d, hour ?? t.getHours(), t.getMinutes(), t.getSeconds(), t.getMilliseconds())
}

const when = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit"
})

/**
 * Makes the posts under `root` (`[data-post]` elements) draggable onto its days (`[data-day]`).
 * `posts` finds a post by id; `status` is where the move and its Undo are said; `redraw` runs after a
 * move or an undo.
 */
export const enableMoves = (root, posts, status, redraw) => {
  const move = async (post, to, undoOf) => {
    await busy(null, status, async () => {
      await v1("PATCH", `/posts/${post.id}`, { scheduled_for: to })
      const text = `${undoOf ? "Moved back" : "Moved"} “${excerpt(post.content, 40)}” to ${when.format(new Date(to))}.`
      if (undoOf) replace(status, h("p", { class: "notice ok" }, text))
      else {
        const undo = h("button", { type: "button", class: "secondary", "data-action": "Undo" }, "Undo")
        undo.addEventListener("click", () => move({ ...post, scheduled_for: to }, post.scheduled_for, true))
        replace(status, h("p", { class: "notice ok" }, text, " ", undo))
        undo.focus()
      }
      await redraw()
    }, { scope: status })
  }
  for (const el of root.querySelectorAll("[data-post]")) {
    const post = posts.get(el.dataset.post)
    if (post && movable(post)) {
      el.draggable = true
      el.classList.add("movable")
    }
  }
  root.addEventListener("dragstart", (e) => {
    const el = e.target.closest?.("[data-post][draggable=true]")
    if (!el) return
    e.dataTransfer.setData("text/plain", el.dataset.post)
    e.dataTransfer.effectAllowed = "move"
  })
  root.addEventListener("dragover", (e) => {
    const day = e.target.closest?.("[data-day]")
    if (!day) return
    e.preventDefault()
    e.dataTransfer.dropEffect = "move"
    day.classList.add("drop")
  })
  root.addEventListener("dragleave", (e) => e.target.closest?.("[data-day]")?.classList.remove("drop"))
  root.addEventListener("drop", (e) => {
    const day = e.target.closest?.("[data-day]")
    if (!day) return
    e.preventDefault()
    day.classList.remove("drop")
    const post = posts.get(e.dataTransfer.getData("text/plain"))
    if (!post || !movable(post)) return
    const hour = day.dataset.hour === undefined ? undefined : Number(day.dataset.hour)
    const to = onDay(post.scheduled_for, day.dataset.day, hour)
    if (to.getTime() === Date.parse(post.scheduled_for)) return
    move(post, to.toISOString(), false).catch((error) =>
      replace(status, h("p", { class: "notice bad", role: "alert" }, errorText(error)))
    )
  })
}
