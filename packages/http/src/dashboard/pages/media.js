// The media library: the organization's media, newest first and paged (GET /media), searched by
// file name or alt text, filtered by kind; upload (the presign, PUT, complete flow the composer uses),
// alt text set on a medium (PATCH /media/{id}), the posts that use a medium, and delete (DELETE
// /media/{id}). The API lets a medium in use be deleted: posts still to be sent then fail to publish
// it, so the confirmation names those posts first.
import { v1 } from "../api.js"
import { busy, confirmAction, errorText, field, flash, h, notice, render, replace, time } from "../ui.js"
import { put } from "./compose-parts.js"

const pageSize = 20

/** Every medium of the kind asked for (pages of 100), for a search the API cannot do itself. */
const everyMedium = async (type) => {
  const all = []
  for (let offset = 0;; offset += 100) {
    const page = await v1("GET", `/media?limit=100&offset=${offset}${type ? `&type=${type}` : ""}`)
    all.push(...page.media)
    if (!page.pagination.has_more) return all
  }
}

/** The posts that name the medium, in their media or a thread part's (every post is read, 100 at a time). */
export const postsUsing = async (id) => {
  const found = []
  for (let offset = 0;; offset += 100) {
    const page = await v1("GET", `/posts?limit=100&offset=${offset}`)
    for (const post of page.posts) {
      const named = (post.media_ids ?? []).includes(id) ||
        (post.threadPosts ?? []).some((p) => (p.media_ids ?? []).includes(id))
      if (named) found.push(post)
    }
    if (!page.pagination.has_more) return found
  }
}

const stillToSend = (post) =>
  post.status === "draft" || post.status === "scheduled" || post.status === "publishing" ||
  (post.destinations ?? []).some((d) => d.status === "queued" || d.status === "failed")

const sizeText = (bytes) =>
  bytes >= 1_048_576 ? `${Math.round(bytes / 104_857.6) / 10} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`

