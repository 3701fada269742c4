// The composer's media: uploads (a file input and a drop zone, each file presigned, sent and
// completed), the library picker, and per image the alt-text field. `media` is the composer's list of
// the post's media ({id, filename, type, mime_type, status, width, height, alt_text, src}), edited in
// place; `changed` runs after every change.
import { v1 } from "../api.js"
import { errorText, h, replace } from "../ui.js"
import { put } from "./compose-parts.js"
import { altTextField } from "./compose-thread.js"
import { platformName } from "./preview.js"

export const loadMedia = (ids) =>
  Promise.all(
    ids.map((id) =>
      v1("GET", `/media/${id}`).catch(() => ({
        id,
        filename: "a file no longer in the library",
        type: "image",
        mime_type: "",
        status: "missing"
      }))
    )
  )

export const mediaSection = ({ media, rules, chosenPlatforms, changed }) => {
  const mediaList = h("ul", { class: "media-list", "aria-live": "polite" })
  const fileInput = h("input", {
    type: "file",
    multiple: true,
    id: "media-file",
    accept: "image/*,video/*,application/pdf"
  })
  const dropzone = h(
    "div",
    { class: "dropzone", id: "dropzone" },
    h("p", {}, "Drop images or videos here, or ", h("label", { for: "media-file" }, "choose files"), "."),
    fileInput
  )
  const listed = (entry, item) => {
    entry.item = item
    const remove = h("button", { type: "button", class: "link", "aria-label": `Remove ${entry.filename}` }, "Remove")
    remove.addEventListener("click", () => {
      media.splice(media.indexOf(entry), 1)
      item.remove()
      changed()
    })
    item.append(" ", remove, h("ul", { class: "renditions muted", "data-media": entry.id }))
    if (entry.type === "image" && entry.status !== "missing") {
      item.append(altTextField(entry, altLimits, changed))
    }
  }
  /** The alt-text limits of the targeted platforms that have one (their settings' own limits). */
  const altLimits = () =>
    chosenPlatforms().flatMap((p) =>
      Object.entries(rules[p]?.settings ?? {})
        .filter(([name, s]) => /alttext/i.test(name) && s.max_length && rules[p].media.kinds.includes("image"))
        .map(([, s]) => ({ platform: p, name: platformName(p), limit: s.max_length }))
    )
  for (const entry of media) {
    const item = h("li", {}, h("strong", {}, entry.filename), " ", h("span", {}, entry.status))
    mediaList.append(item)
    listed(entry, item)
  }
  const upload = async (file) => {
    const progress = h("progress", { max: "1", value: "0", "aria-label": `Upload of ${file.name}` })
    const line = h("span", {}, "uploading…")
    const preview = file.type.startsWith("image/") ? h("img", { src: URL.createObjectURL(file), alt: "" }) : null
    const item = h("li", {}, preview, h("strong", {}, file.name), " ", progress, " ", line)
    mediaList.append(item)
    try {
      const presigned = await v1("POST", "/media/upload", {
        filename: file.name,
        content_type: file.type || "application/octet-stream",
        file_size: file.size
      })
      await put(presigned.upload_url, file, presigned.upload_headers, (p) => (progress.value = p))
      const done = await v1("POST", `/media/${presigned.id}/complete`, {})
      progress.value = 1
      line.textContent = done.status === "ready" ? "ready" : `${done.status}${done.error ? `: ${done.error}` : ""}`
      const entry = { ...done, src: preview?.src ?? done.public_url ?? null }
      media.push(entry)
      listed(entry, item)
      // Uploads finish in any order; the post's media keep the order the files are listed in.
      media.sort((a, b) => (a.item.compareDocumentPosition(b.item) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1))
      changed()
    } catch (e) {
      line.textContent = `failed: ${errorText(e)}`
      line.className = "error"
    }
  }
  // Media already in the library: the newest 20 ready ones, offered when the picker opens.
  const libraryList = h("ul", { class: "media-list", id: "library-picker-list", "aria-live": "polite" })
  const libraryPicker = h(
    "details",
    { id: "library-picker" },
    h("summary", {}, "Choose from the media library"),
    libraryList,
    h("p", {}, h("a", { href: "/media" }, "Open the media library"))
  )
  libraryPicker.addEventListener("toggle", async () => {
    if (!libraryPicker.open) return
    replace(libraryList, h("li", { class: "muted" }, "Loading…"))
    try {
      const page = await v1("GET", "/media?limit=20")
      const ready = page.media.filter((m) => m.status === "ready")
      replace(
        libraryList,
        ready.length === 0 ? h("li", { class: "muted" }, "The library has no ready media yet.") : ready.map((m) => {
          const add = h("button", {
            type: "button",
            class: "secondary",
            "aria-label": `Add ${m.filename}`,
            disabled: media.some((x) => x.id === m.id)
          }, "Add")
          add.addEventListener("click", () => {
            if (media.some((x) => x.id === m.id)) return
            const entry = { ...m, src: m.public_url ?? null }
            media.push(entry)
            const item = h("li", {}, h("strong", {}, entry.filename), " ", h("span", {}, entry.status))
            mediaList.append(item)
            listed(entry, item)
            add.disabled = true
            changed()
          })
          return h(
            "li",
            { "data-library-medium": m.id },
            `${m.filename} (${m.type}${m.width && m.height ? `, ${m.width} × ${m.height}` : ""}) `,
            add
          )
        })
      )
    } catch (e) {
      replace(libraryList, h("li", { class: "error" }, `The library could not be loaded: ${errorText(e)}`))
    }
  })
  fileInput.addEventListener("change", () => {
    for (const file of fileInput.files) upload(file)
    fileInput.value = ""
  })
  dropzone.addEventListener("dragover", (e) => {
    e.preventDefault()
    dropzone.classList.add("over")
  })
  dropzone.addEventListener("dragleave", () => dropzone.classList.remove("over"))
  dropzone.addEventListener("drop", (e) => {
    e.preventDefault()
    dropzone.classList.remove("over")
    for (const file of e.dataTransfer?.files ?? []) upload(file)
  })
  /** Replaces the post's media (work in progress restored) and lists them again. */
  const show = (entries) => {
    media.splice(0, media.length, ...entries)
    replace(mediaList)
    for (const entry of media) {
      const item = h("li", {}, h("strong", {}, entry.filename), " ", h("span", {}, entry.status))
      mediaList.append(item)
      listed(entry, item)
    }
  }
  return { list: mediaList, dropzone, libraryPicker, show }
}
