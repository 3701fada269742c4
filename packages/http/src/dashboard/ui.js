// Building blocks of the pages: elements made without innerHTML (text is always text), times in the
// viewer's zone with the UTC instant on hover, status chips, notices.

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

export const status = (value) =>
  value === null || value === undefined ? h("span", { class: "muted" }, "—") : h("span", { class: `status ${value}` }, value.replaceAll("_", " "))

export const notice = (text, kind = "") => h("p", { class: `notice ${kind}`, role: kind === "bad" ? "alert" : "status" }, text)

/** A short message in the corner, read out by screen readers. */
export const flash = (text) => {
  const el = document.getElementById("flash")
  el.textContent = text
  clearTimeout(flash.timer)
  flash.timer = setTimeout(() => (el.textContent = ""), 5000)
}

/** The message of a failed API call, with validation details when there are any. */
export const errorText = (error) => {
  const details = error?.details?.validation_errors
  const parts = Array.isArray(details) ? details.map((d) => `${d.path}: ${d.message}`) : []
  return [error?.message ?? "Something went wrong", ...parts].join(" — ")
}

export const field = (labelText, input, hint) => {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`
  input.id = id
  const hintEl = hint ? h("p", { class: "muted", id: `${id}-hint` }, hint) : null
  if (hintEl) input.setAttribute("aria-describedby", hintEl.id)
  return h("div", {}, h("label", { for: id }, labelText), input, hintEl)
}

export const checkbox = (labelText, attrs = {}) => h("label", { class: "inline" }, h("input", { type: "checkbox", ...attrs }), labelText)

export const table = (headers, rows, caption) =>
  h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      caption ? h("caption", { class: "muted" }, caption) : null,
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows)
    )
  )

/** Disables a button while an action runs; shows failures in `out` (an element) instead of throwing. */
export const busy = async (button, out, action) => {
  button.disabled = true
  try {
    if (out) out.replaceChildren()
    return await action()
  } catch (e) {
    if (out) replace(out, notice(errorText(e), "bad"))
    else flash(errorText(e))
    return undefined
  } finally {
    button.disabled = false
  }
}