export default async () => {
  const query = new URLSearchParams(location.search)
  let search = query.get("q") ?? ""
  let kind = query.get("type") ?? ""
  let offset = Math.max(0, Number(query.get("offset") ?? 0) || 0)
  const out = h("div", { "aria-live": "polite" })
  const list = h("ul", { class: "media-library", id: "media-library" })
  const status = h("p", { class: "muted", id: "media-status", role: "status" })
  const pager = h("nav", { class: "actions", "aria-label": "Pages of media" })

  // search and filter
  const searchInput = h("input", { type: "search", name: "q", value: search })
  const kindSelect = h(
    "select",
    { name: "type" },
    h("option", { value: "" }, "All kinds"),
    ["image", "video", "document"].map((k) =>
      h("option", { value: k, selected: kind === k }, `${k[0].toUpperCase()}${k.slice(1)}s`)
    )
  )
  const searchForm = h(
    "form",
    { role: "search", "aria-label": "Search media", class: "filters" },
    field("Search by file name or alt text", searchInput),
    field("Kind", kindSelect),
    h("button", { type: "submit" }, "Search")
  )
  searchForm.addEventListener("submit", (e) => {
    e.preventDefault()
    search = searchInput.value.trim()
    kind = kindSelect.value
    offset = 0
    load()
  })

  // upload
  const fileInput = h("input", {
    type: "file",
    multiple: true,
    id: "library-file",
    accept: "image/*,video/*,application/pdf"
  })
  const uploads = h("ul", { class: "media-list", "aria-live": "polite" })
  const upload = async (file) => {
    const progress = h("progress", { max: "1", value: "0", "aria-label": `Upload of ${file.name}` })
    const line = h("span", {}, "uploading…")
    const item = h("li", {}, h("strong", {}, file.name), " ", progress, " ", line)
    uploads.append(item)
    try {
      const presigned = await v1("POST", "/media/upload", {
        filename: file.name,
        content_type: file.type || "application/octet-stream",
        file_size: file.size
      })
      await put(presigned.upload_url, file, presigned.upload_headers, (p) => (progress.value = p))
      const done = await v1("POST", `/media/${presigned.id}/complete`, {})
      progress.value = 1
      line.textContent = done.status === "ready" ? "uploaded" : `${done.status}${done.error ? `: ${done.error}` : ""}`
      offset = 0
      await load()
    } catch (e) {
      line.textContent = `failed: ${errorText(e)}`
      line.className = "error"
    }
  }
  fileInput.addEventListener("change", () => {
    for (const file of fileInput.files) upload(file)
    fileInput.value = ""
  })
  const dropzone = h(
    "div",
    { class: "dropzone", id: "library-dropzone" },
    h("p", {}, "Drop files here, or ", h("label", { for: "library-file" }, "choose files to upload"), "."),
    fileInput
  )
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

  /** One medium: what it is, its alt text, where it is used, delete. */
  const row = (m) => {
    const thumb = m.type === "image" && m.public_url
      ? h("img", { class: "thumb", src: m.public_url, alt: m.alt_text ?? "" })
      : h("span", { class: "thumb", "aria-hidden": "true" }, m.type)
    const usage = h("div", { "aria-live": "polite", "data-usage": m.id })
    const rowOut = h("div", { "aria-live": "polite" })
    const altId = `library-alt-${m.id}`
    const alt = h("textarea", { id: altId, rows: "2", "data-alt": m.id })
    alt.value = m.alt_text ?? ""
    const altCount = h("p", { class: "counter", id: `${altId}-count` }, `${[...alt.value].length} / 1000 characters`)
    alt.setAttribute("aria-describedby", altCount.id)
    alt.addEventListener("input", () => (altCount.textContent = `${[...alt.value].length} / 1000 characters`))
    const saveAlt = h(
      "button",
      { type: "button", class: "secondary", "aria-label": `Save alt text of ${m.filename}` },
      "Save alt text"
    )
    const altForm = h(
      "div",
      { class: "field", "data-field": "alt_text" },
      h("label", { for: altId }, `Alt text for ${m.filename}`),
      alt,
      altCount,
      saveAlt
    )
    saveAlt.addEventListener("click", () =>
      busy(saveAlt, rowOut, async () => {
        const text = alt.value.trim()
        const saved = await v1("PATCH", `/media/${encodeURIComponent(m.id)}`, { alt_text: text === "" ? null : text })
        m.alt_text = saved.alt_text
        alt.value = saved.alt_text ?? ""
        flash(`Alt text of ${m.filename} saved.`)
      }, { scope: altForm }))
    const where = h(
      "button",
      { type: "button", class: "secondary", "aria-label": `Where it is used: ${m.filename}` },
      "Where it is used"
    )
    where.addEventListener("click", () =>
      busy(where, rowOut, async () => {
        replace(usage, h("p", { class: "muted" }, "Looking through the posts…"))
        const posts = await postsUsing(m.id)
        replace(
          usage,
          posts.length === 0
            ? h("p", { "data-usage-count": "0" }, "Not used by any post.")
            : h(
              "div",
              {},
              h(
                "p",
                { "data-usage-count": String(posts.length) },
                `Used by ${posts.length} post${posts.length === 1 ? "" : "s"}:`
              ),
              h(
                "ul",
                {},
                posts.map((p) =>
                  h(
                    "li",
                    {},
                    h("a", { href: `/posts/${p.id}` }, (p.content || "(no text)").slice(0, 60)),
                    ` · ${p.status}`
                  )
                )
              )
            )
        )
      }))
    const remove = h("button", { type: "button", class: "danger", "aria-label": `Delete ${m.filename}` }, "Delete")
    remove.addEventListener("click", () =>
      busy(remove, rowOut, async () => {
        const posts = await postsUsing(m.id)
        const pending = posts.filter(stillToSend)
        const question = pending.length > 0
          ? `Delete ${m.filename}? ${pending.length} post${pending.length === 1 ? "" : "s"} still to be sent use${
            pending.length === 1 ? "s" : ""
          } it and will fail to publish it.`
          : posts.length > 0
          ? `Delete ${m.filename}? It stays on the platforms where it was published; the ${posts.length} post${
            posts.length === 1 ? "" : "s"
          } that used it keep their published copies.`
          : `Delete ${m.filename}? This cannot be undone.`
        if (!(await confirmAction(question, "Delete"))) return
        await v1("DELETE", `/media/${encodeURIComponent(m.id)}`)
        flash(`${m.filename} deleted.`)
        setTimeout(load, 0)
      }))
    return h(
      "li",
      { class: "card", "data-medium": m.id },
      thumb,
      h(
        "div",
        { class: "info" },
        h("h3", {}, m.filename),
        h(
          "p",
          { class: "muted" },
          [
            m.mime_type,
            sizeText(m.size),
            m.width && m.height ? `${m.width} × ${m.height}` : null,
            m.duration_ms ? `${Math.round(m.duration_ms / 100) / 10} s` : null,
            m.status === "ready" ? null : m.status.replaceAll("_", " ")
          ].filter(Boolean).join(" · "),
          " · added ",
          time(m.created_at)
        ),
        m.error ? h("p", { class: "error" }, m.error) : null,
        m.type === "image" ? altForm : null,
        h("div", { class: "actions" }, where, remove),
        usage,
        rowOut
      )
    )
  }

  const load = async () => {
    const params = new URLSearchParams()
    if (search) params.set("q", search)
    if (kind) params.set("type", kind)
    if (offset > 0) params.set("offset", String(offset))
    history.replaceState(null, "", `/media${params.size > 0 ? `?${params}` : ""}`)
    status.textContent = "Loading…"
    try {
      let items
      let total
      if (search) {
        const needle = search.toLowerCase()
        const matching = (await everyMedium(kind)).filter((m) =>
          m.filename.toLowerCase().includes(needle) || (m.alt_text ?? "").toLowerCase().includes(needle)
        )
        total = matching.length
        items = matching.slice(offset, offset + pageSize)
      } else {
        const page = await v1("GET", `/media?limit=${pageSize}&offset=${offset}${kind ? `&type=${kind}` : ""}`)
        total = page.pagination.total
        items = page.media
      }
      if (items.length === 0 && offset > 0 && total > 0) {
        offset = Math.max(0, Math.floor((total - 1) / pageSize) * pageSize)
        return load()
      }
      replace(list, items.map(row))
      status.textContent = total === 0
        ? (search || kind ? "No media match." : "The library is empty: upload a file to start.")
        : `Showing ${offset + 1}–${offset + items.length} of ${total}${search ? ` matching “${search}”` : ""}.`
      const previous = h("button", { type: "button", class: "secondary", disabled: offset === 0 }, "Previous page")
      const next = h(
        "button",
        { type: "button", class: "secondary", disabled: offset + items.length >= total },
        "Next page"
      )
      previous.addEventListener("click", () => {
        offset = Math.max(0, offset - pageSize)
        load()
      })
      next.addEventListener("click", () => {
        offset += pageSize
        load()
      })
      replace(pager, total > pageSize ? [previous, " ", next] : null)
    } catch (e) {
      status.textContent = ""
      replace(out, notice(`The media could not be loaded: ${errorText(e)}`, "bad"))
    }
  }

  render(
    "Media library",
    out,
    h(
      "section",
      { "aria-labelledby": "upload-heading" },
      h("h2", { id: "upload-heading" }, "Upload"),
      dropzone,
      uploads
    ),
    h(
      "section",
      { "aria-labelledby": "library-heading" },
      h("h2", { id: "library-heading" }, "Library"),
      searchForm,
      status,
      list,
      pager
    )
  )
  await load()
}
