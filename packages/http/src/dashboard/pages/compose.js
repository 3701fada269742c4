import { v1 } from "../api.js"
import { busy, checkbox, errorText, field, h, notice, render, replace, zone } from "../ui.js"
import { accounts as loadAccounts, campaigns as loadCampaigns, settingLabel } from "./shared.js"

// Counting as each platform counts (GET /platform-rules names the unit). X's weighted count is
// approximated here (URLs 23, CJK and emoji 2): the server's count decides.

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" })
const light = (cp) => cp <= 4351 || (cp >= 8192 && cp <= 8205) || (cp >= 8208 && cp <= 8223) || (cp >= 8242 && cp <= 8247)
const urlPattern = /https?:\/\/[^\s]+/g

export const count = (text, unit) => {
  switch (unit) {
    case "graphemes":
      return [...segmenter.segment(text)].length
    case "utf16_units":
      return text.length
    case "bytes":
      return new TextEncoder().encode(text).length
    case "weighted_characters": {
      const normalized = text.normalize("NFC")
      const urls = normalized.match(urlPattern) ?? []
      let total = urls.length * 23
      for (const ch of normalized.replace(urlPattern, "")) total += light(ch.codePointAt(0)) ? 1 : 2
      return total
    }
    default:
      return [...text].length
  }
}

const settingInput = (name, setting) => {
  const common = { name, "data-setting": name, "data-type": setting.type }
  switch (setting.type) {
    case "enum":
      return h("select", common, h("option", { value: "" }, "Platform default"), (setting.values ?? []).map((v) => h("option", { value: v }, v)))
    case "boolean":
      return h("select", common, h("option", { value: "" }, "Platform default"), h("option", { value: "true" }, "Yes"), h("option", { value: "false" }, "No"))
    case "integer":
      return h("input", { ...common, type: "number", step: "1", ...(setting.minimum === undefined ? {} : { min: setting.minimum }) })
    default:
      return h("input", { ...common, type: setting.type === "url" ? "url" : "text", ...(setting.max_length ? { maxlength: setting.max_length } : {}) })
  }
}

const settingValue = (input) => {
  const value = input.value.trim()
  if (value === "") return undefined
  switch (input.dataset.type) {
    case "boolean":
      return value === "true"
    case "integer":
      return Number(value)
    case "string_array":
      return value.split(",").map((s) => s.trim()).filter((s) => s !== "")
    default:
      return value
  }
}

const megabytes = (bytes) => `${Math.round((bytes / 1_048_576) * 10) / 10} MB`

/**
 * What each targeted platform will get of a file: JPEG, PNG and WebP always leave through a re-encoded
 * rendition (it drops their metadata), types a platform does not take become a JPEG, GIFs, videos and
 * documents go as they are; or nothing, when the platform does not take the file at all.
 */
export const renditionFor = (media, rule) => {
  if (!rule.media.kinds.includes(media.type)) return `does not take ${media.type}s`
  if (rule.media.converted_types.includes(media.mime_type)) return "gets a JPEG rendition"
  if (!rule.media.types.includes(media.mime_type)) return `does not take ${media.mime_type}`
  const still = ["image/jpeg", "image/png", "image/webp"].includes(media.mime_type)
  if (!still) return "gets the file as is"
  const cap = rule.media.max_bytes?.image ? `, at most ${megabytes(rule.media.max_bytes.image)}` : ""
  const ratio = rule.media.aspect_ratio ? `, letterboxed outside ${rule.media.aspect_ratio.min} to ${rule.media.aspect_ratio.max}` : ""
  return `gets a re-encoded ${media.mime_type.slice(6).toUpperCase()} without metadata${cap}${ratio}`
}

/** PUT with upload progress (fetch has none). */
const put = (url, file, headers, onProgress) =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open("PUT", url)
    for (const [k, v] of Object.entries(headers ?? {})) xhr.setRequestHeader(k, v)
    xhr.upload.addEventListener("progress", (e) => e.lengthComputable && onProgress(e.loaded / e.total))
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve()
      else {
        let message = `upload answered ${xhr.status}`
        try {
          message = JSON.parse(xhr.responseText).error.message
        } catch {
          // not an envelope
        }
        reject(new Error(message))
      }
    })
    xhr.addEventListener("error", () => reject(new Error("the upload failed (network)")))
    xhr.send(file)
  })

