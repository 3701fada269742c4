// Building blocks of the pages: elements made without innerHTML (text is always text), times in the
// viewer's zone with the UTC instant on hover, status chips, notices, refusals under their fields.
import { plainError } from "./errors.js"

/** h("a", {href: "/x"}, "text", child) — attributes starting with "on" are listeners; null/false skipped. */
export const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value)
    else if (key === "class") el.className = value
    else if (key === "dataset") Object.assign(el.dataset, value)
    else if (value === true) el.setAttribute(key, "")
    else el.setAttribute(key, String(value))
  }
  append(el, children)
  return el
}

const append = (el, children) => {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue
    el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** Replaces the children of `el` (null, undefined and false are skipped, arrays flattened). */
export const replace = (el, ...children) => {
  el.replaceChildren()
  append(el, children)
  return el
}

let rendered = false

/**
 * Replaces the page's content. Every dashboard page is a full page load, which starts focus at the top
 * of the document (so the first Tab reaches the skip link) and announces the title: the first render
 * leaves focus alone, since moving it would skip the skip link and could take focus from a control the
 * user reached while the page's data loaded. A later render in the same document is a page change
 * within it, and moves focus to the new heading for screen readers.
 */
export const render = (title, ...children) => {
  const main = document.getElementById("main")
  document.title = `${title} · Herald`
  replace(main, h("h1", { tabindex: "-1" }, title), children)
  if (rendered) main.querySelector("h1").focus({ preventScroll: true })
  rendered = true
}

export const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })

/** <time> in the viewer's zone; the title (hover) carries the UTC instant. */
export const time = (iso) => {
  if (iso === null || iso === undefined) return h("span", { class: "muted" }, "—")
  const date = new Date(iso)
  return h("time", { datetime: date.toISOString(), title: `UTC: ${date.toISOString()}` }, dateTimeFormat.format(date))
}

/**
 * An instant in the viewer's zone, labelled with that zone; when the post was written in another
 * zone, its wall clock there follows, labelled with that zone ("15:00 Europe/Berlin · 09:00 in
 * America/New_York, the post's zone"). A time and a zone label never come from different zones.
 */
export const zonedTime = (iso, postZone) => {
  if (iso === null || iso === undefined) return h("span", { class: "muted" }, "—")
  const date = new Date(iso)
  const viewer = zone()
  const own = h(
    "time",
    { datetime: date.toISOString(), title: `UTC: ${date.toISOString()}` },
    `${dateTimeFormat.format(date)} (${viewer})`
  )
  if (!postZone || postZone === viewer) return own
  let there
  try {
    there = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: postZone }).format(
      date
    )
  } catch {
    return own
  }
  return h("span", {}, own, h("span", { class: "muted" }, ` · ${there} in ${postZone}, the post's zone`))
}

export const status = (value) =>
  value === null || value === undefined
    ? h("span", { class: "muted" }, "—")
    : h("span", { class: `status ${value}` }, value.replaceAll("_", " "))

export const notice = (text, kind = "") =>
  h("p", { class: `notice ${kind}`, role: kind === "bad" ? "alert" : "status" }, text)

/** A short message in the corner, read out by screen readers. */
export const flash = (text) => {
  const el = document.getElementById("flash")
  el.textContent = text
  clearTimeout(flash.timer)
  flash.timer = setTimeout(() => (el.textContent = ""), 5000)
}

/** The message of a failed call in plain words (field problems included), for where no field shows them. */
export const errorText = (error) => plainError(error).map((issue) => issue.message).join(" ")

/**
 * A labelled input. `path` names the request field it fills (e.g. "content",
 * "platform_content.x.settings.replySettings"): a refusal naming that field is shown under it.
 */
