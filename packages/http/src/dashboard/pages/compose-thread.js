// Two pieces of the composer: the thread composer (the post's further parts, sent as the request's
// top-level `threadPosts`, published as replies on the platforms whose rules say `threads`), and the
// alt-text field of an image (stored on the medium itself with PATCH /media/{id}, so every platform
// that takes alt text gets it), with a counter against the limits the targeted platforms set.
import { v1 } from "../api.js"
import { errorText, h, replace } from "../ui.js"
import { countLine, platformName } from "./preview.js"

/** The newest ready media of the library, loaded once per composer when a part's picker first opens. */
const readyMedia = () => {
  let loading
  return () => (loading ??= v1("GET", "/media?limit=20").then((page) => page.media.filter((m) => m.status === "ready")))
}

/**
 * A part's media: the media chosen for it (each removable) and a picker over the library's ready
 * media. `names` maps a medium's id to its file name (looked up for media the part came with).
 */
const partMedia = (part, i, names, library, changed) => {
  const ids = part.media_ids ?? []
  const listId = `thread-media-${i}`
  const chosen = h(
    "ul",
    { class: "media-list", id: listId, "aria-label": `Media of part ${i + 2}` },
    ids.map((id) => {
      const name = names.get(id) ?? "a medium"
      const remove = h(
        "button",
        { type: "button", class: "link", "aria-label": `Remove ${name} from part ${i + 2}` },
        "Remove"
      )
      remove.addEventListener("click", () => {
        part.media_ids = ids.filter((x) => x !== id)
        if (part.media_ids.length === 0) delete part.media_ids
        changed(true)
      })
      return h("li", { "data-thread-medium": id }, name, " ", remove)
    })
  )
  const options = h("ul", { class: "media-list", "aria-live": "polite" })
  const picker = h("details", { class: "thread-media-picker" }, h("summary", {}, `Add media to part ${i + 2}`), options)
  picker.addEventListener("toggle", async () => {
    if (!picker.open) return
    replace(options, h("li", { class: "muted" }, "Loading…"))
    try {
      const ready = await library()
      replace(
        options,
        ready.length === 0
          ? h("li", { class: "muted" }, "The library has no ready media yet: upload some in the media library.")
          : ready.map((m) => {
            names.set(m.id, m.filename)
            const add = h("button", {
              type: "button",
              class: "secondary",
              "aria-label": `Add ${m.filename} to part ${i + 2}`,
              disabled: ids.includes(m.id)
            }, "Add")
            add.addEventListener("click", () => {
              if ((part.media_ids ?? []).includes(m.id)) return
              part.media_ids = [...(part.media_ids ?? []), m.id]
              changed(true)
            })
            return h("li", { "data-library-medium": m.id }, `${m.filename} (${m.type}) `, add)
          })
      )
    } catch (e) {
      replace(options, h("li", { class: "error" }, `The library could not be loaded: ${errorText(e)}`))
    }
  })
  return h("div", { class: "thread-media" }, ids.length > 0 ? chosen : null, picker)
}

/**
 * The thread's parts after the main text. `initial`: the post's `threadPosts` ({content, media_ids?});
 * each part may carry media from the library (`media_ids`), checked per platform by the API when the
 * post is sent. `onChange` runs after every edit.
 */