const localInput = (date) => {
  const pad = (n) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

export default async () => {
  const [accounts, campaigns, rules] = await Promise.all([
    loadAccounts(),
    loadCampaigns(),
    v1("GET", "/platform-rules").then((d) => d.platforms)
  ])
  const media = [] // {id, filename, type, mime_type, status}
  const out = h("div", { "aria-live": "polite" })

  // accounts
  const picker = h(
    "fieldset",
    {},
    h("legend", {}, "Accounts"),
    accounts.length === 0
      ? h("p", {}, "No connected accounts. ", h("a", { href: "/accounts" }, "Connect one"), ".")
      : accounts.map((a) =>
        checkbox(`${a.account_name} (${a.platform})${a.health?.can_post === false ? " — cannot post" : ""}`, {
          name: "account",
          value: String(a.id),
          "data-platform": a.platform,
          onchange: () => update()
        }))
  )
  const chosen = () => [...picker.querySelectorAll("input[name=account]:checked")].map((i) => ({ id: Number(i.value), platform: i.dataset.platform }))
  const chosenPlatforms = () => [...new Set(chosen().map((a) => a.platform))]

  // text and counters
  const content = h("textarea", { name: "content", rows: "6", oninput: () => update() })
  const counters = h("ul", { class: "counters", "aria-live": "polite", id: "counters" })

  // per-platform overrides
  const overrides = h("div", { id: "overrides" })
  const overrideBlocks = new Map()
  const overrideBlock = (platform) => {
    if (overrideBlocks.has(platform)) return overrideBlocks.get(platform)
    const rule = rules[platform]
    const text = h("textarea", { name: `override-${platform}`, rows: "3", "data-override": platform, oninput: () => update() })
    const contentType = rule?.content_types
      ? field("Content type", h("select", { "data-content-type": platform }, h("option", { value: "" }, `Default${rule.default_content_type ? ` (${rule.default_content_type})` : ""}`), rule.content_types.map((t) => h("option", { value: t.value }, t.value))))
      : null
    const settings = Object.entries(rule?.settings ?? {}).map(([name, setting]) =>
      field(
        `${settingLabel(name)}${setting.required ? " (required)" : ""}`,
        settingInput(name, setting),
        [setting.description ?? (setting.type === "string_array" ? "Comma-separated" : undefined), `settings.${name}`].filter(Boolean).join(" · ")
      ))
    const block = h(
      "details",
      { class: "card", "data-platform": platform },
      h("summary", {}, `${platform}: own text and settings`),
      field(`Text for ${platform} (empty: the main text)`, text),
      contentType,
      settings
    )
    overrideBlocks.set(platform, block)
    return block
  }

  const textFor = (platform) => {
    const own = overrideBlocks.get(platform)?.querySelector("[data-override]")?.value ?? ""
    return own.trim() === "" ? content.value : own
  }

  // media
  const mediaList = h("ul", { class: "media-list", "aria-live": "polite" })
  const fileInput = h("input", { type: "file", multiple: true, id: "media-file", accept: "image/*,video/*,application/pdf" })
  const dropzone = h(
    "div",
    { class: "dropzone", id: "dropzone" },
    h("p", {}, "Drop images or videos here, or ", h("label", { for: "media-file" }, "choose files"), "."),
    fileInput
  )
  const upload = async (file) => {
    const progress = h("progress", { max: "1", value: "0", "aria-label": `Upload of ${file.name}` })
    const line = h("span", {}, "uploading…")
    const preview = file.type.startsWith("image/") ? h("img", { src: URL.createObjectURL(file), alt: "" }) : null
    const item = h("li", {}, preview, h("strong", {}, file.name), " ", progress, " ", line)
    mediaList.append(item)
    try {
      const presigned = await v1("POST", "/media/upload", { filename: file.name, content_type: file.type || "application/octet-stream", file_size: file.size })
      await put(presigned.upload_url, file, presigned.upload_headers, (p) => (progress.value = p))
      const done = await v1("POST", `/media/${presigned.id}/complete`, {})
      progress.value = 1
      line.textContent = done.status === "ready" ? "ready" : `${done.status}${done.error ? `: ${done.error}` : ""}`
      const entry = { ...done }
      media.push(entry)
      const remove = h("button", { type: "button", class: "link", "aria-label": `Remove ${file.name}` }, "Remove")
      remove.addEventListener("click", () => {
        media.splice(media.indexOf(entry), 1)
        item.remove()
        update()
      })
      item.append(" ", remove, h("ul", { class: "renditions muted", "data-media": entry.id }))
      update()
    } catch (e) {
      line.textContent = `failed: ${errorText(e)}`
      line.className = "error"
    }
  }
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

  // campaign, time, queue
  const campaign = h("select", { name: "campaign_id" }, h("option", { value: "" }, "None"), campaigns.map((c) => h("option", { value: String(c.id) }, c.name)))
  const when = h("input", { type: "datetime-local", name: "scheduled_for", step: "1", value: localInput(new Date(Date.now() + 3_600_000)) })

  const update = () => {
    const targets = chosenPlatforms()
    replace(counters,
      targets.map((platform) => {
        const rule = rules[platform]
        if (!rule) return h("li", {}, platform)
        const used = count(textFor(platform), rule.caption.unit)
        const over = used > rule.caption.limit
        return h("li", { class: over ? "over" : "", "data-platform": platform }, `${platform}: ${used} / ${rule.caption.limit}${over ? " (too long)" : ""}`)
      })
    )
    replace(overrides, targets.map(overrideBlock))
    for (const list of mediaList.querySelectorAll("[data-media]")) {
      const item = media.find((m) => m.id === list.dataset.media)
      if (!item) continue
      replace(list, targets.filter((p) => rules[p]).map((p) => h("li", {}, `${p} ${renditionFor(item, rules[p])}`)))
    }
  }

  const body = (extra) => {
    const platformContent = {}
    for (const platform of chosenPlatforms()) {
      const block = overrideBlocks.get(platform)
      if (!block) continue
      const own = block.querySelector("[data-override]").value
      const settings = {}
      for (const input of block.querySelectorAll("[data-setting]")) {
        const value = settingValue(input)
        if (value !== undefined) settings[input.dataset.setting] = value
      }
      const type = block.querySelector("[data-content-type]")?.value ?? ""
      if (own.trim() === "" && type === "" && Object.keys(settings).length === 0) continue
      platformContent[platform] = {
        content: own.trim() === "" ? content.value : own,
        ...(type === "" ? {} : { contentType: type }),
        ...(Object.keys(settings).length === 0 ? {} : { settings })
      }
    }
    return {
      content: content.value,
      account_ids: chosen().map((a) => a.id),
      ...(Object.keys(platformContent).length === 0 ? {} : { platform_content: platformContent }),
      ...(media.length === 0 ? {} : { media_ids: media.map((m) => m.id) }),
      ...(campaign.value === "" ? {} : { campaign_id: Number(campaign.value) }),
      timezone: zone(),
      ...extra
    }
  }

  const submit = (label, extra, cls = "secondary") => {
    const button = h("button", { type: "button", class: cls, "data-action": label }, label)
    button.addEventListener("click", () =>
      busy(button, out, async () => {
        const made = await v1("POST", "/posts", body(extra()))
        location.assign(`/posts/${made.id ?? made.post_id}`)
      }))
    return button
  }

  const scheduled = () => {
    if (when.value === "") throw new Error("Pick a date and time to schedule.")
    return { scheduled_for: new Date(when.value).toISOString() }
  }

  render(
    "Compose",
    out,
    h(
      "form",
      { onsubmit: (e) => e.preventDefault(), "aria-label": "Post" },
      picker,
      field("Text", content),
      counters,
      overrides,
      h("fieldset", {}, h("legend", {}, "Media"), dropzone, mediaList),
      field("Campaign", campaign),
      field(`Schedule for (your zone, ${zone()})`, when),
      h(
        "div",
        { class: "actions" },
        submit("Schedule", scheduled, ""),
        submit("Publish now", () => ({})),
        submit("Add to queue", () => ({ use_queue: true })),
        submit("Save draft", () => ({ draft: true })),
        submit("Request approval", () => ({ draft: true, request_approval: true }))
      )
    )
  )
  update()
  if (accounts.length === 0) replace(out, notice("Connect an account before composing.", ""))
}