export const field = (labelText, input, hint, path) => {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`
  input.id = id
  const hintEl = hint ? h("p", { class: "muted", id: `${id}-hint` }, hint) : null
  if (hintEl) input.setAttribute("aria-describedby", hintEl.id)
  return h("div", { class: "field", "data-field": path ?? null }, h("label", { for: id }, labelText), input, hintEl)
}

/** Removes the refusals shown by `showError` under the fields of `scope`. */
export const clearErrors = (scope) => {
  for (const el of scope.querySelectorAll(".field-error")) el.remove()
  for (const el of scope.querySelectorAll("[aria-invalid]")) {
    el.removeAttribute("aria-invalid")
    const ids = (el.getAttribute("aria-describedby") ?? "").split(" ").filter((x) => x !== "" && !x.endsWith("-error"))
    if (ids.length === 0) el.removeAttribute("aria-describedby")
    else el.setAttribute("aria-describedby", ids.join(" "))
  }
}

/**
 * Shows a refusal once: each problem that names a field of `scope` (a `[data-field]` wrapper) under
 * that field, with the input marked invalid and described by it; the rest in `out`. Focus goes to
 * the first field in error.
 */
export const showError = (scope, out, error) => {
  clearErrors(scope)
  const rest = []
  let first = null
  for (const issue of plainError(error)) {
    const wrapper = issue.path ? scope.querySelector(`[data-field="${CSS.escape(issue.path)}"]`) : null
    const input = wrapper?.querySelector("input, select, textarea")
    if (!wrapper || wrapper.querySelector(".field-error")) {
      if (!wrapper) rest.push(issue.message)
      continue
    }
    // A field folded away (a platform's settings) opens to show its problem.
    for (let d = wrapper.closest("details"); d; d = d.parentElement?.closest("details")) d.open = true
    const id = `${input?.id ?? `e-${Math.random().toString(36).slice(2, 9)}`}-error`
    wrapper.append(h("p", { class: "field-error error", id }, issue.message))
    if (input) {
      input.setAttribute("aria-invalid", "true")
      input.setAttribute("aria-describedby", [input.getAttribute("aria-describedby"), id].filter(Boolean).join(" "))
      first ??= input
    }
  }
  if (out) replace(out, rest.length === 0 ? null : notice(rest.join(" "), "bad"))
  else if (rest.length > 0) flash(rest.join(" "))
  first?.focus()
}

export const checkbox = (labelText, attrs = {}) =>
  h("label", { class: "inline" }, h("input", { type: "checkbox", ...attrs }), labelText)

/**
 * A table in a frame that scrolls sideways when the table is wider than the screen; the frame takes
 * focus (and is a named region) so that keyboard users can scroll it too. Its name is the caption, else
 * "Table": the column headings would make it a second match for a field of the same name.
 */
export const table = (headers, rows, caption) =>
  h(
    "div",
    { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption ?? "Table" },
    h(
      "table",
      {},
      caption ? h("caption", { class: "muted" }, caption) : null,
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows)
    )
  )

let inFlight = false

/**
 * Runs one action at a time: while it is in flight every button of the page is disabled (a second
 * action, e.g. "Publish now" right after "Save draft", cannot start), and `aria-busy` says so. A
 * failure is shown by `showError` (under its fields in `scope`, the rest in `out`). With
 * `{ leaving: true }` the action ends by leaving the page, so on success the buttons stay locked
 * until the next page replaces them. `out` may be null (the message then flashes).
 */
export const busy = async (button, out, action, options = {}) => {
  if (inFlight) return undefined
  inFlight = true
  const main = document.getElementById("main")
  const locked = [...main.querySelectorAll("button:not([disabled])")]
  if (button && !locked.includes(button)) locked.push(button)
  for (const b of locked) b.disabled = true
  main.setAttribute("aria-busy", "true")
  let succeeded = false
  try {
    if (out) out.replaceChildren()
    const result = await action()
    succeeded = true
    return result
  } catch (e) {
    showError(options.scope ?? out?.parentElement ?? main, out, e)
    return undefined
  } finally {
    if (!(succeeded && options.leaving)) {
      inFlight = false
      main.removeAttribute("aria-busy")
      for (const b of locked) b.disabled = false
    }
  }
}

/** A message shown on the next page this tab opens (after an action that leaves the page). */
export const flashNext = (text) => {
  try {
    sessionStorage.setItem("herald.flash", text)
  } catch {
    // Storage refused: the next page shows nothing.
  }
}

/** Shows the message a previous page left with `flashNext`. */
export const showPendingFlash = () => {
  try {
    const text = sessionStorage.getItem("herald.flash")
    sessionStorage.removeItem("herald.flash")
    if (text) flash(text)
  } catch {
    // Storage refused.
  }
}

/**
 * Asks before an action that cannot be undone, in a modal dialog (focus stays inside, Escape
 * cancels); resolves true when confirmed.
 */
export const confirmAction = (question, confirmLabel) =>
  new Promise((resolve) => {
    const yes = h("button", { type: "button", class: "danger", value: "yes" }, confirmLabel)
    const no = h("button", { type: "button", class: "secondary", value: "no" }, "Cancel")
    const text = h("p", { id: `confirm-${Date.now()}` }, question)
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-labelledby": text.id },
      text,
      h("div", { class: "actions" }, yes, no)
    )
    const close = (answer) => {
      dialog.close()
      dialog.remove()
      resolve(answer)
    }
    yes.addEventListener("click", () => close(true))
    no.addEventListener("click", () => close(false))
    dialog.addEventListener("cancel", (e) => {
      e.preventDefault()
      close(false)
    })
    document.body.append(dialog)
    dialog.showModal()
    no.focus()
  })

/** A date as a datetime-local input shows it: the viewer's wall clock, to the second. */
export const localInputValue = (date) => {
  const pad = (n) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${
    pad(date.getMinutes())
  }:${pad(date.getSeconds())}`
}

/** The instant a datetime-local input names (the viewer's wall clock), as ISO 8601 UTC. */
export const instantOf = (input) => {
  if (input.value === "") return undefined
  return new Date(input.value).toISOString()
}

/**
 * Runs `redraw`, which may replace the element that has focus; focus then returns to its
 * replacement (same `data-focus-key` or id), so a page that refreshes itself never moves the
 * keyboard user.
 */
export const keepingFocus = (redraw) => {
  const active = document.activeElement
  const key = active?.dataset?.focusKey ?? (active?.id || null)
  redraw()
  if (active && active !== document.body && !active.isConnected && key) {
    const again = document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`) ?? document.getElementById(key)
    again?.focus({ preventScroll: true })
  }
}