export const threadComposer = (initial, onChange) => {
  const parts = initial.map((p) => ({
    content: p.content,
    ...(p.media_ids?.length ? { media_ids: [...p.media_ids] } : {})
  }))
  const list = h("ol", { class: "thread-parts", start: "2" })
  const hint = h("p", { class: "muted", id: "thread-hint" })
  const add = h("button", { type: "button", class: "secondary", "data-thread-add": "" }, "Add a part")
  const element = h(
    "fieldset",
    { class: "thread-composer", id: "thread", "data-field": "threadPosts", hidden: true },
    h("legend", {}, "Thread"),
    hint,
    list,
    add
  )
  let counts = { platforms: [], get: () => undefined }
  const names = new Map()
  const library = readyMedia()
  // The file names of media a part came with (an edited post, restored work), looked up once each.
  const lookUpNames = () => {
    const unknown = [...new Set(parts.flatMap((p) => p.media_ids ?? []))].filter((id) => !names.has(id))
    if (unknown.length === 0) return
    for (const id of unknown) names.set(id, "a medium")
    Promise.all(
      unknown.map((id) =>
        v1("GET", `/media/${encodeURIComponent(id)}`).then((m) => names.set(id, m.filename), () => {})
      )
    ).then(draw)
  }

  const counterText = (i) =>
    counts.platforms.map((p) => {
      const measured = counts.get(p, i)
      if (!measured || measured.text !== parts[i]?.content) return `${platformName(p)}: counting…`
      const line = countLine(measured)
      return `${platformName(p)}: ${line.text}${line.over ? " (too long)" : ""}`
    }).join(" · ")

  const draw = () => {
    lookUpNames()
    replace(
      list,
      parts.map((part, i) => {
        const box = h("textarea", {
          rows: "3",
          "data-thread-part": String(i),
          id: `thread-part-${i}`,
          "aria-describedby": `thread-counter-${i}`
        })
        box.value = part.content
        box.addEventListener("input", () => {
          part.content = box.value
          onChange()
        })
        const remove = h("button", { type: "button", class: "link", "aria-label": `Remove part ${i + 2}` }, "Remove")
        remove.addEventListener("click", () => {
          parts.splice(i, 1)
          draw()
          onChange()
          ;(list.querySelector(`#thread-part-${Math.min(i, parts.length - 1)}`) ?? add).focus()
        })
        return h(
          "li",
          { class: "field", "data-field": `threadPosts.${i}.content` },
          h("label", { for: box.id }, `Part ${i + 2}`),
          box,
          h("p", { class: "counter", id: `thread-counter-${i}`, "aria-live": "polite" }, counterText(i)),
          partMedia(part, i, names, library, () => {
            draw()
            onChange()
            list.querySelector(`#thread-part-${i}`)?.focus()
          }),
          remove
        )
      })
    )
  }
  add.addEventListener("click", () => {
    parts.push({ content: "" })
    draw()
    onChange()
    list.querySelector(`#thread-part-${parts.length - 1}`)?.focus()
  })
  draw()

  return {
    element,
    parts: () => parts.map((p) => ({ ...p })),
    set: (saved) => {
      parts.splice(
        0,
        parts.length,
        ...saved.filter((p) => typeof p?.content === "string").map((p) => ({
          content: p.content,
          ...(p.media_ids?.length ? { media_ids: p.media_ids } : {})
        }))
      )
      draw()
    },
    /** Shown while a platform that publishes threads is targeted (`names`: those platforms). */
    show: (names) => {
      element.hidden = names.length === 0
      hint.textContent = names.length === 0
        ? ""
        : `The main text is part 1. Further parts are published as replies on ${
          names.join(", ")
        }; other platforms get part 1 only.`
    },
    showCounts: (platforms, get) => {
      counts = { platforms, get }
      parts.forEach((_, i) => {
        const counter = list.querySelector(`#thread-counter-${i}`)
        if (!counter) return
        const text = counterText(i)
        counter.textContent = text
        counter.className = /too long/.test(text) ? "counter over" : "counter"
      })
    }
  }
}

/**
 * The alt text of one image, stored on the medium when the field is left (`entry.altSaving` is the
 * write in flight, for the composer to wait on before sending the post). `limits()`: the targeted
 * platforms' own alt-text limits [{name, limit}]; a text over one is cut there by that platform.
 */
export const altTextField = (entry, limits, onChange) => {
  const id = `alt-${entry.id}`
  const input = h("textarea", { id, rows: "2", "data-alt": entry.id, "aria-describedby": `${id}-count` })
  input.value = entry.alt_text ?? ""
  const counter = h("p", { class: "counter", id: `${id}-count`, "aria-live": "polite", "data-alt-refresh": "" })
  const state = h("span", { class: "muted", "data-alt-state": entry.id })
  const refresh = () => {
    const length = [...input.value.trim()].length
    const over = limits().filter((l) => length > l.limit)
    counter.className = over.length > 0 ? "counter over" : "counter"
    counter.textContent = [
      `${length} characters`,
      ...limits().map((l) =>
        `${l.name}: ${length} / ${l.limit}${length > l.limit ? ` (${l.name} keeps the first ${l.limit})` : ""}`
      )
    ].join(" · ")
  }
  counter.addEventListener("refresh", refresh)
  input.addEventListener("input", () => {
    entry.alt_text = input.value
    refresh()
    onChange()
  })
  let stored = entry.alt_text ?? ""
  input.addEventListener("change", () => {
    const text = input.value.trim()
    if (text === stored.trim()) return
    state.textContent = "Saving…"
    entry.altSaving = v1("PATCH", `/media/${encodeURIComponent(entry.id)}`, { alt_text: text === "" ? null : text })
      .then((saved) => {
        stored = saved.alt_text ?? ""
        entry.alt_text = saved.alt_text
        state.textContent = "Saved."
        state.className = "muted"
      })
      .catch((e) => {
        state.textContent = `Not saved: ${errorText(e)}`
        state.className = "error"
      })
      .finally(() => {
        entry.altSaving = null
      })
  })
  refresh()
  return h(
    "div",
    { class: "field alt-field", "data-field": `alt_text.${entry.id}` },
    h("label", { for: id }, `Alt text for ${entry.filename}`),
    input,
    counter,
    state
  )
}
